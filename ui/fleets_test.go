package ui

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
)

// fakeFleets is a MultiSource whose fleets the test replaces.
type fakeFleets struct {
	fakeSource
	fleets []Fleet
}

func (f *fakeFleets) Fleets() []Fleet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.fleets)
}

func (f *fakeFleets) setFleets(fleets ...Fleet) {
	f.mu.Lock()
	f.fleets = fleets
	f.mu.Unlock()
	f.set(nil) // notifies
}

// twoContexts is the incident fleet in two clusters, prod and staging:
// every sandbox name is in both.
func twoContexts() *fakeFleets {
	staging := incidentSnapshot()
	staging.Status.Context, staging.Status.Server = "staging", "https://staging:6443"
	return &fakeFleets{fleets: []Fleet{{Context: "prod", Snap: incidentSnapshot()}, {Context: "staging", Snap: staging}}}
}

func newMultiApp(t *testing.T, src MultiSource, be Backend, w, h int) (*App, *teatest.TestModel) {
	t.Helper()
	app := New(src, be, Options{Now: fixedNow}, DefaultKeyMap())
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() { _ = tm.Quit() })
	return app, tm
}

// With two contexts the table is both fleets, each row with its context;
// the header names each context's state; the counts are over both.
func TestContextsTable(t *testing.T) {
	app, tm := newMultiApp(t, twoContexts(), Backend{}, 170, 20)
	screen := screenContains(t, tm, app, "Sandboxes [8/8]")
	for _, want := range []string{"prod synced · staging synced", "8 sandboxes  running 4  IP_TAKEN 2"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	// Sorted by name across both: each sandbox's two rows side by side,
	// prod's first.
	rows := regexp.MustCompile(`(?m)^.(prod|staging)\s+\S+\s+(sbx-\w)`).FindAllStringSubmatch(screen, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+"/"+r[2])
	}
	want := []string{"prod/sbx-d", "staging/sbx-d", "prod/sbx-a", "staging/sbx-a", "prod/sbx-b", "staging/sbx-b", "prod/sbx-c", "staging/sbx-c"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v:\n%s", got, want, screen)
	}
	goldenFrame(t, tm)
}

// Contexts watched in their own namespaces (no -A) say so in the header.
func TestContextsHeaderNamesWatchedNamespaces(t *testing.T) {
	src := twoContexts()
	src.fleets[0].Snap.Status.Namespaces = []string{"team-rl"}
	src.fleets[1].Snap.Status.Namespaces = []string{"batch"}
	app, tm := newMultiApp(t, src, Backend{}, 170, 20)
	screenContains(t, tm, app, "sandscope  ns:batch,team-rl  prod synced")
}

// The CONTEXT column is there only while more than one context is in view.
func TestContextColumnOnlyWithSeveral(t *testing.T) {
	src := twoContexts()
	app, tm := newMultiApp(t, src, Backend{}, 170, 20)
	screenContains(t, tm, app, " CONTEXT ")
	one := src.Fleets()[1]
	src.setFleets(one)
	s := waitScreen(t, tm, app, "one context, no CONTEXT column", func(s string) bool {
		return strings.Contains(s, "Sandboxes [4/4]") && !strings.Contains(s, "CONTEXT")
	})
	if !strings.Contains(s, "ctx:staging") {
		t.Fatalf("one context in view is not named as one:\n%s", s)
	}
	src.setFleets(src.fleets[0], twoContexts().fleets[0])
	waitScreen(t, tm, app, "the column back", func(s string) bool {
		return strings.Contains(s, "Sandboxes [8/8]") && strings.Contains(s, " CONTEXT ")
	})
}

// The filter matches the context's name too.
func TestFilterMatchesContext(t *testing.T) {
	app, tm := newMultiApp(t, twoContexts(), Backend{}, 170, 20)
	screenContains(t, tm, app, "Sandboxes [8/8]")
	keys(tm, "/", "staging")
	s := screenContains(t, tm, app, "Sandboxes [4/8]")
	if regexp.MustCompile(`(?m)^.prod `).MatchString(s) {
		t.Fatalf("a prod row passed the filter staging:\n%s", s)
	}
	keys(tm, "esc", "/", "staging team-rl/sbx-a")
	screenContains(t, tm, app, "Sandboxes [1/8]")
}

