package fleet

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

func TestSnapshotIsImmutableAndSorted(t *testing.T) {
	f, _ := newSyncedFleet(t)
	for _, name := range []string{"c", "a", "b"} {
		f.UpsertBatchSandbox(batchSandbox(name, "10.0.0."+name))
	}
	f.UpsertPod(sandboxPod("b", "ub", "10.0.1.1"))
	s1 := f.Snapshot()
	if s2 := f.Snapshot(); s2 != s1 {
		t.Error("unchanged fleet gave a new snapshot")
	}
	keys := func(s *Snapshot) []string {
		var out []string
		for _, sb := range s.Sandboxes() {
			out = append(out, sb.Key)
		}
		return out
	}
	if want := []string{bsKey("a"), bsKey("b"), bsKey("c")}; !slices.Equal(keys(s1), want) {
		t.Fatalf("keys %v, want %v", keys(s1), want)
	}
	oldB := s1.Sandbox(bsKey("b"))
	oldState := oldB.State
	f.UpsertPod(sandboxPod("b", "ub", "10.0.1.1", modeltest.Exited(1, "Error")))
	f.UpsertBatchSandbox(batchSandbox("aa", ""))
	f.DeleteBatchSandbox(ns, "c")
	s2 := f.Snapshot()
	if s1.Sandbox(bsKey("b")) != oldB || oldB.State != oldState || len(s1.Sandboxes()) != 3 {
		t.Error("an earlier snapshot changed")
	}
	if s2.Sandbox(bsKey("b")) == oldB || s2.Sandbox(bsKey("b")).State != model.StateDead {
		t.Error("the new snapshot does not carry the new sandbox")
	}
	if want := []string{bsKey("a"), bsKey("aa"), bsKey("b")}; !slices.Equal(keys(s2), want) {
		t.Fatalf("keys %v, want %v", keys(s2), want)
	}
	if s2.Sandbox(bsKey("c")) != nil || s2.Version <= s1.Version {
		t.Error("deleted sandbox still there, or version did not grow")
	}
	if len(s2.Pods()) != 1 || s2.Pods()[0].Name != "b-0" || s2.Pods()[0].Status.Phase != corev1.PodFailed {
		t.Errorf("pods %v", s2.Pods())
	}
	if sb := s2.SandboxOfPod(ns, "b-0"); sb == nil || sb.Key != bsKey("b") {
		t.Errorf("SandboxOfPod(b-0) = %v", sb)
	}
	if s2.SandboxOfPod(ns, "nope") != nil {
		t.Error("SandboxOfPod of an unknown Pod")
	}
}

