package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// ageChanges is exactly when age reads differently: the same text up to it,
// another from it on.
func TestAgeChanges(t *testing.T) {
	created := t0
	for _, d := range []time.Duration{-time.Second, 0, 500 * time.Millisecond, 59 * time.Second, 119*time.Second + 1,
		2 * time.Minute, 61 * time.Minute, 119*time.Minute + 59*time.Second, 2 * time.Hour, 47 * time.Hour, 48 * time.Hour, 100 * time.Hour} {
		now := created.Add(d)
		next := ageChanges(now, created)
		if !next.After(now) {
			t.Errorf("age %s: changes at %s, not after now", d, next.Sub(created))
			continue
		}
		if a, b := age(now, created), age(next.Add(-time.Nanosecond), created); a != b {
			t.Errorf("age %s: %q turns %q before its change at %s", d, a, b, next.Sub(created))
		}
		if a, b := age(now, created), age(next, created); a == b {
			t.Errorf("age %s: still %q at its change at %s", d, a, next.Sub(created))
		}
	}
	if !ageChanges(t0, time.Time{}).IsZero() {
		t.Error("an unknown time (shown as -) changes")
	}
}

// A clock tick re-renders only when the screen would change: an age on it
// reads differently, or the flash ends. Otherwise the last frame stands
// (an idle fleet costs no rendering).
func TestClockRedrawsOnlyWhenTextChanges(t *testing.T) {
	now := t0
	snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true, AsOf: t0}, []*model.Sandbox{{
		Key: "bsbx/ns/old", State: model.StateRunning,
		Meta: model.ObjectMeta{Namespace: "ns", Name: "old"}.WithCreated(t0.Add(-5*time.Minute - 20*time.Second)), // "5m" until t0+40s
	}}, nil, nil)
	a := directApp(snap, Options{Now: func() time.Time { return now }}, 120, 20)
	ageRe := regexp.MustCompile(`(?m)^[ ›]?ns\s+old\s.*\s(\d+[smhd])\s*$`)
	ageShown := func() string {
		t.Helper()
		m := ageRe.FindStringSubmatch(a.View())
		if m == nil {
			t.Fatalf("no row for sandbox old:\n%s", a.View())
		}
		return m[1]
	}
	tick := func(to time.Duration) {
		now = t0.Add(to)
		a.Update(clockMsg{})
	}
	if got := ageShown(); got != "5m" {
		t.Fatalf("age %q, want 5m", got)
	}
	for s := 1; s < 40; s++ {
		tick(time.Duration(s) * time.Second)
		if !a.frameOK {
			t.Fatalf("tick at +%ds re-renders; the age changes at +40s", s)
		}
		ageShown()
	}
	tick(40 * time.Second)
	if got := ageShown(); got != "6m" {
		t.Fatalf("at +40s the age is %q, want 6m", got)
	}

	a.Update(actionDone{text: "deleted ns/x"})
	if !strings.Contains(a.View(), "deleted ns/x") {
		t.Fatalf("the flash is not shown:\n%s", a.View())
	}
	tick(45 * time.Second)
	if !a.frameOK {
		t.Fatal("a tick with the flash still due re-renders")
	}
	tick(49 * time.Second) // 9 s after the flash: it ends
	if strings.Contains(a.View(), "deleted ns/x") {
		t.Fatalf("the flash outlived its 8 s:\n%s", a.View())
	}
}

// A configuration error (a bad keys.yaml) stays in the footer until a key
// is pressed, then expires like any other message.
func TestStickyFlashWaitsForAKey(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	now := t0
	a := New(&fakeSource{snap: incidentSnapshot()}, Backend{}, Options{Now: func() time.Time { return now }}, DefaultKeyMap())
	a.flashErr(fmt.Errorf("key map keys.yaml: bad"))
	a.flashSticky = true
	now = t0.Add(time.Minute)
	a.Update(clockMsg{})
	if a.flash == "" {
		t.Fatal("the configuration error vanished before any key was pressed")
	}
	a.Update(tea.KeyMsg{Type: tea.KeyDown})
	now = now.Add(9 * time.Second)
	a.Update(clockMsg{})
	if a.flash != "" {
		t.Fatalf("flash %q still shown 9 s after a key", a.flash)
	}
}

