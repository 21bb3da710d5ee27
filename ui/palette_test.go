package ui

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every name of a command, aliases and hidden ones included, in any case,
// names the command by its own name; a name no command has is kept as
// typed, for the App to say so; an empty line is nothing.
func TestPaletteNamesTheCommand(t *testing.T) {
	for _, e := range paletteCommands {
		for _, name := range append(slices.Clone(e.names), e.hidden...) {
			got := parseCommand(strings.ToUpper(name) + " /x app=y")
			want := paletteCommand{verb: e.names[0], typed: name, args: []string{"/x", "app=y"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf(":%s = %+v, want %+v", name, got, want)
			}
		}
	}
	if got := parseCommand("  Bogus  "); !reflect.DeepEqual(got, paletteCommand{typed: "bogus", args: []string{}}) {
		t.Errorf(":Bogus = %+v", got)
	}
	if got := parseCommand("   "); got != nil {
		t.Errorf("an empty line = %+v, want nothing", got)
	}
}

// Tab completes the suggestion shown: the commands first, in the order
// offered, then what the App adds (namespaces, contexts).
func TestPaletteCompletes(t *testing.T) {
	suggestions := []string{"sandboxes", "sb", "pods", "pools", "ns ", "ns team-rl"}
	for _, tc := range []struct {
		typed string
		want  paletteCommand
	}{
		{"po", paletteCommand{verb: "pods", typed: "pods", args: []string{}}},
		{"s", paletteCommand{verb: "sb", typed: "sandboxes", args: []string{}}},
		{"ns t", paletteCommand{verb: "ns", typed: "ns", args: []string{"team-rl"}}},
	} {
		outs, done := press(t, newPalette(suggestions), tc.typed, "tab", "enter")
		if !done || !reflect.DeepEqual(last(outs), tc.want) {
			t.Errorf(":%s⇥ = %+v (closed %v), want %+v", tc.typed, last(outs), done, tc.want)
		}
	}
	if outs, done := press(t, newPalette(suggestions), "pods", "esc"); !done || last(outs) != nil {
		t.Errorf("esc: %v (closed %v), want nothing", outs, done)
	}
	offered := paletteSuggestions(testSharedOf(t))
	want := []string{"sandboxes", "sb", "pods", "pools", "claims", "ns ", "ctx ", "messages", "pf", "help", "q", "quit",
		"ns all", "ns batch", "ns team-rl"}
	if !slices.Equal(offered, want) {
		t.Errorf("offered %q, want %q", offered, want)
	}
}

// ctrl+a lists every command with its aliases, from the palette's table.
func TestPaletteHelpLines(t *testing.T) {
	want := []string{
		":sb, :sandbox, :sandboxes [/TEXT | LABEL=VALUE]   the sandboxes (filtered; alone: every one, the filter cleared)",
		":pods, :pod, :po [/TEXT | LABEL=VALUE]            the Pods of the fleet",
		":pools, :pool                                     the Pools and warm pools",
		":claims, :claim                                   the agent-sandbox claims (enter: the claimed sandbox)",
		":ns, :namespace [NAME | all]                      the namespaces (enter shows one); NAME: show that one, all: every one (0-9: favorites)",
		":ctx, :context [NAME | all]                       the contexts (enter shows one); NAME: show that one; all: every context sandscope was started with",
		":messages, :msg                                   every message and refusal, whole, with its evidence",
		":pf, :portforward, :portforwards, :port-forwards  the open port-forwards (F opens one); ctrl+d stops one",
		":help, :?                                         the key bindings",
		":q, :quit                                         quit",
	}
	if got := paletteHelpLines(); !slices.Equal(got, want) {
		t.Fatalf("ctrl+a:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// testSharedOf is the shared context of an App over the incident fleet.
func testSharedOf(t *testing.T) *shared {
	t.Helper()
	return New(&fakeSource{snap: incidentSnapshot()}, Backend{}, Options{Now: fixedNow}, DefaultKeyMap()).c
}