func TestSnapshotPodsSortedByNamespaceThenName(t *testing.T) {
	f, _ := newSyncedFleet(t)
	for _, n := range [][2]string{{"a-b", "x"}, {"a", "y"}, {"a", "x"}} {
		p := modeltest.RunningPod(n[1], n[0]+n[1], "")
		p.Namespace = n[0]
		f.UpsertPod(model.SlimPod(p))
	}
	var got []string
	for _, p := range f.Snapshot().Pods() {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	if want := []string{"a/x", "a/y", "a-b/x"}; !slices.Equal(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
}

func TestPlainPodSandboxes(t *testing.T) {
	f, _ := newSyncedFleet(t)
	// A BatchSandbox Pod carries opensandbox.io/id too: never a plain sandbox,
	// even before its BatchSandbox arrives.
	f.UpsertPod(sandboxPod("a", "ua", "10.0.0.1"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("pool-x", "up", "10.0.0.2", modeltest.PooledIn("pool-a"))))
	plain := modeltest.RunningPod("solo", "us", "10.0.0.3")
	f.UpsertPod(model.SlimPod(plain))
	unlabelled := modeltest.RunningPod("web", "uw", "10.0.0.4")
	delete(unlabelled.Labels, osv1.LabelSandboxID)
	f.UpsertPod(model.SlimPod(unlabelled))
	s := f.Snapshot()
	var keys []string
	for _, sb := range s.Sandboxes() {
		keys = append(keys, sb.Key)
	}
	// a-0 is in its BatchSandbox's row (phase deleted while none is seen).
	if !slices.Equal(keys, []string{bsKey("a"), plainKey("solo")}) {
		t.Fatalf("sandboxes %v, want a-0's BatchSandbox and the plain Pod", keys)
	}
	// A Pod allocated by a BatchSandbox stops being plain.
	f.UpsertBatchSandbox(pooledSandbox("b", ft0, []string{"solo"}, "10.0.0.3"))
	if f.Snapshot().Sandbox(plainKey("solo")) != nil {
		t.Error("allocated Pod still a plain sandbox")
	}
	f.DeleteBatchSandbox(ns, "b")
	if f.Snapshot().Sandbox(plainKey("solo")) == nil {
		t.Error("released Pod not plain again")
	}
	f.DeletePod(model.SlimPod(plain))
	if f.Snapshot().Sandbox(plainKey("solo")) != nil {
		t.Error("deleted plain Pod still a sandbox")
	}
}

func TestCustomPodSelector(t *testing.T) {
	c := &testClock{now: ft0}
	sel, err := labels.Parse("team=ml")
	if err != nil {
		t.Fatal(err)
	}
	f := New(Options{Now: c.Now, PodSelector: sel})
	f.SetStatus(model.SourceStatus{Synced: true})
	p := modeltest.RunningPod("m", "um", "10.0.0.1")
	p.Labels = map[string]string{"team": "ml"}
	f.UpsertPod(model.SlimPod(p))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("other", "uo", "10.0.0.2")))
	if s := f.Snapshot(); len(s.Sandboxes()) != 1 || s.Sandboxes()[0].Key != plainKey("m") {
		t.Errorf("sandboxes %v", s.Sandboxes())
	}
}

func TestIPHistory(t *testing.T) {
	f, c := newSyncedFleet(t)
	const ip = "10.0.3.7"
	f.UpsertBatchSandbox(batchSandbox("a", ip))
	a := modeltest.RunningPod("a-0", "ua", "", modeltest.OwnedBy("a", 0))
	modeltest.Initializing(a)
	f.UpsertPod(model.SlimPod(a))
	c.Advance(time.Second)
	f.UpsertPod(sandboxPod("a", "ua", ip))
	holdA := c.now
	c.Advance(38 * time.Second)
	f.UpsertPod(sandboxPod("a", "ua", ip, modeltest.Exited(0, "Completed")))
	endA := c.now
	before := f.Snapshot()
	c.Advance(35 * time.Second)
	linkedSandbox(f, "b", "ub", ip)
	holdB := c.now
	h := f.Snapshot().IPHistory(ip)
	if len(h) != 2 {
		t.Fatalf("history %+v", h)
	}
	if h[0].Pod != "a-0" || h[0].UID != "ua" || h[0].Sandbox != bsKey("a") || !h[0].From.Equal(holdA) || h[0].To == nil || !h[0].To.Equal(endA) {
		t.Errorf("first holding %+v", h[0])
	}
	if h[1].Pod != "b-0" || h[1].Sandbox != bsKey("b") || !h[1].From.Equal(holdB) || h[1].To != nil {
		t.Errorf("second holding %+v", h[1])
	}
	if old := before.IPHistory(ip); len(old) != 1 || old[0].Pod != "a-0" {
		t.Errorf("history seen through the earlier snapshot: %+v", old)
	}
	sl := f.Snapshot().Sandbox(bsKey("a")).PrimarySlot()
	if sl.Holder == nil || !sl.Holder.Since.Equal(holdB) {
		t.Errorf("holder %+v, want since %v", sl.Holder, holdB)
	}
}

