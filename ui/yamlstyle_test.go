package ui

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/viewport"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

const yamlDoc = `# the sandbox object
apiVersion: sandbox.opensandbox.io/v1alpha1
kind: BatchSandbox
metadata:
  annotations:
    note: "quoted: value"
    script: |
      echo a: b
      	tabbed: line
    hostile: x` + "\x1b[2J\x1b]0;pwned\x07" + `
  name: sbx-1
spec:
  template:
    spec:
      containers:
      - name: main
        command:
        - sh
        - -c
        args: [a, b]
  replicas: 1
---
kind: Pod
`

func yamlLines() []string {
	return strings.Split(strings.TrimRight(textsafe.Text(yamlDoc), "\n"), "\n")
}

func renderer(p termenv.Profile) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(p)
	return r
}

// Under NO_COLOR (the Ascii profile) the YAML view is the text itself.
func TestYAMLStylingUnderAsciiIsTheTextItself(t *testing.T) {
	lines := yamlLines()
	got := newYAMLStyles(renderer(termenv.Ascii)).styleYAML(lines)
	if strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Fatalf("Ascii profile changed the YAML:\n%q\nwant\n%q", got, lines)
	}
}

func TestYAMLStylingTellsKeysValuesCommentsApart(t *testing.T) {
	r := renderer(termenv.ANSI256)
	st := newYAMLStyles(r)
	lines := yamlLines()
	got := st.styleYAML(lines)
	for i := range lines {
		if ansi.Strip(got[i]) != lines[i] {
			t.Fatalf("line %d: styling changed the text: %q -> %q", i, lines[i], ansi.Strip(got[i]))
		}
	}
	find := func(sub string) string {
		for i, l := range lines {
			if strings.Contains(l, sub) {
				return got[i]
			}
		}
		t.Fatalf("no line %q", sub)
		return ""
	}
	key, value, comment := st.key.Render("K"), st.value.Render("V"), st.comment.Render("C")
	keyOn, valueOn, commentOn := key[:strings.Index(key, "K")], value[:strings.Index(value, "V")], comment[:strings.Index(comment, "C")]
	if keyOn == valueOn || keyOn == commentOn || valueOn == commentOn {
		t.Fatalf("styles not distinct: %q %q %q", keyOn, valueOn, commentOn)
	}
	for _, c := range []struct{ line, want string }{
		{"kind: BatchSandbox", keyOn + "kind"},
		{"kind: BatchSandbox", valueOn + "BatchSandbox"},
		{"# the sandbox", commentOn + "# the sandbox"},
		{"- name: main", "- " + keyOn + "name"},
		{"- -c", "- " + valueOn + "-c"},
		{"note:", valueOn + `"quoted: value"`},
		{"echo a: b", valueOn + "      echo a: b"}, // inside a block scalar: a value
		{"tabbed: line", valueOn},
		{"name: sbx-1", keyOn + "name"}, // the block ended
	} {
		if got := find(c.line); !strings.Contains(got, c.want) {
			t.Errorf("%q styled %q, want it to contain %q", c.line, got, c.want)
		}
	}
	if s := find("hostile"); strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x1b]0;") {
		t.Fatalf("tenant escape codes survived: %q", s)
	}
}

// The YAML view under the test's Ascii profile shows the document as is.
func TestYAMLViewPlainUnderAscii(t *testing.T) {
	be := Backend{YAML: yamlBackend}
	app, tm := newTestApp(t, &fakeSource{snap: incidentSnapshot()}, be, Options{})
	keys(tm, "y")
	screenContains(t, tm, app, "containers:")
	v := app.top().(*textView)
	// What a viewport shows of the unstyled text.
	plain := viewport.New(v.vp.Width, v.vp.Height)
	plain.SetContent(strings.Join(yamlLines(), "\n"))
	if got, want := v.vp.View(), plain.View(); got != want {
		t.Fatalf("YAML view:\n%q\nwant\n%q", got, want)
	}
}

func yamlBackend(_ context.Context, _ *model.Sandbox) (string, error) { return yamlDoc, nil }
