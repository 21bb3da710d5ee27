package fleet

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// The seed's pile-up: callers delete sandboxes, their Pods stay
// Terminating. Each deleted sandbox keeps a row, its Pod stays listed,
// STUCK_TERMINATING names both; the row goes with the Pod and becomes the
// sandbox's own again when an object of that name comes back.
func TestDeletedSandboxKeepsARowWhileItsPodRemains(t *testing.T) {
	f, clock := newSyncedFleet(t)
	linkedSandbox(f, "a", "ua", "", modeltest.Initializing, modeltest.DeletingAt(ft0, 30))
	linkedSandbox(f, "b", "ub", "10.0.0.2")

	f.DeleteBatchSandbox(ns, "a")
	f.DeleteBatchSandbox(ns, "b") // its Pod is not deleting yet, but names it
	clock.now = ft0.Add(10 * time.Minute)
	f.Tick()
	snap := f.Snapshot()
	a := snap.Sandbox(bsKey("a"))
	if a == nil {
		t.Fatal("the deleted sandbox a has no row while its Pod remains")
	}
	if a.EnginePhase != model.PhaseDeleted || a.State != model.StateTerminating || a.Name() != "a" || a.Namespace() != ns {
		t.Errorf("row a: phase %q state %q name %q ns %q", a.EnginePhase, a.State, a.Name(), a.Namespace())
	}
	if sl := a.PrimarySlot(); sl == nil || sl.PodName != "a-0" || sl.Stuck == nil || !sl.Stuck.PodInitializing {
		t.Fatalf("row a's slot %+v", a.PrimarySlot())
	}
	var stuck *model.Notice
	for i := range a.Notices {
		if a.Notices[i].Code == model.CodeStuckTerminating {
			stuck = &a.Notices[i]
		}
	}
	if stuck == nil || !strings.Contains(stuck.Message, "a-0") || !strings.Contains(stuck.Message, "BatchSandbox a is deleted") ||
		!strings.Contains(stuck.Message, "PodInitializing") {
		t.Errorf("STUCK_TERMINATING: %+v", stuck)
	}
	for _, n := range a.Notices {
		if n.Code == model.CodeNotExecReady || n.Code == model.CodeStateMismatch {
			t.Errorf("deleted sandbox has %s", n.Code)
		}
	}
	b := snap.Sandbox(bsKey("b"))
	if b == nil {
		t.Fatal("the Pod of deleted sandbox b is in no row")
	}
	// b's Pod is not even deleting: a live Pod of a deleted sandbox is
	// told as well, not only a stuck one.
	var live *model.Notice
	for i := range b.Notices {
		if b.Notices[i].Code == model.CodeStateMismatch {
			live = &b.Notices[i]
		}
	}
	if live == nil || live.Pod != "b-0" || live.Severity != model.SeverityWarning ||
		!strings.Contains(live.Message, "BatchSandbox b is deleted but Pod b-0 is still Running") || len(live.Evidence) != 2 {
		t.Errorf("row b (deleted, its Pod live): notices %+v; want STATE_MISMATCH naming b-0", b.Notices)
	}
	if sb := snap.SandboxOfPod(ns, "a-0"); sb == nil || sb.Key != bsKey("a") {
		t.Errorf("SandboxOfPod(a-0) = %v", sb)
	}
	var pods []string
	for _, p := range snap.Pods() {
		pods = append(pods, p.Name)
	}
	if strings.Join(pods, ",") != "a-0,b-0" {
		t.Errorf(":pods lists %v", pods)
	}

	// The Pod's final deletion takes the row with it.
	f.DeletePod(model.SlimPod(modeltest.RunningPod("a-0", "ua", "")))
	if f.Snapshot().Sandbox(bsKey("a")) != nil {
		t.Error("row a stayed after its last Pod went")
	}
	// An object of the same name comes back: the row is its again.
	f.UpsertBatchSandbox(batchSandbox("b", "10.0.0.2"))
	if b := f.Snapshot().Sandbox(bsKey("b")); b == nil || b.EnginePhase != model.PhaseSucceed || b.State != model.StateRunning {
		t.Errorf("row b after its object came back: %+v", b)
	}
	f.DeletePod(model.SlimPod(modeltest.RunningPod("b-0", "ub", "")))
	f.DeleteBatchSandbox(ns, "b")
	if n := f.Snapshot().NumSandboxes(); n != 0 {
		t.Errorf("%d rows left, want 0", n)
	}
}