func TestIPHistoryIsBounded(t *testing.T) {
	h := newIPHistory()
	at := ft0
	for i := 0; i < 100; i++ {
		uid := fmt.Sprint(i)
		h.open("10.0.0.1", nn(ns, "p"), uid, "", at, uint64(i+1))
		at = at.Add(time.Second)
		h.close("10.0.0.1", uid, at, uint64(i+1))
	}
	got := h.at("10.0.0.1", 1000)
	if len(got) != ipHistoryPerIP || got[len(got)-1].UID != "99" {
		t.Fatalf("kept %d holdings, last %+v", len(got), got[len(got)-1])
	}
	h.open("10.0.0.2", nn(ns, "q"), "q", "", at, 200) // still held: survives pruning
	h.prune(at.Add(ipHistoryRetention + time.Minute))
	if h.at("10.0.0.1", 1000) != nil {
		t.Error("an IP nobody held for the retention period survived")
	}
	if len(h.at("10.0.0.2", 1000)) != 1 {
		t.Error("an IP still held was pruned")
	}
}

func TestChangesCoalesce(t *testing.T) {
	f, _ := newSyncedFleet(t)
	<-f.Changes() // SetStatus
	for i := 0; i < 100; i++ {
		f.UpsertPod(model.SlimPod(modeltest.RunningPod(fmt.Sprint("p", i), fmt.Sprint("u", i), "")))
	}
	select {
	case <-f.Changes():
	default:
		t.Fatal("no notification after changes")
	}
	select {
	case <-f.Changes():
		t.Fatal("100 changes were not coalesced into one notification")
	default:
	}
}

// TestConcurrentReaders runs writers and readers together (meaningful under -race).
func TestConcurrentReaders(t *testing.T) {
	f, _ := newSyncedFleet(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := f.Snapshot()
				for _, sb := range s.Sandboxes() {
					_ = sb.Identity()
					_ = s.SandboxOfPod(sb.Namespace(), sb.Name()+"-0")
				}
				_ = s.IPHistory("10.0.0.1")
			}
		}()
	}
	for i := 0; i < 300; i++ {
		name := fmt.Sprint("s", i%20)
		ip := fmt.Sprint("10.0.0.", i%7)
		f.UpsertBatchSandbox(batchSandbox(name, ip))
		p := modeltest.RunningPod(name+"-0", fmt.Sprint("u", i), ip, modeltest.OwnedBy(name, 0))
		f.UpsertPod(model.SlimPod(p))
		if i%3 == 0 {
			f.DeletePod(model.SlimPod(p))
		}
		if i%11 == 0 {
			f.DeleteBatchSandbox(ns, name)
		}
		f.Tick()
	}
	close(stop)
	wg.Wait()
}

// TestIndexesStayFlat: churn of create/delete leaves no residue in the indexes.
func TestIndexesStayFlat(t *testing.T) {
	f, c := newSyncedFleet(t)
	for i := 0; i < 500; i++ {
		name := fmt.Sprint("s", i)
		ip := fmt.Sprint("10.0.", i%3, ".", i%250)
		f.UpsertBatchSandbox(batchSandbox(name, ip))
		p := modeltest.RunningPod(name+"-0", fmt.Sprint("u", i), ip, modeltest.OwnedBy(name, 0))
		f.UpsertPod(model.SlimPod(p))
		f.Snapshot()
		c.Advance(time.Second)
		f.DeleteBatchSandbox(ns, name)
		f.DeletePod(model.SlimPod(p))
	}
	s := f.Snapshot()
	if len(s.Sandboxes()) != 0 || len(s.Pods()) != 0 {
		t.Fatalf("%d sandboxes %d pods left", len(s.Sandboxes()), len(s.Pods()))
	}
	for name, n := range map[string]int{"pods": len(f.pods), "ipLive": f.history.liveKeys(), "bsOwned": f.bsOwned.Keys(),
		"claims": f.claims.Keys(), "podLinks": f.podLinks.Keys(), "ipWatch": f.history.watchKeys(), "sandboxes": len(f.sandboxes),
		"order": len(f.order), "podOrder": len(f.podOrder), "queue": len(f.queue), "selEq": f.selEq.Keys(), "timers": len(f.timers)} {
		if n != 0 {
			t.Errorf("%s holds %d entries after full churn", name, n)
		}
	}
	// The IPs' nodes stay while the history remembers them, and go with it.
	if f.history.len() == 0 || len(f.history.ips) != f.history.len() {
		t.Errorf("%d IP nodes for %d remembered IPs", len(f.history.ips), f.history.len())
	}
	c.Advance(ipHistoryRetention + time.Minute)
	f.Tick()
	if n := len(f.history.ips); n != 0 || f.history.len() != 0 {
		t.Errorf("%d IP nodes, %d remembered IPs after the retention period", n, f.history.len())
	}
}

