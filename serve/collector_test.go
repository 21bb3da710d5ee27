package serve

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func sandbox(engine model.Engine, ns, name string, state model.EffectiveState, slots ...model.Slot) *model.Sandbox {
	return &model.Sandbox{Key: model.SandboxKey(engine, ns, name), Meta: &model.ObjectMeta{Namespace: ns, Name: name},
		State: state, Slots: slots}
}

func slot(id model.IdentityState, pod string) model.Slot {
	return model.Slot{Identity: id, PodName: pod}
}

func stuckSlot(pod string, since time.Time, init bool) model.Slot {
	s := slot(model.IdentityPodDead, pod)
	s.Stuck = &model.StuckInfo{DeletingSince: since, GraceSeconds: 30, PodInitializing: init}
	return s
}

// fixture is a small fleet over two namespaces: one IP_TAKEN, two stuck
// Pods (one still initializing), a plain-Pod sandbox and an agent sandbox.
func fixture() State {
	sbs := []*model.Sandbox{
		sandbox(model.EngineAgent, "team-b", "agent-1", model.StateRunning, slot(model.IdentityOK, "agent-1")),
		sandbox(model.EngineBatchSandbox, "team-a", "ok-1", model.StateRunning, slot(model.IdentityOK, "ok-1-0")),
		sandbox(model.EngineBatchSandbox, "team-a", "ok-2", model.StateRunning, slot(model.IdentityOK, "ok-2-0")),
		sandbox(model.EngineBatchSandbox, "team-a", "stuck-1", model.StateTerminating, stuckSlot("stuck-1-0", t0.Add(-20*time.Minute), true)),
		sandbox(model.EngineBatchSandbox, "team-a", "stuck-2", model.StateTerminating, stuckSlot("stuck-2-0", t0.Add(-5*time.Minute), false)),
		// Two slots, the worst one decides: IP_TAKEN.
		sandbox(model.EngineBatchSandbox, "team-a", "victim", model.StateDead, slot(model.IdentityOK, "victim-1"), slot(model.IdentityIPTaken, "victim-0")),
		sandbox(model.EnginePod, "team-b", "plain", model.StateRunning, slot(model.IdentityOK, "plain")),
	}
	snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true, AsOf: t0.Add(-2 * time.Second)}, sbs, nil, nil)
	rep := &sweep.Report{GeneratedAt: t0.Add(-10 * time.Second), Summary: sweep.Summary{Score: 71},
		Findings: []model.Finding{
			{Code: model.CodeIPTaken, Severity: model.SeverityError, Namespace: "team-a", Sandbox: "victim", Pod: "victim-0"},
			{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning, Namespace: "team-a", Sandbox: "stuck-1"},
			{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning, Namespace: "team-a", Sandbox: "stuck-2"},
			{Code: model.CodeRestartOOM, Severity: model.SeverityWarning, Namespace: "team-b", Sandbox: "plain", Pod: "plain"},
		}}
	return State{
		Snapshot: snap,
		Watches:  []kube.WatchState{{Resource: "batchsandboxes", Synced: true, Up: true}, {Resource: "pods", Synced: true, Up: false}},
		Report:   rep,
		Restarts: map[RestartKey]float64{{Cause: "oom", Namespace: "team-b"}: 3},
		Now:      t0,
	}
}