// A Pod seen whose sandbox was never seen (deleted before sandscope
// started) gets the row too; a pool Pod still carrying a deleted sandbox's
// name label goes back to its Pool and does not, until it is itself deleted.
func TestPodOfUnseenSandboxAndPoolPods(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertPod(sandboxPod("gone", "ug", "10.0.0.9", modeltest.DeletingAt(ft0, 30)))
	if f.Snapshot().Sandbox(bsKey("gone")) == nil {
		t.Error("no row for the Pod of an unseen BatchSandbox")
	}
	pool := modeltest.RunningPod("pool-x1", "up", "10.0.0.10", func(p *corev1.Pod) {
		p.Labels[osv1.LabelBatchSandboxName] = "released"
		p.OwnerReferences = append(p.OwnerReferences, ownerRef("Pool", "pool"))
	})
	f.UpsertPod(model.SlimPod(pool))
	if f.Snapshot().Sandbox(bsKey("released")) != nil {
		t.Error("an idle pool Pod labelled with a deleted sandbox's name made a row")
	}
	modeltest.DeletingAt(ft0, 30)(pool)
	f.UpsertPod(model.SlimPod(pool))
	if f.Snapshot().Sandbox(bsKey("released")) == nil {
		t.Error("a deleting pool Pod labelled with a deleted sandbox's name made no row")
	}
}

// An agent Sandbox deleted while its Pod terminates keeps a row too.
func TestDeletedAgentSandboxKeepsARow(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: model.ObjectMeta{Name: "ag", Namespace: ns, UID: "uag"}})
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("ag", "up", "10.0.0.3", func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, ownerRef("Sandbox", "ag"))
	}, modeltest.DeletingAt(ft0, 30))))
	f.DeleteAgentSandbox(ns, "ag")
	sb := f.Snapshot().Sandbox(agentKey("ag"))
	if sb == nil || sb.EnginePhase != model.PhaseDeleted || sb.PrimarySlot() == nil || sb.PrimarySlot().PodName != "ag" {
		t.Fatalf("row of the deleted agent Sandbox: %+v", sb)
	}
	f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: model.ObjectMeta{Name: "ag", Namespace: ns, UID: "uag2"}})
	if sb := f.Snapshot().Sandbox(agentKey("ag")); sb == nil || sb.EnginePhase == model.PhaseDeleted {
		t.Errorf("row after the agent Sandbox came back: %+v", sb)
	}
}

func ownerRef(kind, name string) metav1.OwnerReference {
	api := "sandbox.opensandbox.io/v1alpha1"
	if kind == "Sandbox" {
		api = "agents.x-k8s.io/v1beta1"
	}
	return metav1.OwnerReference{APIVersion: api, Kind: kind, Name: name, UID: types.UID("uid-" + name)}
}

// Pods listed before their sandboxes at start-up make no rows that the
// sandboxes then replace; those whose sandbox never comes get theirs at the sync.
func TestDeletedSandboxRowsWaitForTheSync(t *testing.T) {
	f := New(Options{Now: func() time.Time { return ft0 }})
	f.UpsertPod(sandboxPod("a", "ua", "10.0.0.1"))
	f.UpsertPod(sandboxPod("gone", "ug", "10.0.0.2", modeltest.DeletingAt(ft0, 30)))
	f.mu.Lock()
	rows := len(f.sandboxes)
	f.mu.Unlock()
	if rows != 0 {
		t.Errorf("%d rows made before the sync", rows)
	}
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
	f.SetStatus(model.SourceStatus{Synced: true})
	snap := f.Snapshot()
	if a := snap.Sandbox(bsKey("a")); a == nil || a.EnginePhase != model.PhaseSucceed {
		t.Errorf("row a: %+v", a)
	}
	if g := snap.Sandbox(bsKey("gone")); g == nil || g.EnginePhase != model.PhaseDeleted || g.PrimarySlot().PodName != "gone-0" {
		t.Errorf("row of the sandbox never seen: %+v", g)
	}
}