// TestRandomChurnInvariants drives random events and checks after each
// Snapshot that the published lists agree with the Fleet's own records:
// sorted, complete, current, and nothing removed left behind.
func TestRandomChurnInvariants(t *testing.T) {
	f, c := newSyncedFleet(t)
	rng := newTestRand(7)
	live := map[string]*corev1.Pod{}
	var recent []*Snapshot // for ChangedSince
	caughtUp := 0
	for step := 0; step < 3000; step++ {
		i := rng.Intn(40)
		name := fmt.Sprint("s", i)
		ip := fmt.Sprint("10.0.0.", rng.Intn(12))
		switch rng.Intn(8) {
		case 0, 1:
			f.UpsertBatchSandbox(batchSandbox(name, ip))
		case 2:
			f.DeleteBatchSandbox(ns, name)
		case 3, 4:
			opts := []modeltest.PodOption{modeltest.OwnedBy(name, 0)}
			if rng.Intn(4) == 0 {
				opts = append(opts, modeltest.Exited(1, "Error"))
			}
			p := modeltest.RunningPod(name+"-0", fmt.Sprint("u", step), ip, opts...)
			live[p.Name] = p
			f.UpsertPod(model.SlimPod(p))
		case 5:
			if p := live[name+"-0"]; p != nil {
				f.DeletePod(model.SlimPod(p))
				delete(live, p.Name)
			}
		case 6:
			p := modeltest.RunningPod(fmt.Sprint("plain", i), fmt.Sprint("pu", step), ip)
			live[p.Name] = p
			f.UpsertPod(model.SlimPod(p))
		case 7:
			f.UpsertBatchSandbox(pooledSandbox(fmt.Sprint("pooled", i%5), ft0.Add(time.Duration(i)*time.Second), []string{fmt.Sprint("plain", i)}, ip))
		}
		c.Advance(100 * time.Millisecond)
		if step%7 != 0 {
			continue
		}
		s := f.Snapshot()
		for _, prev := range recent {
			positions, ok := s.ChangedSince(prev)
			if !ok {
				continue
			}
			caughtUp++
			for j := range s.Sandboxes() {
				if s.Sandboxes()[j] != prev.Sandboxes()[j] && !slices.Contains(positions, j) {
					t.Fatalf("step %d: position %d changed since version %d but ChangedSince(%v) misses it", step, j, prev.Version, positions)
				}
			}
		}
		if recent = append(recent, s); len(recent) > 4 {
			recent = recent[1:]
		}
		f.mu.Lock()
		if len(s.Sandboxes()) != len(f.sandboxes) {
			t.Fatalf("step %d: snapshot has %d sandboxes, fleet %d", step, len(s.Sandboxes()), len(f.sandboxes))
		}
		for j, sb := range s.Sandboxes() {
			if j > 0 && s.Sandboxes()[j-1].Key >= sb.Key {
				t.Fatalf("step %d: not sorted at %d", step, j)
			}
			if e := f.sandboxes[sb.Key]; e == nil || e.sb != sb {
				t.Fatalf("step %d: %s is not the current value", step, sb.Key)
			}
		}
		linked := 0
		for k, pe := range f.pods {
			if f.hasLinks(k) {
				linked++
			}
			// A Pod's only link is in its entry, never in the index.
			if _, lone := f.podLinks.Lone(k); lone || pe.link != nil && f.podLinks.Has(k) {
				t.Fatalf("step %d: pod %s: entry link %v, index %v", step, k, pe.link != nil, f.podLinks.Values(k))
			}
		}
		// The links are exactly the sandboxes' slots.
		want := map[string][]*sbEntry{}
		for _, e := range f.sandboxes {
			for _, name := range e.linkedNames(nil) {
				k := nn(e.ns(), name)
				want[k] = append(want[k], e)
			}
		}
		for k, es := range want {
			got := slices.Collect(f.linksOf(k))
			if len(got) != len(es) || slices.ContainsFunc(es, func(e *sbEntry) bool { return !slices.Contains(got, e) }) {
				t.Fatalf("step %d: links of %s: %d sandboxes, want %d", step, k, len(got), len(es))
			}
		}
		if n := f.podLinks.Keys(); n > len(want) {
			t.Fatalf("step %d: the link index has %d keys, %d are linked", step, n, len(want))
		}
		if len(s.Pods()) != linked {
			t.Fatalf("step %d: snapshot has %d pods, %d linked", step, len(s.Pods()), linked)
		}
		for j, p := range s.Pods() {
			pe := f.pods[nn(p.Namespace, p.Name)]
			if pe == nil || pe.pod != p {
				t.Fatalf("step %d: pod %s is not the current value", step, p.Name)
			}
			if j > 0 && comparePodEntries(&podEntry{pod: s.Pods()[j-1]}, &podEntry{pod: p}) >= 0 {
				t.Fatalf("step %d: pods not sorted at %d", step, j)
			}
		}
		f.mu.Unlock()
	}
	if caughtUp == 0 {
		t.Fatal("ChangedSince never applied: the check above proved nothing")
	}
	t.Logf("ChangedSince applied %d times", caughtUp)
}

