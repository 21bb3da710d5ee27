package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/sandscope/sandscope/model"
)

// The header's number keys rank the namespaces by sandboxes as the fleet
// changes: kept while sandboxes are only replaced in place (a status
// write), ranked again when one comes in another namespace.
func TestFavoritesFollowTheFleet(t *testing.T) {
	now := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	f := kindFleet(&now)
	add := func(ns string, i int) {
		name, ip := fmt.Sprintf("%s-%d", ns, i), fmt.Sprintf("10.0.%d.%d", len(ns), i)
		f.UpsertBatchSandbox(fleetSandbox(ns, name, now, ip))
		f.UpsertPod(model.SlimPod(fleetPod(ns, name, "pod-"+name, ip, now)))
	}
	add("alpha", 1)
	add("alpha", 2)
	add("beta", 1)
	src := &fakeSource{snap: f.Snapshot()}
	app := benchApp(src)
	frame := func() string {
		src.set(f.Snapshot())
		app.Update(refreshMsg{})
		return ansi.Strip(app.View())
	}
	if s := frame(); !strings.Contains(s, "<1>alpha <2>beta") {
		t.Fatalf("two sandboxes in alpha, one in beta:\n%s", s)
	}
	p := fleetPod("beta", "beta-1", "pod-beta-1", "10.0.4.1", now)
	p.Status.ContainerStatuses[0].RestartCount = 3
	f.UpsertPod(model.SlimPod(p))
	if s := frame(); !strings.Contains(s, "<1>alpha <2>beta") {
		t.Fatalf("a status write moved the favorites:\n%s", s)
	}
	add("beta", 2)
	add("beta", 3)
	if s := frame(); !strings.Contains(s, "<1>beta <2>alpha") {
		t.Fatalf("beta has three sandboxes now, alpha two:\n%s", s)
	}
	p.Status.ContainerStatuses[0].RestartCount = 4
	f.UpsertPod(model.SlimPod(p))
	add("alpha", 3)
	add("alpha", 4)
	if s := frame(); !strings.Contains(s, "<1>alpha <2>beta") {
		t.Fatalf("alpha has four sandboxes now, beta three:\n%s", s)
	}
}

// A keystroke changes no sandbox, so it never ranks the favorites again:
// ranking is a pass over the whole fleet. The ranking is held by its
// first element's address, which a new ranking would move.
func TestAKeystrokeKeepsTheFavoritesRanked(t *testing.T) {
	app := benchApp(&fakeSource{snap: bigSnapshot(2000)})
	_ = app.View()
	if len(app.busiest) == 0 {
		t.Fatal("the first frame ranked no favorites")
	}
	ranked := &app.busiest[0]
	keys := []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune("/")}}
	for _, r := range "sandbox-01" {
		keys = append(keys, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	keys = append(keys, tea.KeyMsg{Type: tea.KeyBackspace}, tea.KeyMsg{Type: tea.KeyEnter},
		tea.KeyMsg{Type: tea.KeyDown}, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("z")})
	for _, k := range keys {
		app.Update(k)
		_ = app.View()
		if len(app.busiest) == 0 || &app.busiest[0] != ranked {
			t.Fatalf("%s ranked the favorites again", k)
		}
	}
}