func TestCollectorReadsTheSnapshot(t *testing.T) {
	t.Parallel()
	c := NewCollector(fixture)
	want := `
# HELP sandscope_fleet_score Fleet score of the latest analysis (0-100; 100 means no finding).
# TYPE sandscope_fleet_score gauge
sandscope_fleet_score 71
# HELP sandscope_identity Sandboxes by namespace and identity state (the worst of their recorded addresses).
# TYPE sandscope_identity gauge
sandscope_identity{namespace="team-a",state="IP_STALE"} 0
sandscope_identity{namespace="team-a",state="IP_TAKEN"} 1
sandscope_identity{namespace="team-a",state="OK"} 2
sandscope_identity{namespace="team-a",state="POD_DEAD"} 2
sandscope_identity{namespace="team-a",state="POD_GONE"} 0
sandscope_identity{namespace="team-a",state="UID_CHANGED"} 0
sandscope_identity{namespace="team-a",state="UNASSIGNED"} 0
sandscope_identity{namespace="team-a",state="UNKNOWN"} 0
sandscope_identity{namespace="team-b",state="IP_STALE"} 0
sandscope_identity{namespace="team-b",state="IP_TAKEN"} 0
sandscope_identity{namespace="team-b",state="OK"} 2
sandscope_identity{namespace="team-b",state="POD_DEAD"} 0
sandscope_identity{namespace="team-b",state="POD_GONE"} 0
sandscope_identity{namespace="team-b",state="UID_CHANGED"} 0
sandscope_identity{namespace="team-b",state="UNASSIGNED"} 0
sandscope_identity{namespace="team-b",state="UNKNOWN"} 0
# HELP sandscope_sandboxes Sandboxes by engine, namespace and effective state.
# TYPE sandscope_sandboxes gauge
sandscope_sandboxes{engine="agent",namespace="team-b",state="Running"} 1
sandscope_sandboxes{engine="bsbx",namespace="team-a",state="Dead"} 1
sandscope_sandboxes{engine="bsbx",namespace="team-a",state="Running"} 2
sandscope_sandboxes{engine="bsbx",namespace="team-a",state="Terminating"} 2
sandscope_sandboxes{engine="pod",namespace="team-b",state="Running"} 1
# HELP sandscope_stuck_terminating_pods Pods stuck Terminating past their grace period, by namespace and whether the main container was still initializing.
# TYPE sandscope_stuck_terminating_pods gauge
sandscope_stuck_terminating_pods{namespace="team-a",phase="init"} 1
sandscope_stuck_terminating_pods{namespace="team-a",phase="running"} 1
sandscope_stuck_terminating_pods{namespace="team-b",phase="init"} 0
sandscope_stuck_terminating_pods{namespace="team-b",phase="running"} 0
# HELP sandscope_stuck_terminating_oldest_seconds Age of the deletion of the oldest Pod stuck Terminating, by namespace.
# TYPE sandscope_stuck_terminating_oldest_seconds gauge
sandscope_stuck_terminating_oldest_seconds{namespace="team-a"} 1200
# HELP sandscope_findings Findings of the latest analysis by code, severity and namespace.
# TYPE sandscope_findings gauge
sandscope_findings{code="IP_TAKEN",namespace="team-a",severity="error"} 1
sandscope_findings{code="RESTART_OOM",namespace="team-b",severity="warning"} 1
sandscope_findings{code="STUCK_TERMINATING",namespace="team-a",severity="warning"} 2
# HELP sandscope_restarts_total Container restarts and kills explained by restart forensics since the exporter started, by cause.
# TYPE sandscope_restarts_total counter
sandscope_restarts_total{cause="evicted",namespace="team-a"} 0
sandscope_restarts_total{cause="evicted",namespace="team-b"} 0
sandscope_restarts_total{cause="liveness",namespace="team-a"} 0
sandscope_restarts_total{cause="liveness",namespace="team-b"} 0
sandscope_restarts_total{cause="oom",namespace="team-a"} 0
sandscope_restarts_total{cause="oom",namespace="team-b"} 3
sandscope_restarts_total{cause="unexplained",namespace="team-a"} 0
sandscope_restarts_total{cause="unexplained",namespace="team-b"} 0
# HELP sandscope_watch_up 1 while the watch of a resource is synced and answered, else 0.
# TYPE sandscope_watch_up gauge
sandscope_watch_up{resource="batchsandboxes"} 1
sandscope_watch_up{resource="pods"} 0
# HELP sandscope_last_sync_timestamp_seconds Unix time the data was last proven current (a consistent read of the API server's storage).
# TYPE sandscope_last_sync_timestamp_seconds gauge
sandscope_last_sync_timestamp_seconds ` + fmt.Sprint(float64(t0.Add(-2*time.Second).Unix())) + `
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"sandscope_fleet_score", "sandscope_identity", "sandscope_sandboxes", "sandscope_stuck_terminating_pods",
		"sandscope_stuck_terminating_oldest_seconds", "sandscope_findings", "sandscope_restarts_total",
		"sandscope_watch_up", "sandscope_last_sync_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

// Before the first sync and the first analysis a scrape still answers:
// only the watches' state, nothing invented.
func TestCollectorBeforeSync(t *testing.T) {
	t.Parallel()
	c := NewCollector(func() State {
		return State{Watches: []kube.WatchState{{Resource: "pods"}}}
	})
	if n := testutil.CollectAndCount(c); n != 1 {
		t.Errorf("%d metrics before sync, want 1 (watch_up)", n)
	}
	if got := testutil.ToFloat64(NewCollector(func() State {
		return State{Watches: []kube.WatchState{{Resource: "pods"}}}
	})); got != 0 {
		t.Errorf("watch_up before sync = %v, want 0", got)
	}
}

// Labels stay bounded: the number of series does not grow with sandboxes.
func TestCollectorCardinalityIsBounded(t *testing.T) {
	t.Parallel()
	count := func(n int) int {
		sbs := make([]*model.Sandbox, n)
		for i := range sbs {
			sbs[i] = sandbox(model.EngineBatchSandbox, "ns", fmt.Sprintf("sb-%06d", i), model.StateRunning, slot(model.IdentityOK, fmt.Sprintf("sb-%06d-0", i)))
		}
		snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true}, sbs, nil, nil)
		return testutil.CollectAndCount(NewCollector(func() State { return State{Snapshot: snap} }))
	}
	if a, b := count(10), count(1000); a != b {
		t.Errorf("%d series for 10 sandboxes, %d for 1000: a label follows the sandboxes", a, b)
	}
}

func TestRestartCounterOnlyGrows(t *testing.T) {
	t.Parallel()
	pod := func(name string, restarts int32) *model.Pod {
		p := &model.Pod{ObjectMeta: model.ObjectMeta{Namespace: "ns", Name: name}}
		p.Status.ContainerStatuses = []model.ContainerStatus{{Name: "sandbox", RestartCount: restarts}}
		return p
	}
	snapOf := func(pods ...*model.Pod) *fleet.Snapshot {
		return fleet.NewSnapshot(1, model.SourceStatus{}, nil, pods, nil)
	}
	oom := func(p string) model.Finding {
		return model.Finding{Code: model.CodeRestartOOM, Namespace: "ns", Pod: p}
	}
	evicted := func(p string) model.Finding {
		return model.Finding{Code: model.CodeRestartEvicted, Namespace: "ns", Pod: p}
	}
	key, evKey := RestartKey{"oom", "ns"}, RestartKey{"evicted", "ns"}
	rc := newRestartCounter()

	// The fleet could not be read: no baseline yet.
	if got := rc.observe(nil, nil); len(got) != 0 {
		t.Fatalf("unread fleet: %v", got)
	}
	// The first analysis is the baseline: restarts from before the exporter
	// started are not new.
	got := rc.observe(snapOf(pod("a", 2), pod("b", 1), pod("c", 0)), []model.Finding{oom("a"), oom("b"), evicted("c")})
	if got[key] != 0 || got[evKey] != 0 {
		t.Fatalf("first analysis: %v, want nothing counted", got)
	}
	// Same restarts seen again: nothing new.
	if got = rc.observe(snapOf(pod("a", 2), pod("b", 1), pod("c", 0)), []model.Finding{oom("a"), oom("b"), evicted("c")}); got[key] != 0 {
		t.Errorf("second analysis: %v, want oom still 0", got)
	}
	// a restarts twice more, d is a new Pod already restarted 3 times, e is
	// evicted; b and c leave the fleet.
	got = rc.observe(snapOf(pod("a", 4), pod("d", 3), pod("e", 0)), []model.Finding{oom("a"), oom("d"), evicted("e")})
	if got[key] != 5 || got[evKey] != 1 {
		t.Errorf("third analysis: %v, want oom 5 (2 more of a, 3 of d), evicted 1", got)
	}
	if len(rc.last) != 3 {
		t.Errorf("the counter remembers %d Pods, want 3 (a, d, e)", len(rc.last))
	}
	// The totals never go down, whatever leaves.
	if got = rc.observe(snapOf(), nil); got[key] != 5 || got[evKey] != 1 {
		t.Errorf("after every Pod left: %v", got)
	}
}