// ChangedSince names the positions replaced since an older Snapshot, and
// refuses whenever positions may have shifted or the log does not reach back.
func TestChangedSince(t *testing.T) {
	f, _ := newSyncedFleet(t)
	for _, name := range []string{"a", "b", "c", "d"} {
		f.UpsertBatchSandbox(batchSandbox(name, "10.0.0."+name))
	}
	s1 := f.Snapshot()
	f.UpsertPod(sandboxPod("c", "uc", "10.0.1.3"))
	f.UpsertPod(sandboxPod("a", "ua", "10.0.1.1"))
	s2 := f.Snapshot()
	got, ok := s2.ChangedSince(s1)
	if !ok || !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("ChangedSince = %v, %v; want [0 2], true", got, ok)
	}
	if got, ok := s2.ChangedSince(s2); !ok || len(got) != 0 {
		t.Fatalf("ChangedSince(itself) = %v, %v; want none, true", got, ok)
	}
	if _, ok := s1.ChangedSince(s2); ok {
		t.Fatal("ChangedSince a newer snapshot")
	}
	f.UpsertBatchSandbox(batchSandbox("bb", ""))
	s3 := f.Snapshot()
	if _, ok := s3.ChangedSince(s2); ok {
		t.Fatal("ChangedSince across an added sandbox")
	}
	f.DeleteBatchSandbox(ns, "bb")
	if _, ok := f.Snapshot().ChangedSince(s3); ok {
		t.Fatal("ChangedSince across a removed sandbox")
	}
	s4 := f.Snapshot()
	other, _ := newSyncedFleet(t)
	for _, name := range []string{"a", "b", "c", "d"} {
		other.UpsertBatchSandbox(batchSandbox(name, "10.0.0."+name))
	}
	if _, ok := other.Snapshot().ChangedSince(s4); ok {
		t.Fatal("ChangedSince across fleets")
	}
	// Disconnected: every row is masked, then unmasked.
	lost := ft0
	f.SetStatus(model.SourceStatus{Synced: true, DisconnectedSince: &lost})
	s5 := f.Snapshot()
	if _, ok := s5.ChangedSince(s4); ok {
		t.Fatal("ChangedSince into a masked snapshot")
	}
	f.SetStatus(model.SourceStatus{Synced: true})
	s6 := f.Snapshot()
	if _, ok := s6.ChangedSince(s5); ok {
		t.Fatal("ChangedSince out of a masked snapshot")
	}
	// A log that overflowed no longer reaches back.
	for i := 0; i <= maxChangeLog; i++ {
		f.UpsertPod(sandboxPod("d", fmt.Sprint("ud", i%2), "10.0.1.4"))
	}
	if _, ok := f.Snapshot().ChangedSince(s6); ok {
		t.Fatal("ChangedSince past an overflowed log")
	}
}