// Each context's state is in the header: a lost server reads disconnected
// (its rows UNKNOWN, no verdict highlighted), one still listing reads
// syncing with its count, one that refused the credentials forbidden; the
// others' rows stand.
func TestContextHeaderStates(t *testing.T) {
	src := twoContexts()
	app, tm := newMultiApp(t, src, Backend{}, 160, 14)
	screenContains(t, tm, app, "prod synced · staging synced")

	down := t0.Add(-30 * time.Second)
	f := fleet.New(fleet.Options{Now: fixedNow})
	f.SetStatus(model.SourceStatus{Context: "staging", Synced: true})
	f.UpsertBatchSandbox(fleetSandbox("team-rl", "sbx-a", t0, "10.0.0.1"))
	f.UpsertPod(model.SlimPod(fleetPod("team-rl", "sbx-a", "uid-pod-a", "10.0.0.1", t0)))
	f.SetStatus(model.SourceStatus{Context: "staging", Synced: true, DisconnectedSince: &down})
	loading := fleet.New(fleet.Options{Now: fixedNow})
	loading.UpsertBatchSandbox(fleetSandbox("team-rl", "sbx-x", t0, "10.0.0.9"))
	forbidden := fleet.NewSnapshot(1, model.SourceStatus{Context: "dev", Forbidden: []string{"credentials refused (401 Unauthorized)"}}, nil, nil, nil)
	src.setFleets(src.fleets[0], Fleet{Context: "staging", Snap: f.Snapshot()}, Fleet{Context: "eu", Snap: loading.Snapshot()},
		Fleet{Context: "dev", Snap: forbidden})

	s := screenContains(t, tm, app, "prod synced · staging disconnected since 17:25:30 · eu syncing… 1 · dev forbidden")
	for _, want := range []string{"identity UNKNOWN in staging (disconnected)", "dev: forbidden: credentials refused", "Sandboxes [5/5]"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if !regexp.MustCompile(`staging\s+team-rl\s+sbx-a .*UNKNOWN`).MatchString(s) {
		t.Errorf("the lost context's sandbox is not UNKNOWN:\n%s", s)
	}
	if !regexp.MustCompile(`prod\s+team-rl\s+sbx-a .*IP_TAKEN→sbx-b-0`).MatchString(s) {
		t.Errorf("the connected context's verdict is gone:\n%s", s)
	}
	goldenFrame(t, tm) // README's example
}

// recorder is one context's backend in a routing test: it records which
// action reached it, for which sandbox.
type recorder struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (r recorder) note(action string, sb *model.Sandbox) {
	r.mu.Lock()
	defer r.mu.Unlock()
	what := r.name + " " + action
	if sb != nil {
		what += " " + sb.Namespace() + "/" + sb.Name()
	}
	*r.log = append(*r.log, what)
}

func (r recorder) backend() Backend {
	return Backend{
		YAML: func(_ context.Context, sb *model.Sandbox) (string, error) { r.note("yaml", sb); return "kind: X", nil },
		Logs: func(_ context.Context, sb *model.Sandbox, _ LogOptions, w io.Writer) error {
			r.note("logs", sb)
			return nil
		},
		Events: func(_ context.Context, sb *model.Sandbox) ([]corev1.Event, error) {
			r.note("events", sb)
			return nil, nil
		},
		Delete: func(_ context.Context, sb *model.Sandbox) error { r.note("delete", sb); return nil },
		Shell: func(sb *model.Sandbox) (tea.ExecCommand, error) {
			r.note("shell", sb)
			return nil, fmt.Errorf("no shell in this test")
		},
		Exec: func(_ context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (int, error) {
			r.note("exec "+strings.Join(cmd, " "), sb)
			return 0, nil
		},
		Forward: func(_ context.Context, sb *model.Sandbox, _, remote int) (ForwardInfo, error) {
			r.note(fmt.Sprintf("forward %d", remote), sb)
			return ForwardInfo{}, fmt.Errorf("no forward in this test")
		},
		Create: func(_ context.Context, req CreateRequest, _ func(CreateStage)) (string, error) {
			r.note("create "+req.Image, nil)
			return "bsbx/ns/new", nil
		},
	}
}

// Every action on a sandbox reaches the backend of the sandbox's own
// context, never another's, even where the same name is in both; a create
// goes to the context the form names.
func TestActionsReachTheirContext(t *testing.T) {
	var mu sync.Mutex
	var log []string
	be := Backend{ForContext: func(name string) Backend { return recorder{name: name, mu: &mu, log: &log}.backend() }}
	// The top-level actions are only there to be offered; none may run.
	top := recorder{name: "TOP", mu: &mu, log: &log}.backend()
	be.YAML, be.Logs, be.Events, be.Delete, be.Shell, be.Exec, be.Forward, be.Create = top.YAML, top.Logs, top.Events, top.Delete, top.Shell, top.Exec, top.Forward, top.Create
	app, tm := newMultiApp(t, twoContexts(), be, 170, 24)
	screenContains(t, tm, app, "Sandboxes [8/8]")
	// Rows by name: prod/sbx-d, staging/sbx-d, prod/sbx-a, staging/sbx-a, ...
	keys(tm, "j", "j", "j") // staging/sbx-a
	waitScreen(t, tm, app, "cursor on staging's sbx-a", func(s string) bool {
		return regexp.MustCompile(`(?m)^›staging\s+team-rl\s+sbx-a`).MatchString(s)
	})
	keys(tm, "ctrl+d")
	screenContains(t, tm, app, "Delete bsbx team-rl/sbx-a in staging?")
	keys(tm, "y")
	screenContains(t, tm, app, "delete requested for team-rl/sbx-a in staging")
	keys(tm, "x", "true", "enter")
	screenContains(t, tm, app, "Exec team-rl/sbx-a in staging: true")
	keys(tm, "esc", "y")
	screenContains(t, tm, app, "YAML team-rl/sbx-a in staging")
	keys(tm, "esc", "l")
	screenContains(t, tm, app, "Logs team-rl/sbx-a in staging")
	keys(tm, "esc", "e")
	screenContains(t, tm, app, "Events team-rl/sbx-a in staging")
	keys(tm, "esc", "s")
	screenContains(t, tm, app, "no shell in this test")
	keys(tm, "F", "enter")
	screenContains(t, tm, app, "no forward in this test")
	keys(tm, "k") // up one row: prod/sbx-a
	keys(tm, "c")
	screenContains(t, tm, app, "create in prod [3/9] image:")
	keys(tm, "img:1", "ctrl+s")
	screenContains(t, tm, app, "created bsbx/ns/new")
	// Another create, in the context the form is told: back to its first
	// field, the context.
	keys(tm, "c", "img:2")
	tm.Send(tea.KeyMsg{Type: tea.KeyShiftTab})
	tm.Send(tea.KeyMsg{Type: tea.KeyShiftTab})
	screenContains(t, tm, app, "create [1/9] context: prod")
	erase := func(n int) {
		for range n {
			tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
		}
	}
	erase(len("prod"))
	keys(tm, "nowhere", "ctrl+s")
	screenContains(t, tm, app, `context: "nowhere" is not in view (prod, staging)`)
	erase(len("nowhere"))
	keys(tm, "staging", "ctrl+s")
	waitScreen(t, tm, app, "the second create done", func(string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(log, "staging create img:2")
	})

	mu.Lock()
	defer mu.Unlock()
	want := []string{"prod create img:1", "staging create img:2", "staging delete team-rl/sbx-a", "staging events team-rl/sbx-a",
		"staging exec true team-rl/sbx-a", "staging forward 44772 team-rl/sbx-a", "staging logs team-rl/sbx-a",
		"staging shell team-rl/sbx-a", "staging yaml team-rl/sbx-a"}
	slices.Sort(log) // the fetches run concurrently
	if !slices.Equal(log, want) {
		t.Fatalf("actions reached\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

// :ctx NAME shows one context, :ctx all every one; :ctx alone lists the
// kubeconfig's contexts, with the state of those in view, and enter on one
// shows it.
func TestCtxCommand(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	be := Backend{
		SwitchContext: func(name string) error {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, name)
			return nil
		},
		Contexts:   func() []string { return []string{"dev", "prod", "staging"} },
		ForContext: func(string) Backend { return Backend{} },
	}
	app, tm := newMultiApp(t, twoContexts(), be, 170, 20)
	screenContains(t, tm, app, "Sandboxes [8/8]")
	keys(tm, ":", "ctx staging", "enter")
	screenContains(t, tm, app, "showing context staging")
	keys(tm, ":", "ctx all", "enter")
	screenContains(t, tm, app, "showing every context")
	keys(tm, ":", "ctx", "enter")
	s := screenContains(t, tm, app, "Contexts [3/3]")
	for _, re := range []string{`dev\s+-\s+-`, `prod\s+yes\s+synced\s+4\s+https://127.0.0.1:6443`, `staging\s+yes\s+synced\s+4\s+https://staging:6443`} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("contexts view lacks %s:\n%s", re, s)
		}
	}
	keys(tm, "enter") // the cursor is on dev
	s = screenContains(t, tm, app, "showing context dev")
	if strings.Contains(s, "Contexts [") {
		t.Fatalf("the contexts list stays in front of the fleet it switched to:\n%s", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"staging", "", "dev"}; !slices.Equal(asked, want) {
		t.Fatalf("switches asked %q, want %q", asked, want)
	}
}

// A live refresh over several fleets, each changing on its own, leaves the
// view exactly as a full rebuild from the same snapshots: the merge pairs
// the rows of each context with that context's, never with the same name
// in another.
func TestPartialRefreshMatchesFullRebuildAcrossContexts(t *testing.T) {
	const ns, n = "team-rl", 12
	name, ip, now := churnName, churnIP, churnNow
	names := []string{"a", "b", "c"}
	fleets := make([]*fleet.Fleet, len(names))
	for k := range fleets {
		fleets[k] = churnFleet(names[k], ns, n)
	}
	src := &fakeFleets{}
	snapshot := func() {
		var out []Fleet
		for k, f := range fleets {
			out = append(out, Fleet{Context: names[k], Snap: f.Snapshot()})
		}
		src.setFleets(out...)
	}
	snapshot()
	open := func(sortKey query.SortKey) (*App, *sandboxesView) {
		a := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
		a.Init()
		v := a.stack[0].(*sandboxesView)
		if sortKey != v.sort.Key {
			v.setSort(sortKey, a.c)
		}
		return a, v
	}
	for _, sortKey := range []query.SortKey{query.SortName, query.SortState, query.SortRestarts} {
		a, live := open(sortKey)
		rng := rand.New(rand.NewPCG(uint64(len(sortKey)), 11))
		for step := range 150 {
			k, i := rng.IntN(len(fleets)), rng.IntN(n)
			f := fleets[k]
			switch rng.IntN(14) {
			case 0:
				f.DeleteBatchSandbox(ns, name(i))
			case 1:
				f.UpsertBatchSandbox(fleetSandbox(ns, name(i), now, ip(i)))
			case 2:
				lost := now
				f.SetStatus(model.SourceStatus{Context: names[k], Synced: true, DisconnectedSince: &lost})
			case 3:
				f.SetStatus(model.SourceStatus{Context: names[k], Synced: true})
			default:
				f.UpsertPod(model.SlimPod(churnedPod(rng, ns, name(i), ip(i), now)))
			}
			snapshot()
			a.liveRefresh()
			_, fresh := open(sortKey)
			where := fmt.Sprintf("sort %s, step %d", sortKey, step)
			sameView(t, where, live, fresh)
			checkRowset(t, where, &live.rows)
		}
	}
}

// The Pods view has a CONTEXT column too, and a sandbox opened from it or
// from the table is followed in its own context: a change to the same name
// in the other context does not reach its detail view.
func TestPodsAndDetailKeepTheirContext(t *testing.T) {
	src := twoContexts()
	app, tm := newMultiApp(t, src, Backend{}, 170, 30)
	screenContains(t, tm, app, "Sandboxes [8/8]")
	keys(tm, ":", "pods", "enter")
	s := screenContains(t, tm, app, "Pods [8/8]")
	if !regexp.MustCompile(`CONTEXT\s+NAMESPACE\s+POD`).MatchString(s) || !regexp.MustCompile(`(?m)^ staging\s+team-rl\s+sbx-a-0`).MatchString(s) {
		t.Fatalf("pods view without its contexts:\n%s", s)
	}
	keys(tm, "/", "staging.*sbx-c-0", "enter", "d")
	screenContains(t, tm, app, "Detail team-rl/sbx-c in staging")
	// Both sbx-c restart, each its own number of times.
	restarts := func(n int32) func(model.Sandbox) model.Sandbox {
		return func(sb model.Sandbox) model.Sandbox { sb.Restarts = n; return sb }
	}
	src.setFleets(Fleet{Context: "prod", Snap: withSandbox(src.fleets[0].Snap, "sbx-c", restarts(9))},
		Fleet{Context: "staging", Snap: withSandbox(src.fleets[1].Snap, "sbx-c", restarts(5))})
	s = screenContains(t, tm, app, "Restarts    5")
	if strings.Contains(s, "Restarts    9") {
		t.Fatalf("staging's detail shows prod's sandbox:\n%s", s)
	}
}

// With one context of a MultiSource in view (":ctx staging"), actions still
// go to that context's backend, and the keys are offered from it though
// the top-level Backend has no action of its own.
func TestOneContextInViewActsThroughIt(t *testing.T) {
	var mu sync.Mutex
	var log []string
	be := Backend{ForContext: func(name string) Backend { return recorder{name: name, mu: &mu, log: &log}.backend() }}
	src := twoContexts()
	src.fleets = src.fleets[1:]
	app, tm := newMultiApp(t, src, be, 170, 20)
	screenContains(t, tm, app, "Sandboxes [4/4]")
	keys(tm, "c")
	screenContains(t, tm, app, "create [2/8] image:")
	keys(tm, "img:3", "ctrl+s")
	screenContains(t, tm, app, "created bsbx/ns/new")
	keys(tm, "ctrl+d", "y")
	screenContains(t, tm, app, "delete requested for batch/sbx-d in staging")
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"staging create img:3", "staging delete batch/sbx-d"}; !slices.Equal(log, want) {
		t.Fatalf("actions reached %q, want %q", log, want)
	}
}
