package ui

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// While the first lists stream in, the header says per resource how many
// objects arrived, of how many when the server said, and how fast, as the
// watcher's status reports them through the snapshot; then "synced".
func TestHeaderShowsListProgressUntilSynced(t *testing.T) {
	st := model.SourceStatus{Context: "prod", Syncing: []model.ListProgress{
		{Resource: "pods", Received: 12400, Total: count(50000), PerSecond: 4100},
		{Resource: "batchsandboxes", Received: 3000},
		{Resource: "pools", Done: true},
	}}
	loading := fleet.NewSnapshot(1, st, nil, nil, nil)
	src := &fakeSource{snap: loading}
	a := directAppOver(src, Options{Now: fixedNow}, 200, 30)
	a.liveRefresh()
	view := a.View()
	if want := "syncing: pods 12,400 of 50,000 · 4,100/s · batchsandboxes 3,000…"; !strings.Contains(view, want) {
		t.Fatalf("header lacks %q:\n%s", want, view)
	}
	if strings.Contains(view, "pools") {
		t.Errorf("an empty list that is done takes room in the header:\n%s", view)
	}

	if view := finishFirstSync(a, src); strings.Contains(view, "syncing") {
		t.Fatalf("synced view still says syncing:\n%s", view)
	}
}

// With several contexts in view, each one still syncing says how far.
func TestFleetStateSaysHowFar(t *testing.T) {
	s := fleet.NewSnapshot(1, model.SourceStatus{Syncing: []model.ListProgress{
		{Resource: "pods", Received: 1200, Total: count(5000)},
		{Resource: "batchsandboxes", Received: 300, Total: count(1000)},
	}}, nil, nil, nil)
	if got, want := fleetState(s), "syncing 1,500 of 6,000"; got != want {
		t.Errorf("fleetState = %q, want %q", got, want)
	}
}

func count(n int64) *int64 { return &n }

// finishFirstSync has src end its first sync with the incident fleet and
// a take it in; it returns a's view then.
func finishFirstSync(a *App, src *fakeSource) string {
	synced := incidentSnapshot()
	synced.Version, synced.Status.Synced, synced.Status.AsOf = 2, true, t0
	src.set(synced)
	a.Update(refreshMsg{})
	return a.View()
}
