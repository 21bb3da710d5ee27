package fleet

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// TestIdentityStates replays each identity state through the Fleet's public
// API (the way kube/ feeds it) and checks the primary slot of one sandbox.
func TestIdentityStates(t *testing.T) {
	const ipA = "10.0.3.7"
	type want struct {
		key      string
		identity model.IdentityState
		holder   string // Pod named as holder, "" for none
		holderSb string // sandbox of the holder
		state    model.EffectiveState
	}
	cases := []struct {
		name  string
		steps func(f *Fleet, c *testClock)
		want  []want
	}{
		{
			name: "OK: recorded IP is the running linked Pod's",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertPod(sandboxPod("a", "ua", ipA))
				f.UpsertBatchSandbox(batchSandbox("a", ipA))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityOK, state: model.StateRunning}},
		},
		{
			name: "OK: sandbox before its Pod (informer order does not matter)",
			steps: func(f *Fleet, c *testClock) {
				linkedSandbox(f, "a", "ua", ipA)
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityOK, state: model.StateRunning}},
		},
		{
			name: "UNASSIGNED: empty endpoints entry",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertBatchSandbox(batchSandbox("a", ""))
				p := modeltest.RunningPod("a-0", "ua", "", modeltest.OwnedBy("a", 0))
				modeltest.Initializing(p)
				f.UpsertPod(model.SlimPod(p))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityUnassigned, state: model.StateStarting}},
		},
		{
			name: "UNASSIGNED: no endpoints annotation yet",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertBatchSandbox(batchSandbox("a"))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityUnassigned, state: model.StatePending}},
		},
		{
			name: "POD_DEAD: Pod Failed, engine still records its IP",
			steps: func(f *Fleet, c *testClock) {
				linkedSandbox(f, "a", "ua", ipA, modeltest.Exited(137, "OOMKilled"))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityPodDead, state: model.StateDead}},
		},
		{
			name: "POD_DEAD: main container terminated, phase still Running",
			steps: func(f *Fleet, c *testClock) {
				linkedSandbox(f, "a", "ua", ipA, modeltest.MainTerminated)
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityPodDead, state: model.StateDead}},
		},
		{
			name: "POD_DEAD: Pod being deleted",
			steps: func(f *Fleet, c *testClock) {
				linkedSandbox(f, "a", "ua", ipA, modeltest.DeletingAt(ft0, 30))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityPodDead, state: model.StateTerminating}},
		},
		{
			name: "POD_GONE: Pod deleted, address still recorded",
			steps: func(f *Fleet, c *testClock) {
				f.DeletePod(linkedSandbox(f, "a", "ua", ipA))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityPodGone, state: model.StateGone}},
		},
		{
			name: "IP_TAKEN: A died, B got its IP (a dead sandbox's IP reused by a new Pod)",
			steps: func(f *Fleet, c *testClock) {
				linkedSandbox(f, "a", "ua", ipA)
				c.Advance(39 * time.Second)
				f.UpsertPod(sandboxPod("a", "ua", ipA, modeltest.Exited(0, "Completed")))
				c.Advance(35 * time.Second)
				f.UpsertPod(sandboxPod("b", "ub", ipA))
				f.UpsertBatchSandbox(batchSandbox("b", ipA))
			},
			want: []want{
				{key: bsKey("a"), identity: model.IdentityIPTaken, holder: "b-0", holderSb: bsKey("b"), state: model.StateDead},
				{key: bsKey("b"), identity: model.IdentityOK, state: model.StateRunning},
			},
		},
		{
			name: "IP_TAKEN: IP reused within one second of the deletion",
			steps: func(f *Fleet, c *testClock) {
				f.DeletePod(linkedSandbox(f, "a", "ua", ipA))
				c.Advance(800 * time.Millisecond)
				linkedSandbox(f, "b", "ub", ipA)
			},
			want: []want{
				{key: bsKey("a"), identity: model.IdentityIPTaken, holder: "b-0", holderSb: bsKey("b"), state: model.StateGone},
				{key: bsKey("b"), identity: model.IdentityOK, state: model.StateRunning},
			},
		},
		{
			name: "IP_TAKEN both ways: two live Pods claim one IP",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertBatchSandbox(batchSandbox("a", ipA))
				f.UpsertBatchSandbox(batchSandbox("b", ipA))
				f.UpsertPod(sandboxPod("a", "ua", ipA))
				f.UpsertPod(sandboxPod("b", "ub", ipA))
			},
			want: []want{
				{key: bsKey("a"), identity: model.IdentityIPTaken, holder: "b-0", holderSb: bsKey("b"), state: model.StateRunning},
				{key: bsKey("b"), identity: model.IdentityIPTaken, holder: "a-0", holderSb: bsKey("a"), state: model.StateRunning},
			},
		},
		{
			name: "IP_TAKEN by a Pod of no sandbox",
			steps: func(f *Fleet, c *testClock) {
				linkedSandbox(f, "a", "ua", ipA, modeltest.Exited(1, "Error"))
				stranger := modeltest.RunningPod("web-1", "uw", ipA)
				delete(stranger.Labels, osv1.LabelSandboxID)
				f.UpsertPod(model.SlimPod(stranger))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityIPTaken, holder: "web-1", holderSb: "", state: model.StateDead}},
		},
		{
			name: "UID_CHANGED: same-name re-creation at another IP",
			steps: func(f *Fleet, c *testClock) {
				f.DeletePod(linkedSandbox(f, "a", "ua", ipA))
				f.UpsertPod(sandboxPod("a", "ua2", "10.0.9.9"))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityUIDChanged, state: model.StateRunning}},
		},
		{
			name: "UID_CHANGED: same-name re-creation holding the same IP",
			steps: func(f *Fleet, c *testClock) {
				f.DeletePod(linkedSandbox(f, "a", "ua", ipA))
				f.UpsertPod(sandboxPod("a", "ua2", ipA))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityUIDChanged, state: model.StateRunning}},
		},
		{
			name: "UID_CHANGED: re-creation seen without the delete event",
			steps: func(f *Fleet, c *testClock) {
				linkedSandbox(f, "a", "ua", ipA)
				f.UpsertPod(sandboxPod("a", "ua2", "10.0.9.9"))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityUIDChanged, state: model.StateRunning}},
		},
		{
			name: "IP_STALE: linked Pod lives at another IP",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
				f.UpsertPod(sandboxPod("a", "ua", ipA))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityIPStale, state: model.StateRunning}},
		},
		{
			name: "pooled: released Pod reused by another sandbox",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertPod(model.SlimPod(modeltest.RunningPod("pool-a-x1", "up", ipA, modeltest.PooledIn("pool-a"))))
				f.UpsertBatchSandbox(pooledSandbox("a", ft0, []string{"pool-a-x1"}, ipA))
				c.Advance(time.Minute)
				f.UpsertBatchSandbox(pooledSandbox("a", ft0, nil, ipA)) // alloc-released lists it now
				f.UpsertBatchSandbox(pooledSandbox("b", c.now, []string{"pool-a-x1"}, ipA))
			},
			want: []want{
				{key: bsKey("a"), identity: model.IdentityIPTaken, holder: "pool-a-x1", holderSb: bsKey("b"), state: model.StateGone},
				{key: bsKey("b"), identity: model.IdentityOK, state: model.StateRunning},
			},
		},
		{
			name: "pooled: Pod still listed by the old sandbox and handed to a newer one",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertPod(model.SlimPod(modeltest.RunningPod("pool-a-x1", "up", ipA, modeltest.PooledIn("pool-a"))))
				f.UpsertBatchSandbox(pooledSandbox("b", ft0.Add(time.Hour), []string{"pool-a-x1"}, ipA))
				f.UpsertBatchSandbox(pooledSandbox("a", ft0, []string{"pool-a-x1"}, ipA))
			},
			want: []want{
				{key: bsKey("a"), identity: model.IdentityIPTaken, holder: "pool-a-x1", holderSb: bsKey("b"), state: model.StateGone},
				{key: bsKey("b"), identity: model.IdentityOK, state: model.StateRunning},
			},
		},
		{
			name: "pooled: allocated Pod deleted (OpenSandbox #954)",
			steps: func(f *Fleet, c *testClock) {
				p := modeltest.RunningPod("pool-a-x1", "up", ipA, modeltest.PooledIn("pool-a"))
				f.UpsertPod(model.SlimPod(p))
				f.UpsertBatchSandbox(pooledSandbox("a", ft0, []string{"pool-a-x1"}, ipA))
				f.DeletePod(model.SlimPod(p))
			},
			want: []want{{key: bsKey("a"), identity: model.IdentityPodGone, state: model.StateGone}},
		},
		{
			name: "plain Pod: OK, then dead",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertPod(model.SlimPod(modeltest.RunningPod("p1", "u1", ipA)))
				f.UpsertPod(model.SlimPod(modeltest.RunningPod("p1", "u1", ipA, modeltest.Exited(137, "OOMKilled"))))
			},
			want: []want{{key: plainKey("p1"), identity: model.IdentityPodDead, state: model.StateDead}},
		},
		{
			name: "plain Pod: a dead one's IP taken by another plain Pod",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertPod(model.SlimPod(modeltest.RunningPod("p1", "u1", ipA, modeltest.Exited(137, "OOMKilled"))))
				f.UpsertPod(model.SlimPod(modeltest.RunningPod("p2", "u2", ipA)))
			},
			want: []want{
				{key: plainKey("p1"), identity: model.IdentityIPTaken, holder: "p2", holderSb: plainKey("p2"), state: model.StateDead},
				{key: plainKey("p2"), identity: model.IdentityOK, state: model.StateRunning},
			},
		},
		{
			name: "agent Sandbox: Pod through status.selector",
			steps: func(f *Fleet, c *testClock) {
				p := modeltest.RunningPod("ag", "u1", ipA)
				p.Labels = map[string]string{"agents.x-k8s.io/sandbox-name-hash": "abc"}
				f.UpsertPod(model.SlimPod(p))
				f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: model.SlimPod(p).ObjectMeta, Selector: "agents.x-k8s.io/sandbox-name-hash=abc",
					PodIPs: []string{ipA}, Conditions: []model.Condition{{Type: "Ready", Status: "True"}}})
			},
			want: []want{{key: agentKey("ag"), identity: model.IdentityOK, state: model.StateRunning}},
		},
		{
			name: "agent Sandbox: recorded podIPs differ from its Pod",
			steps: func(f *Fleet, c *testClock) {
				f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: model.SlimPod(modeltest.RunningPod("ag", "ua", "")).ObjectMeta, Selector: "app=x", PodIPs: []string{"10.0.0.1"}})
				p := modeltest.RunningPod("ag-pod", "u1", ipA)
				p.Labels = map[string]string{"app": "x"}
				f.UpsertPod(model.SlimPod(p))
			},
			want: []want{{key: agentKey("ag"), identity: model.IdentityIPStale, state: model.StateRunning}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, c := newSyncedFleet(t)
			tc.steps(f, c)
			for _, w := range tc.want {
				sb := mustSandbox(t, f, w.key)
				sl := sb.PrimarySlot()
				if sl == nil {
					t.Fatalf("%s: no slots", w.key)
				}
				if sl.Identity != w.identity {
					t.Errorf("%s: identity %s, want %s (notices %v)", w.key, sl.Identity, w.identity, noticeCodes(sb))
				}
				if sb.State != w.state {
					t.Errorf("%s: state %s, want %s", w.key, sb.State, w.state)
				}
				holder, holderSb := "", ""
				if sl.Holder != nil {
					holder, holderSb = sl.Holder.Pod, sl.Holder.Sandbox
				}
				if holder != w.holder || holderSb != w.holderSb {
					t.Errorf("%s: holder %q (sandbox %q), want %q (sandbox %q)", w.key, holder, holderSb, w.holder, w.holderSb)
				}
				if code := string(w.identity); w.identity != model.IdentityOK && w.identity != model.IdentityUnassigned && hasNotice(sb, code) == nil {
					t.Errorf("%s: no %s notice; have %v", w.key, code, noticeCodes(sb))
				}
			}
		})
	}
}