// A change of status alone (the server answered, AsOf moved) publishes a
// new Snapshot that shares its predecessor's sandbox list, so readers can
// tell by identity that no sandbox changed.
func TestStatusOnlyChangeSharesTheSandboxList(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
	s1 := f.Snapshot()
	st := s1.Status
	st.AsOf = st.AsOf.Add(time.Minute)
	f.SetStatus(st)
	f.Tick()
	s2 := f.Snapshot()
	if s2 == s1 || !s2.Status.AsOf.Equal(st.AsOf) {
		t.Fatal("the status change did not publish a new snapshot")
	}
	if !s2.SameSandboxes(s1) {
		t.Fatal("a status-only change published a new sandbox list")
	}
	f.UpsertPod(sandboxPod("a", "ua", "10.0.0.1"))
	s3 := f.Snapshot()
	if s3.SameSandboxes(s2) || s3.SandboxAt(0) == s2.SandboxAt(0) {
		t.Fatal("a sandbox change in place reused the published list")
	}
	f.UpsertBatchSandbox(batchSandbox("b", "10.0.0.2"))
	if s4 := f.Snapshot(); s4.SameSandboxes(s3) {
		t.Fatal("an added sandbox reused the published list")
	}
}

// A pooled Pod listed by two sandboxes belongs to the newer; with equal
// creation times (whole seconds) neither can be proven its owner, and one
// labelled for another sandbox belongs to that one.
func TestPooledPodOwnership(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("warm-1", "uw", "10.0.0.9", modeltest.PooledIn("pool-a"))))
	f.UpsertBatchSandbox(pooledSandbox("old", ft0, []string{"warm-1"}, "10.0.0.9"))
	if id := mustSandbox(t, f, bsKey("old")).Identity(); id != model.IdentityOK {
		t.Fatalf("sole claimer: %s", id)
	}
	f.UpsertBatchSandbox(pooledSandbox("tie", ft0, []string{"warm-1"}, "10.0.0.9"))
	for _, k := range []string{"old", "tie"} {
		if id := mustSandbox(t, f, bsKey(k)).Identity(); id == model.IdentityOK {
			t.Errorf("%s holds a Pod claimed as late by another sandbox", k)
		}
	}
	f.DeleteBatchSandbox(ns, "tie")
	f.UpsertBatchSandbox(pooledSandbox("new", ft0.Add(time.Minute), []string{"warm-1"}, "10.0.0.9"))
	if id := mustSandbox(t, f, bsKey("old")).Identity(); id == model.IdentityOK {
		t.Error("the older claimer still holds the Pod")
	}
	if id := mustSandbox(t, f, bsKey("new")).Identity(); id != model.IdentityOK {
		t.Errorf("the newer claimer: %s", id)
	}
	f.DeleteBatchSandbox(ns, "new")
	relabelled := modeltest.RunningPod("warm-1", "uw", "10.0.0.9", modeltest.PooledIn("pool-a"))
	relabelled.Labels[osv1.LabelBatchSandboxName] = "someone-else"
	f.UpsertPod(model.SlimPod(relabelled))
	if id := mustSandbox(t, f, bsKey("old")).Identity(); id == model.IdentityOK {
		t.Error("a Pod labelled for another sandbox is still held by the old claimer")
	}
}

