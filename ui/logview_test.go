package ui

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/sandscope/sandscope/model"
)

// logCalls records the options of every Logs call a test's backend answered.
type logCalls struct {
	mu   sync.Mutex
	opts []LogOptions
}

func (c *logCalls) seen() []LogOptions {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.opts)
}

// logsBackend serves lines as the log of every sandbox; with timestamps
// requested, each line carries one, as the kubelet adds it.
func logsBackend(lines []string, calls *logCalls) Backend {
	return Backend{Logs: func(ctx context.Context, sb *model.Sandbox, opts LogOptions, w io.Writer) error {
		calls.mu.Lock()
		calls.opts = append(calls.opts, opts)
		calls.mu.Unlock()
		for _, l := range lines {
			if opts.Timestamps {
				l = "2026-11-30T16:40:00.000000001Z " + l
			}
			_, _ = io.WriteString(w, l+"\n")
		}
		<-ctx.Done()
		return nil
	}}
}

// openLogs runs the App over the incident fleet in a w×h terminal with
// lines as every sandbox's log, and opens the log of the sandbox under the
// cursor.
func openLogs(t *testing.T, lines []string, opts Options, w, h int) (*App, *teatest.TestModel, *logCalls) {
	t.Helper()
	calls := &logCalls{}
	app, tm := newTestAppSized(t, &fakeSource{snap: incidentSnapshot()}, logsBackend(lines, calls), opts, w, h)
	keys(tm, "l")
	return app, tm, calls
}

func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %03d", i)
	}
	return out
}

func TestLogsWrapToggle(t *testing.T) {
	long := "begin " + strings.Repeat("x", 150) + " THE-END"
	app, tm, _ := openLogs(t, []string{long, "short"}, Options{}, 80, 24)
	s := screenContains(t, tm, app, "short")
	if strings.Contains(s, "THE-END") {
		t.Fatalf("without wrap a long line is cut at the edge:\n%s", s)
	}
	keys(tm, "w")
	s = screenContains(t, tm, app, "THE-END")
	if !strings.Contains(s, "wrap") {
		t.Fatalf("the title does not say wrap is on:\n%s", s)
	}
	keys(tm, "w")
	waitScreen(t, tm, app, "the long line cut again", func(s string) bool {
		return strings.Contains(s, "short") && !strings.Contains(s, "THE-END")
	})
}

func TestLogsTimestampsToggle(t *testing.T) {
	app, tm, calls := openLogs(t, []string{"hello"}, Options{}, testW, testH)
	s := screenContains(t, tm, app, "hello")
	if strings.Contains(s, "2026-11-30T16:40:00") {
		t.Fatalf("timestamps shown before asked:\n%s", s)
	}
	keys(tm, "t")
	s = screenContains(t, tm, app, "2026-11-30T16:40:00.000000001Z hello")
	if strings.Count(s, "hello") != 1 {
		t.Fatalf("the log was not read again from the start:\n%s", s)
	}
	keys(tm, "t")
	waitScreen(t, tm, app, "timestamps off", func(s string) bool {
		return strings.Contains(s, "hello") && !strings.Contains(s, "2026-11-30T16:40:00")
	})
	if seen := calls.seen(); len(seen) != 3 || seen[0].Timestamps || !seen[1].Timestamps || seen[2].Timestamps {
		t.Fatalf("Logs asked with %+v, want off, on, off", seen)
	}
}

func TestLogsSearch(t *testing.T) {
	app, tm, _ := openLogs(t, numbered(100), Options{}, testW, testH)
	screenContains(t, tm, app, "line 099")
	keys(tm, "/", "line 01", "enter")
	s := screenContains(t, tm, app, "/line 01: 1/10")
	if !strings.Contains(s, "line 010") || strings.Contains(s, "line 099") {
		t.Fatalf("the first match is not brought into view:\n%s", s)
	}
	keys(tm, "n")
	screenContains(t, tm, app, "/line 01: 2/10")
	keys(tm, "N", "N")
	screenContains(t, tm, app, "/line 01: 10/10")
	keys(tm, "/")
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	keys(tm, "99", "enter")
	screenContains(t, tm, app, "/line 99: no match")
	// Esc drops the search first, and only then leaves the view.
	keys(tm, "esc")
	waitScreen(t, tm, app, "search dropped", func(s string) bool {
		return strings.Contains(s, "line 0") && !strings.Contains(s, "no match")
	})
	// Upper case in the search text makes it case-sensitive.
	keys(tm, "/", "LINE", "enter")
	screenContains(t, tm, app, "/LINE: no match")
}

func TestLogsSearchHighlightsAfterSanitising(t *testing.T) {
	hostileLine := "evil \x1b[2J\x1b]0;pwned\x07 needle here"
	app, tm, _ := openLogs(t, []string{hostileLine}, Options{}, testW, testH)
	screenContains(t, tm, app, "needle here")
	keys(tm, "/", "needle", "enter")
	screenContains(t, tm, app, "/needle: 1/1")
	v := app.top().(*textView)
	if got := v.vp.View(); strings.Contains(got, "\x1b[2J") || strings.Contains(got, "\x1b]0;") {
		t.Fatalf("a control sequence of the log reached the screen: %q", got)
	}
}

func TestLogsSaveToFile(t *testing.T) {
	dir := t.TempDir()
	lines := []string{"first \x1b[31mred\x1b[0m", "second"}
	app, tm, _ := openLogs(t, lines, Options{SaveDir: dir}, testW, testH)
	screenContains(t, tm, app, "second")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
	want := filepath.Join(dir, "batch_sbx-d_logs_"+fixedNow().UTC().Format("20060102T150405Z")+".txt")
	screenContains(t, tm, app, "saved 2 lines to "+want)
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "\x1b") || !strings.HasSuffix(string(data), "second\n") || !strings.HasPrefix(string(data), "first ") {
		t.Fatalf("saved %q: want the view's safe lines", data)
	}
	// A second save in the same second never overwrites the first, nor
	// fails: it takes the next free name.
	if err := os.WriteFile(want, []byte("kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
	second := strings.TrimSuffix(want, ".txt") + "-2.txt"
	screenContains(t, tm, app, "saved 2 lines to "+second)
	if data, err := os.ReadFile(want); err != nil || string(data) != "kept\n" {
		t.Fatalf("the first file now holds %q, %v", data, err)
	}
	if data, err := os.ReadFile(second); err != nil || !strings.HasSuffix(string(data), "second\n") {
		t.Fatalf("the second save holds %q, %v", data, err)
	}
}

func TestTextViewKeysShareWithListKeysOnly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(p, []byte("wrap: W\nsave: ctrl+o\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	km, err := LoadKeyMap(p)
	if err != nil {
		t.Fatal(err)
	}
	if km.Wrap.Keys()[0] != "W" || km.Save.Keys()[0] != "ctrl+o" || km.PrevMatch.Keys()[0] != "N" || km.SortName.Keys()[0] != "N" {
		t.Fatalf("wrap %v save %v prevmatch %v sortname %v", km.Wrap.Keys(), km.Save.Keys(), km.PrevMatch.Keys(), km.SortName.Keys())
	}
	for _, bad := range []string{"save: ctrl+d\n", "nextmatch: l\n", "wrap: q\n"} {
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKeyMap(p); err == nil || !strings.Contains(err.Error(), "bound to both") {
			t.Errorf("%q: want a collision error, got %v", bad, err)
		}
	}
}