// TestUnknownWhileNotSynced: never a stale OK while the source is not synced
// (nothing is listed, only counted) or disconnected (every row masked); the
// real state comes back once synced.
func TestUnknownWhileNotSynced(t *testing.T) {
	c := &testClock{now: ft0}
	f := New(Options{Now: c.Now})
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
	f.UpsertBatchSandbox(batchSandbox("b", "10.0.0.2"))
	f.UpsertPool(&model.Pool{ObjectMeta: model.ObjectMeta{Namespace: "sbx", Name: "pool-a"}})
	f.UpsertPod(sandboxPod("a", "ua", "10.0.0.1"))
	check := func(wantID model.IdentityState, wantState model.EffectiveState) {
		t.Helper()
		sb := mustSandbox(t, f, bsKey("a"))
		if sb.Identity() != wantID || sb.State != wantState {
			t.Fatalf("identity %s state %s, want %s %s", sb.Identity(), sb.State, wantID, wantState)
		}
	}
	loading := f.Snapshot()
	if loading.NumSandboxes() != 0 || loading.NumPods() != 0 || len(loading.Pools) != 0 || loading.Sandbox(bsKey("a")) != nil ||
		loading.SandboxOfPod("sbx", "a-0") != nil {
		t.Fatalf("before the first sync the snapshot lists %d sandboxes, %d Pods, %d pools",
			loading.NumSandboxes(), loading.NumPods(), len(loading.Pools))
	}
	if loading.Loading != 2 {
		t.Fatalf("Loading = %d before the first sync, want 2", loading.Loading)
	}
	f.SetStatus(model.SourceStatus{Synced: true})
	if s := f.Snapshot(); s.Loading != 0 || len(s.Pools) != 1 {
		t.Fatalf("synced: Loading %d, %d pools", s.Loading, len(s.Pools))
	}
	check(model.IdentityOK, model.StateRunning)
	lost := ft0.Add(time.Minute)
	f.SetStatus(model.SourceStatus{Synced: true, DisconnectedSince: &lost})
	check(model.IdentityUnknown, model.StateUnknown)
	f.UpsertPod(sandboxPod("a", "ua", "10.0.0.1", modeltest.Exited(1, "Error")))
	sb := mustSandbox(t, f, bsKey("a"))
	if hasNotice(sb, model.CodePodDead) != nil || sb.Identity() != model.IdentityUnknown {
		t.Fatalf("disconnected snapshot shows identity notices: %v", noticeCodes(sb))
	}
	f.SetStatus(model.SourceStatus{Synced: true})
	check(model.IdentityPodDead, model.StateDead)
}

