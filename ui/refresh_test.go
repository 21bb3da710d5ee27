package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// A change after a quiet period is shown at once; changes right behind it
// wait for the end of the coalescing period and come as one refresh.
func TestLiveRefreshLeadingEdge(t *testing.T) {
	src := &fakeSource{snap: &fleet.Snapshot{Version: 1}}
	a := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	a.Init()
	a.Update(changedMsg{a.subGen}) // the subscription's first signal

	src.set(&fleet.Snapshot{Version: 2})
	a.lastRefresh = time.Now().Add(-time.Second)
	a.Update(changedMsg{a.subGen})
	if a.c.snap.Version != 2 || a.refreshQueued {
		t.Fatalf("after a quiet period: version %d, queued %v; want 2 shown at once", a.c.snap.Version, a.refreshQueued)
	}

	a.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	a.View()
	src.set(&fleet.Snapshot{Version: 3})
	a.Update(changedMsg{a.subGen})
	if a.c.snap.Version != 2 || !a.refreshQueued {
		t.Fatalf("right behind a refresh: version %d, queued %v; want 2 still shown and a refresh queued", a.c.snap.Version, a.refreshQueued)
	}
	if !a.frameOK {
		t.Fatal("a change waiting for its refresh made the unchanged frame be drawn again")
	}
	src.set(&fleet.Snapshot{Version: 4})
	a.Update(changedMsg{a.subGen}) // coalesced into the queued refresh
	a.Update(refreshMsg{})
	if a.c.snap.Version != 4 || a.refreshQueued || a.frameOK {
		t.Fatalf("after the queued refresh: version %d, queued %v, frame kept %v; want 4 and a new frame", a.c.snap.Version, a.refreshQueued, a.frameOK)
	}
}