// A derived row shares its source's ObjectMeta, whatever the engine.
func TestRowSharesSourceMeta(t *testing.T) {
	f, _ := newSyncedFleet(t)
	b := batchSandbox("a")
	f.UpsertBatchSandbox(b)
	p := model.SlimPod(modeltest.RunningPod("p", "up", "10.0.0.9"))
	f.UpsertPod(p)
	ag := &model.AgentSandbox{ObjectMeta: model.ObjectMeta{Namespace: ns, Name: "ag", UID: "u-ag"}}
	f.UpsertAgentSandbox(ag)
	for key, meta := range map[string]*model.ObjectMeta{bsKey("a"): &b.ObjectMeta, plainKey("p"): &p.ObjectMeta, agentKey("ag"): &ag.ObjectMeta} {
		if sb := mustSandbox(t, f, key); sb.Meta != meta {
			t.Errorf("%s: Meta %p, want the source's %p", key, sb.Meta, meta)
		}
	}
}

// A plain-Pod sandbox's deletion is its Pod's, reported on its slot: the
// row says nothing of an object being deleted, though its Meta (the Pod's)
// has a deletionTimestamp and finalizers.
func TestPlainPodRowHasNoObjectDeletion(t *testing.T) {
	f, _ := newSyncedFleet(t)
	pod := modeltest.RunningPod("p", "up", "10.0.0.9", modeltest.DeletingAt(ft0, 30))
	pod.Finalizers = []string{"example.com/hold"}
	f.UpsertPod(model.SlimPod(pod))
	sb := mustSandbox(t, f, plainKey("p"))
	if sb.Meta.DeletionTimestamp == nil {
		t.Fatal("the Pod's meta lost its deletionTimestamp")
	}
	if sb.DeletingSince() != nil || sb.Finalizers() != nil {
		t.Errorf("plain-Pod row: DeletingSince %v, Finalizers %v, want none", sb.DeletingSince(), sb.Finalizers())
	}

	// The same meta on an engine object is that object's deletion.
	del := metav1.NewTime(ft0.Add(time.Minute))
	b := batchSandbox("a")
	b.DeletionTimestamp = &del
	b.SetFinalizers([]string{"example.com/hold"})
	f.UpsertBatchSandbox(b)
	sb = mustSandbox(t, f, bsKey("a"))
	if d := sb.DeletingSince(); d == nil || !d.Equal(del.Time) || len(sb.Finalizers()) != 1 {
		t.Errorf("BatchSandbox row: DeletingSince %v, Finalizers %v", d, sb.Finalizers())
	}
}

// Through the Fleet: updates in place after a Snapshot leave it as it was,
// at a size that spans several chunks.
func TestSnapshotsStayImmutableAcrossChunks(t *testing.T) {
	f, _ := newSyncedFleet(t)
	n := 3 * mem.ChunkSize
	for i := range n {
		f.UpsertBatchSandbox(batchSandbox(fmt.Sprintf("s%04d", i), fmt.Sprintf("10.0.%d.%d", i/250, i%250)))
	}
	old := f.Snapshot()
	kept := slices.Clone(old.Sandboxes())
	for _, i := range []int{3, mem.ChunkSize + 1, n - 1} {
		name := fmt.Sprintf("s%04d", i)
		f.UpsertPod(model.SlimPod(modeltest.RunningPod(name+"-0", "u"+name, fmt.Sprintf("10.0.%d.%d", i/250, i%250), modeltest.OwnedBy(name, 0))))
	}
	now := f.Snapshot()
	if !slices.Equal(old.Sandboxes(), kept) {
		t.Fatal("an older Snapshot changed")
	}
	positions, ok := now.ChangedSince(old)
	if !ok || !slices.Equal(positions, []int{3, mem.ChunkSize + 1, n - 1}) {
		t.Fatalf("ChangedSince = %v, %v", positions, ok)
	}
	for i := range n {
		if changedHere := slices.Contains(positions, i); (now.SandboxAt(i) != old.SandboxAt(i)) != changedHere {
			t.Fatalf("position %d: changed %v, listed %v", i, now.SandboxAt(i) != old.SandboxAt(i), changedHere)
		}
	}
}