func TestDeriveIdentityPure(t *testing.T) {
	p := model.SlimPod(modeltest.RunningPod("a-0", "ua", "10.0.0.1"))
	since := ft0
	cases := []struct {
		name  string
		facts slotFacts
		want  model.IdentityState
	}{
		{"unassigned", slotFacts{PodName: "a-0", Pod: p}, model.IdentityUnassigned},
		{"ok", slotFacts{RecordedIP: "10.0.0.1", PodName: "a-0", BoundUID: "ua", Pod: p,
			Holders: []model.Holder{{Pod: "a-0", UID: "ua", Since: since}}}, model.IdentityOK},
		{"taken", slotFacts{RecordedIP: "10.0.0.1", PodName: "a-0", BoundUID: "ua", Pod: p,
			Holders: []model.Holder{{Pod: "a-0", UID: "ua"}, {Pod: "b-0", UID: "ub", Since: since}}}, model.IdentityIPTaken},
		{"gone", slotFacts{RecordedIP: "10.0.0.1", PodName: "a-0", BoundUID: "ua"}, model.IdentityPodGone},
		{"gone, no pod named", slotFacts{RecordedIP: "10.0.0.1"}, model.IdentityPodGone},
		{"uid changed", slotFacts{RecordedIP: "10.0.0.1", PodName: "a-0", BoundUID: "old", Pod: p}, model.IdentityUIDChanged},
		{"stale", slotFacts{RecordedIP: "10.0.0.2", PodName: "a-0", BoundUID: "ua", Pod: p}, model.IdentityIPStale},
		{"foreign pod holds it", slotFacts{RecordedIP: "10.0.0.1", PodName: "a-0", BoundUID: "ua", Pod: p, ForeignSandbox: "bsbx/x/b",
			Holders: []model.Holder{{Pod: "a-0", UID: "ua", Sandbox: "bsbx/x/b"}}}, model.IdentityIPTaken},
	}
	for _, tc := range cases {
		if got, _ := deriveIdentity(tc.facts); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestUnknownCoversSandboxesWithoutSlots(t *testing.T) {
	c := &testClock{now: ft0}
	f := New(Options{Now: c.Now})
	b := batchSandbox("a")
	b.Replicas = 0
	f.UpsertBatchSandbox(b)
	f.SetStatus(model.SourceStatus{Synced: true})
	if id := mustSandbox(t, f, bsKey("a")).Identity(); id != model.IdentityUnassigned {
		t.Fatalf("identity %s once synced", id)
	}
	lost := ft0
	f.SetStatus(model.SourceStatus{Synced: true, DisconnectedSince: &lost})
	if id := mustSandbox(t, f, bsKey("a")).Identity(); id != model.IdentityUnknown {
		t.Fatalf("identity %s while disconnected", id)
	}
}

// While the first list arrives, Loading counts what the sorted list will
// hold, through adds and deletes between snapshots; the sync then lists
// exactly that many, in order.
func TestLoadingCountsWhatTheSyncLists(t *testing.T) {
	f := New(Options{Now: (&testClock{now: ft0}).Now})
	want := map[string]bool{}
	for i, step := range []struct{ add, del string }{
		{add: "c"}, {add: "a"}, {add: "e"}, {del: "a"}, {add: "b"}, {add: "d"}, {del: "e"}, {add: "a"}, {del: "zz"},
	} {
		if step.add != "" {
			f.UpsertBatchSandbox(batchSandbox(step.add, "10.0.0."+strconv.Itoa(i+1)))
			want[step.add] = true
		} else {
			f.DeleteBatchSandbox("sbx", step.del)
			delete(want, step.del)
		}
		if got := f.Snapshot().Loading; got != len(want) {
			t.Fatalf("step %d: Loading = %d, want %d", i, got, len(want))
		}
	}
	f.SetStatus(model.SourceStatus{Synced: true})
	s := f.Snapshot()
	var names []string
	for _, sb := range s.Sandboxes() {
		names = append(names, sb.Name())
	}
	if got := strings.Join(names, ","); got != "a,b,c,d" {
		t.Fatalf("synced: sandboxes %s, want a,b,c,d", got)
	}
}

// ForeignCandidates follows the fleet: a gone sandbox's recorded IP is a
// candidate until a watched Pod takes it. Asked again with nothing changed,
// or after a new status alone (the watcher's last contact moves every few
// seconds), the answer stands without a walk over the fleet.
func TestForeignCandidatesFollowTheFleet(t *testing.T) {
	c := &testClock{now: ft0}
	f := New(Options{Now: c.Now})
	f.SetStatus(model.SourceStatus{Synced: true})
	f.DeletePod(linkedSandbox(f, "a", "ua", "10.0.0.1"))
	first := f.ForeignCandidates()
	if !slices.Equal(first, []string{"10.0.0.1"}) {
		t.Fatalf("candidates %v, want [10.0.0.1]", first)
	}
	f.SetStatus(model.SourceStatus{Synced: true, AsOf: ft0.Add(5 * time.Second)})
	if again := f.ForeignCandidates(); &again[0] != &first[0] {
		t.Fatal("a status change rebuilt the candidates")
	}
	f.DeletePod(linkedSandbox(f, "b", "ub", "10.0.0.2"))
	if got := f.ForeignCandidates(); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Fatalf("after a change: candidates %v, want [10.0.0.1 10.0.0.2]", got)
	}
	c.Advance(time.Minute)
	linkedSandbox(f, "c", "uc", "10.0.0.1")
	if got := f.ForeignCandidates(); !slices.Equal(got, []string{"10.0.0.2"}) {
		t.Fatalf("after a watched Pod took 10.0.0.1: candidates %v, want [10.0.0.2]", got)
	}
	f.SetForeignHolders("10.0.0.9", []model.Holder{{Namespace: "other", Pod: "x", UID: "ux"}})
	if got := f.ForeignCandidates(); !slices.Equal(got, []string{"10.0.0.2", "10.0.0.9"}) {
		t.Fatalf("with a foreign holder: candidates %v, want [10.0.0.2 10.0.0.9]", got)
	}
}

// In a namespace-scoped fleet a gone sandbox's IP is unchecked until a
// lookup of the other namespaces answers for it: then IP_TAKEN by the Pod it
// found, or a checked POD_GONE; a lookup that fails leaves it unchecked
// again, never a plain verdict from a stale answer.
func TestForeignIndexChecksSlots(t *testing.T) {
	const ip = "10.0.0.1"
	c := &testClock{now: ft0}
	f := New(Options{Now: c.Now})
	f.TrackForeign()
	f.SetStatus(model.SourceStatus{Synced: true})
	f.DeletePod(linkedSandbox(f, "a", "ua", ip))
	slot := func() model.Slot { return *mustSandbox(t, f, bsKey("a")).PrimarySlot() }
	if sl := slot(); sl.Identity != model.IdentityPodGone || !sl.NamespaceOnly {
		t.Fatalf("before any lookup: %s namespaceOnly=%v, want POD_GONE unchecked", sl.Identity, sl.NamespaceOnly)
	}
	f.SetForeignIndex([]string{ip}, nil)
	if sl := slot(); sl.Identity != model.IdentityPodGone || sl.NamespaceOnly {
		t.Fatalf("looked up, no holder: %s namespaceOnly=%v, want POD_GONE checked", sl.Identity, sl.NamespaceOnly)
	}
	thief := model.Holder{Namespace: "other", Pod: "thief", UID: "ut", Since: ft0}
	f.SetForeignIndex([]string{ip}, map[string][]model.Holder{ip: {thief}})
	if sl := slot(); sl.Identity != model.IdentityIPTaken || sl.NamespaceOnly || sl.Holder == nil || sl.Holder.Pod != "thief" {
		t.Fatalf("looked up, held: %s holder %+v namespaceOnly=%v, want IP_TAKEN by thief", sl.Identity, sl.Holder, sl.NamespaceOnly)
	}
	f.ForeignLookupFailed() // a transient error keeps the holder found
	if sl := slot(); sl.Identity != model.IdentityIPTaken {
		t.Fatalf("after a failed lookup: %s, want IP_TAKEN kept", sl.Identity)
	}
	f.SetForeignIndex([]string{ip}, nil) // the thief is gone
	f.ForeignLookupFailed()
	if sl := slot(); sl.Identity != model.IdentityPodGone || !sl.NamespaceOnly {
		t.Fatalf("after a failed lookup: %s namespaceOnly=%v, want POD_GONE unchecked", sl.Identity, sl.NamespaceOnly)
	}
	js, err := json.Marshal(slot())
	if err != nil || !strings.Contains(string(js), `"holderChecked":false`) {
		t.Fatalf("JSON of an unchecked slot: %s (%v), want holderChecked false", js, err)
	}
}