// The coalescing period follows what a refresh costs, within bounds, and
// while a fleet is still loading its first list it is never under
// loadingRedrawEvery.
func TestRedrawPeriodFollowsRefreshCost(t *testing.T) {
	for _, tc := range []struct {
		synced     bool
		cost, want time.Duration
	}{
		{true, 0, minRedrawEvery},
		{true, time.Millisecond, minRedrawEvery},
		{true, 20 * time.Millisecond, 60 * time.Millisecond},
		{true, time.Second, maxRedrawEvery},
		{false, 0, loadingRedrawEvery},
		{false, 20 * time.Millisecond, loadingRedrawEvery},
		{false, 50 * time.Millisecond, 150 * time.Millisecond},
		{false, time.Second, maxRedrawEvery},
	} {
		snap := &fleet.Snapshot{Status: model.SourceStatus{Synced: tc.synced}}
		a := New(&fakeSource{snap: snap}, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
		a.Init()
		a.refreshCost = tc.cost
		if got := a.redrawEvery(); got != tc.want {
			t.Errorf("synced %v, refresh cost %s: period %s, want %s", tc.synced, tc.cost, got, tc.want)
		}
	}
}

// The header's counts, kept row by row across live updates, always equal a
// count from scratch.
func TestHeaderCountsFollowLiveUpdates(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	a := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	a.Init()
	recount := func(snap *fleet.Snapshot) tally {
		var t tally
		for _, sb := range snap.Sandboxes() {
			t.add(countOf(sb), 1)
		}
		return t
	}
	check := func(step string) {
		t.Helper()
		a.liveRefresh()
		got, want := a.stack[0].(*sandboxesView).rows.tally, recount(a.c.snap)
		if got.total != want.total || got.running != want.running || got.stuck != want.stuck {
			t.Fatalf("%s: tally %+v, recount %+v", step, got, want)
		}
		for _, id := range []model.IdentityState{model.IdentityOK, model.IdentityIPTaken, model.IdentityPodDead,
			model.IdentityPodGone, model.IdentityUnknown, model.IdentityUnassigned} {
			if got.identity[id] != want.identity[id] {
				t.Fatalf("%s: %s counted %d, recount %d", step, id, got.identity[id], want.identity[id])
			}
		}
	}
	check("first")
	snap := a.c.snap
	snap = withSandbox(snap, "sbx-c", func(b model.Sandbox) model.Sandbox {
		b.Slots = []model.Slot{{Identity: model.IdentityIPTaken}}
		b.State = model.StateDead
		return b
	})
	src.set(snap)
	check("sbx-c IP_TAKEN")
	removed := fleet.NewSnapshot(snap.Version+1, snap.Status, snap.Sandboxes()[1:], nil, nil)
	src.set(removed)
	check("first sandbox removed")
	added := fleet.NewSnapshot(removed.Version+1, removed.Status,
		append([]*model.Sandbox{{Key: "bsbx/aaa/new", Meta: &model.ObjectMeta{Namespace: "aaa", Name: "new"}, State: model.StateRunning,
			Slots: []model.Slot{{Identity: model.IdentityOK}}}}, removed.Sandboxes()...), nil, nil)
	src.set(added)
	check("sandbox added")
}

type testActionErr struct {
	code string
	ran  bool
}

func (e testActionErr) Error() string     { return e.code + ": something (executed: ?)" }
func (e testActionErr) ErrorCode() string { return e.code }
func (e testActionErr) MayHaveRun() bool  { return e.ran }

// A refusal says so; an error after which the command may have run does
// not call itself a refusal.
func TestErrTextRefusedOrMayHaveRun(t *testing.T) {
	if got := errText(testActionErr{code: "IP_TAKEN"}); !strings.HasPrefix(got, "refused: IP_TAKEN") {
		t.Errorf("refusal: %q", got)
	}
	if got := errText(testActionErr{code: "TRANSPORT", ran: true}); !strings.HasPrefix(got, "failed, may have run: TRANSPORT") {
		t.Errorf("outcome unknown: %q", got)
	}
}

// A snapshot whose sandboxes are the same published list (only the status
// moved) updates the header without rebuilding the table.
func TestStatusOnlySnapshotKeepsRows(t *testing.T) {
	first := incidentSnapshot()
	first.Status.Synced, first.Status.AsOf = true, t0
	src := &fakeSource{snap: first}
	a := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	a.Init()
	a.liveRefresh()
	a.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	sv := a.stack[0].(*sandboxesView)
	rowsBefore := &sv.rows.sandboxes[0]

	next := fleet.NewSnapshot(first.Version+1, first.Status, first.Sandboxes(), first.Pods(), first.Pools)
	next.Status.AsOf = t0.Add(42 * time.Second)
	src.set(next)
	a.liveRefresh()
	if &sv.rows.sandboxes[0] != rowsBefore {
		t.Fatal("a status-only snapshot rebuilt the rows")
	}
	if view := a.View(); !strings.Contains(view, "as of 17:26:42") {
		t.Fatalf("header did not move to the new status:\n%s", view)
	}

	// A snapshot with a changed sandbox still rebuilds.
	src.set(withSandbox(next, "sbx-c", func(b model.Sandbox) model.Sandbox { b.Restarts = 7; return b }))
	a.liveRefresh()
	if &sv.rows.sandboxes[0] == rowsBefore {
		t.Fatal("a changed sandbox did not rebuild the rows")
	}
}

// Before its first sync the fleet lists nothing: the header and the table
// say how many sandboxes have arrived, and the table fills once synced.
func TestLoadingShowsProgressThenRows(t *testing.T) {
	loading := fleet.NewSnapshot(1, model.SourceStatus{Context: "kind"}, nil, nil, nil)
	loading.Loading = 1234
	src := &fakeSource{snap: loading}
	a := directAppOver(src, Options{Now: fixedNow}, 160, 30)
	a.liveRefresh()
	view := a.View()
	for _, want := range []string{"syncing… 1234 sandboxes so far", "loading: 1234 sandboxes so far"} {
		if !strings.Contains(view, want) {
			t.Fatalf("loading view lacks %q:\n%s", want, view)
		}
	}
	view = finishFirstSync(a, src)
	if strings.Contains(view, "so far") || !strings.Contains(view, "sbx-c") {
		t.Fatalf("synced view:\n%s", view)
	}
}
