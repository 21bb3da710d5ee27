package ui

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
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

// Counting a namespace's sandboxes by the runs of its keys gives what
// reading every sandbox gives: several engines, namespaces that are
// prefixes of each other, runs of one and of many, and a key of no known
// form.
func TestCountNamespacesByRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	engines := []model.Engine{model.EngineAgent, model.EngineBatchSandbox, model.EnginePod}
	namespaces := []string{"a", "ab", "team", "team-2", "z"}
	for round := range 200 {
		var sbs []*model.Sandbox
		for i := range rng.IntN(80) {
			e, ns := engines[rng.IntN(len(engines))], namespaces[rng.IntN(len(namespaces))]
			name := fmt.Sprintf("sb-%d", i)
			key := model.SandboxKey(e, ns, name)
			if rng.IntN(20) == 0 {
				key = "odd:" + ns + ":" + name
			}
			sbs = append(sbs, &model.Sandbox{Key: key, Meta: &model.ObjectMeta{Namespace: ns, Name: name}})
		}
		slices.SortFunc(sbs, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
		want := map[string]int{}
		for _, sb := range sbs {
			want[sb.Namespace()]++
		}
		got := map[string]int{}
		countNamespaces(fleet.NewSnapshot(1, model.SourceStatus{}, sbs, nil, nil), got)
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: counted %v, want %v", round, got, want)
		}
	}
}
