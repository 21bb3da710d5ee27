package ui

import (
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
)

// The filter line means something at every edit (the list follows it);
// enter keeps the filter, esc (or a quick second Esc, alt+esc) drops it.
func TestFilterPromptFollowsTheLine(t *testing.T) {
	outs, done := press(t, newFilterPrompt("sbx"), "-a", "backspace")
	want := []tea.Msg{filterEdited{"sbx-"}, filterEdited{"sbx-a"}, filterEdited{"sbx-"}}
	if done || !reflect.DeepEqual(outs, want) {
		t.Fatalf("typing: %v (closed %v), want %v", outs, done, want)
	}
	if outs, done := press(t, newFilterPrompt("sbx"), "enter"); !done || last(outs) != nil {
		t.Fatalf("enter: %v (closed %v), want the filter kept and the line closed", outs, done)
	}
	for _, esc := range []string{"esc", "alt+esc"} {
		if outs, done := press(t, newFilterPrompt("sbx"), esc); !done || last(outs) != (filterCleared{}) {
			t.Fatalf("%s: %v (closed %v), want the filter cleared", esc, outs, done)
		}
	}
	if outs, _ := press(t, newSearchPrompt("oom"), "esc"); last(outs) != (searchEdited{""}) {
		t.Fatalf("esc in a search: %v, want the search dropped", outs)
	}
}

// The exec prompt splits its line as a shell would; a line that cannot be
// split stays open with the reason beside it until the next key, and an
// empty one closes without running anything.
func TestExecPromptKeepsABadLine(t *testing.T) {
	target := pick{sb: &model.Sandbox{Key: "bsbx/team-rl/sbx-a", Meta: &model.ObjectMeta{Namespace: "team-rl", Name: "sbx-a"}}, ctx: "prod"}
	p := newExecPrompt(target)
	if v := p.view(testShared(), 80); !strings.HasPrefix(v, "exec prod:team-rl/sbx-a> ") {
		t.Fatalf("prompt %q does not name its target", v)
	}
	outs, done := press(t, p, "echo 'oops", "enter")
	if done || last(outs) != nil || !strings.Contains(p.view(testShared(), 80), "✗ cannot split") {
		t.Fatalf("unterminated quote: %v (closed %v), line %q", outs, done, p.view(testShared(), 80))
	}
	press(t, p, "'")
	if v := p.view(testShared(), 80); strings.Contains(v, "✗") {
		t.Fatalf("the reason outlived the next key: %q", v)
	}
	outs, done = press(t, p, "ctrl+u", "sh -c 'exit 7'", "alt+enter")
	if want := (execEntered{target: target, argv: []string{"sh", "-c", "exit 7"}}); !done || !reflect.DeepEqual(last(outs), want) {
		t.Fatalf("enter: %v (closed %v), want %v", last(outs), done, want)
	}
	if outs, done := press(t, newExecPrompt(target), "  ", "enter"); !done || last(outs) != nil {
		t.Fatalf("an empty command: %v (closed %v), want nothing run", outs, done)
	}
}

// The port prompt offers execd's port and takes PORT or LOCAL:PORT; a
// bad port keeps the line.
func TestForwardPromptParsesPorts(t *testing.T) {
	target := pick{sb: &model.Sandbox{Key: "bsbx/ns/sbx", Meta: &model.ObjectMeta{Namespace: "ns", Name: "sbx"}}}
	if outs, done := press(t, newForwardPrompt(target), "enter"); !done || last(outs) != (forwardEntered{target: target, remote: execdPort}) {
		t.Fatalf("the default: %v (closed %v)", outs, done)
	}
	p := newForwardPrompt(target)
	if outs, done := press(t, p, "ctrl+u", "http", "enter"); done || last(outs) != nil {
		t.Fatalf("a bad port: %v (closed %v), want the line kept", outs, done)
	}
	if v := p.view(testShared(), 120); !strings.Contains(v, `✗ "http" is not a port`) {
		t.Fatalf("a bad port's line: %q", v)
	}
	if outs, _ := press(t, p, "ctrl+u", "8080:9000", "enter"); last(outs) != (forwardEntered{target: target, local: 8080, remote: 9000}) {
		t.Fatalf("LOCAL:PORT: %v", outs)
	}
	if outs, done := press(t, newForwardPrompt(target), "esc"); !done || last(outs) != nil {
		t.Fatalf("esc: %v (closed %v)", outs, done)
	}
}