// At 80 columns sandbox ids (UUIDs) are shown short, so that AGE and
// NOTICES fit beside SANDBOX, STATE and IDENTITY; a wide terminal shows
// them whole.
func TestNarrowTerminalShowsShortIDs(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	id := "16952042-4659-404b-af6a-1ad692ff3444"
	snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true, AsOf: t0}, []*model.Sandbox{{
		Key: "bsbx/eval/" + id, State: model.StateRunning,
		Meta:    model.ObjectMeta{Namespace: "eval", Name: id}.WithCreated(t0.Add(-14 * time.Minute)),
		Notices: []model.Notice{{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning}},
	}}, nil, nil)
	a := directApp(snap, Options{Now: func() time.Time { return t0 }}, 80, 12)
	v := a.View()
	for _, want := range []string{"AGE", "NOTICES", "16952042 ", "14m", "STUCK_TERMINATING"} {
		if !strings.Contains(v, want) {
			t.Errorf("80 columns: %q missing:\n%s", want, v)
		}
	}
	if strings.Contains(v, id) {
		t.Errorf("80 columns show the whole id:\n%s", v)
	}
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 12})
	if v := a.View(); !strings.Contains(v, id) {
		t.Errorf("200 columns do not show the whole id:\n%s", v)
	}
}

// Help lists every key of a binding (j and down both move) and scrolls when
// the terminal is shorter than it.
func TestHelpListsEveryKeyAndScrolls(t *testing.T) {
	a := directApp(incidentSnapshot(), Options{}, 120, 8)
	a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	first := a.View()
	for _, want := range []string{"↑/k", "↓/j"} {
		if !strings.Contains(first, want) {
			t.Errorf("help lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "G/end") {
		t.Fatalf("the test needs a help longer than the screen:\n%s", first)
	}
	for range 10 {
		a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	}
	if v := a.View(); !strings.Contains(v, "G/end") {
		t.Fatalf("help did not scroll to its end:\n%s", v)
	}
}

// The header says who and what: the kubeconfig user, the server's version
// and sandscope's own, after the connection state.
func TestHeaderNamesUserAndVersions(t *testing.T) {
	snap := fleet.NewSnapshot(1, model.SourceStatus{Context: "prod", Cluster: "eu-1", User: "alice", ServerVersion: "v1.37.2", Synced: true}, nil, nil, nil)
	a := directApp(snap, Options{Version: "v0.9.0"}, 200, 10)
	head := strings.SplitN(a.View(), "\n", 2)[0]
	for _, want := range []string{"ctx:prod", "cluster:eu-1", "user:alice", "k8s v1.37.2", "sandscope v0.9.0"} {
		if !strings.Contains(head, want) {
			t.Errorf("header %q lacks %q", head, want)
		}
	}
	if strings.Index(head, "synced") > strings.Index(head, "user:") {
		t.Errorf("the connection state must come before who and what: %q", head)
	}
}

// At 80 columns help stacks its groups instead of cutting the ones that do
// not fit beside the others.
func TestHelpAt80Columns(t *testing.T) {
	a := directApp(incidentSnapshot(), Options{}, 80, 60)
	a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	v := a.View()
	for _, want := range []string{"sort restarts", "wide: every column", "commands and aliases", "quit", "problems only"} {
		if !strings.Contains(v, want) {
			t.Errorf("help at 80 columns lacks %q:\n%s", want, v)
		}
	}
}

// directApp is an App over snap in a w×h terminal that the test drives by
// calling Update and View itself, without a program.
func directApp(snap *fleet.Snapshot, opts Options, w, h int) *App {
	return directAppOver(&fakeSource{snap: snap}, opts, w, h)
}

// directAppOver is directApp over src, for a test that changes the fleet
// it shows.
func directAppOver(src *fakeSource, opts Options, w, h int) *App {
	a := New(src, Backend{}, opts, DefaultKeyMap())
	a.Init()
	a.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return a
}
