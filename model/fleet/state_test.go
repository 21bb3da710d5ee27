package fleet

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

func TestEffectiveStateAndEngineMismatch(t *testing.T) {
	const ip = "10.0.0.1"
	cases := []struct {
		name       string
		phase      string
		pod        *corev1.Pod // nil: no Pod
		deleting   bool
		wantState  model.EffectiveState
		wantCodes  []string
		avoidCodes []string
	}{
		{name: "Succeed and running", phase: model.PhaseSucceed, pod: modeltest.RunningPod("a-0", "ua", ip, modeltest.OwnedBy("a", 0)),
			wantState: model.StateRunning, avoidCodes: []string{model.CodeStateMismatch, model.CodeFailedSticky}},
		{name: "Succeed but the Pod exited", phase: model.PhaseSucceed, pod: modeltest.RunningPod("a-0", "ua", ip, modeltest.OwnedBy("a", 0), modeltest.Exited(0, "Completed")),
			wantState: model.StateDead, wantCodes: []string{model.CodeStateMismatch, model.CodePodDead}},
		{name: "Pending but the Pod exited (controller fell back)", phase: model.PhasePending, pod: modeltest.RunningPod("a-0", "ua", ip, modeltest.OwnedBy("a", 0), modeltest.Exited(0, "Completed")),
			wantState: model.StateDead, wantCodes: []string{model.CodeStateMismatch}},
		{name: "Allocated but the Pod exited", phase: model.PhaseAllocated, pod: modeltest.RunningPod("a-0", "ua", ip, modeltest.OwnedBy("a", 0), modeltest.MainTerminated),
			wantState: model.StateDead, wantCodes: []string{model.CodeStateMismatch}},
		{name: "Failed and sticky while Ready again", phase: model.PhaseFailed, pod: modeltest.RunningPod("a-0", "ua", ip, modeltest.OwnedBy("a", 0)),
			wantState: model.StateRunning, wantCodes: []string{model.CodeFailedSticky}, avoidCodes: []string{model.CodeStateMismatch}},
		{name: "Failed with an image pull error", phase: model.PhaseFailed, pod: func() *corev1.Pod {
			p := modeltest.RunningPod("a-0", "ua", ip, modeltest.OwnedBy("a", 0))
			modeltest.Initializing(p)
			p.Status.ContainerStatuses[0].State.Waiting.Reason = "ImagePullBackOff"
			return p
		}(), wantState: model.StateFailed, avoidCodes: []string{model.CodeFailedSticky}},
		{name: "Pending and no Pod yet", phase: model.PhasePending, wantState: model.StatePending, avoidCodes: []string{model.CodeStateMismatch}},
		{name: "object deleting", phase: model.PhaseSucceed, deleting: true, pod: modeltest.RunningPod("a-0", "ua", ip, modeltest.OwnedBy("a", 0)),
			wantState: model.StateTerminating, avoidCodes: []string{model.CodeStateMismatch}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newSyncedFleet(t)
			b := batchSandbox("a", ip)
			b.Phase = tc.phase
			if tc.pod == nil {
				b.Endpoints = nil
			}
			if tc.deleting {
				ts := metav1.NewTime(ft0)
				b.DeletionTimestamp = &ts
			}
			f.UpsertBatchSandbox(b)
			if tc.pod != nil {
				f.UpsertPod(model.SlimPod(tc.pod))
			}
			sb := mustSandbox(t, f, bsKey("a"))
			if sb.State != tc.wantState {
				t.Errorf("state %s, want %s", sb.State, tc.wantState)
			}
			if sb.EnginePhase != tc.phase {
				t.Errorf("engine phase %q, want %q", sb.EnginePhase, tc.phase)
			}
			for _, c := range tc.wantCodes {
				if hasNotice(sb, c) == nil {
					t.Errorf("missing %s; have %v", c, noticeCodes(sb))
				}
			}
			for _, c := range tc.avoidCodes {
				if hasNotice(sb, c) != nil {
					t.Errorf("unexpected %s; have %v", c, noticeCodes(sb))
				}
			}
		})
	}
}

func TestStuckTerminating(t *testing.T) {
	cases := []struct {
		name         string
		initializing bool
	}{{"main container running", false}, {"main container still in PodInitializing", true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, c := newSyncedFleet(t)
			f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
			p := modeltest.RunningPod("a-0", "ua", "10.0.0.1", modeltest.OwnedBy("a", 0), modeltest.DeletingAt(ft0, 30))
			p.Finalizers = []string{"example.com/hold"}
			if tc.initializing {
				modeltest.Initializing(p)
			}
			f.UpsertPod(model.SlimPod(p))
			if sl := mustSandbox(t, f, bsKey("a")).PrimarySlot(); sl.Stuck != nil {
				t.Fatal("stuck before grace + threshold")
			}
			c.Advance(30*time.Second + 5*time.Minute - time.Second)
			f.Tick()
			if sl := mustSandbox(t, f, bsKey("a")).PrimarySlot(); sl.Stuck != nil {
				t.Fatal("stuck one second early")
			}
			c.Advance(time.Second)
			f.Tick()
			sb := mustSandbox(t, f, bsKey("a"))
			sl := sb.PrimarySlot()
			if sl.Stuck == nil {
				t.Fatal("not stuck after grace + threshold")
			}
			if sl.Stuck.PodInitializing != tc.initializing || sl.Stuck.GraceSeconds != 30 || !sl.Stuck.DeletingSince.Equal(ft0) {
				t.Errorf("stuck info %+v", *sl.Stuck)
			}
			n := hasNotice(sb, model.CodeStuckTerminating)
			if n == nil || n.Severity != model.SeverityWarning {
				t.Fatalf("no STUCK_TERMINATING warning: %v", noticeCodes(sb))
			}
			if got := strings.Contains(n.Message, "PodInitializing"); got != tc.initializing {
				t.Errorf("message %q: mentions PodInitializing=%v, want %v", n.Message, got, tc.initializing)
			}
		})
	}
}

func TestGraceSecondsOrder(t *testing.T) {
	p := modeltest.RunningPod("a", "u", "")
	if g := graceSeconds(model.SlimPod(p)); g != 30 {
		t.Errorf("default grace %d", g)
	}
	tg := int64(120)
	p.Spec.TerminationGracePeriodSeconds = &tg
	if g := graceSeconds(model.SlimPod(p)); g != 120 {
		t.Errorf("spec grace %d", g)
	}
	dg := int64(5)
	p.DeletionGracePeriodSeconds = &dg
	if g := graceSeconds(model.SlimPod(p)); g != 5 {
		t.Errorf("deletion grace %d", g)
	}
}

func TestBatchSandboxStuckOnFinalizers(t *testing.T) {
	f, c := newSyncedFleet(t)
	b := batchSandbox("a")
	ts := metav1.NewTime(ft0)
	b.DeletionTimestamp = &ts
	b.SetFinalizers([]string{"pool.sandbox.opensandbox.io/pool-allocation"})
	f.UpsertBatchSandbox(b)
	if hasNotice(mustSandbox(t, f, bsKey("a")), model.CodeStuckTerminating) != nil {
		t.Fatal("stuck right away")
	}
	c.Advance(5 * time.Minute)
	f.Tick()
	sb := mustSandbox(t, f, bsKey("a"))
	n := hasNotice(sb, model.CodeStuckTerminating)
	if n == nil || !strings.Contains(n.Message, "pool-allocation") {
		t.Fatalf("no stuck notice naming the finalizer: %v", sb.Notices)
	}
	if sb.State != model.StateTerminating {
		t.Errorf("state %s", sb.State)
	}
}

// TestTickTouchesOnlyTimedSandboxes: Tick re-derives only sandboxes in the
// timer heap, so an unrelated sandbox keeps its pointer.
func TestTickTouchesOnlyTimedSandboxes(t *testing.T) {
	f, c := newSyncedFleet(t)
	linkedSandbox(f, "calm", "uc", "10.0.0.2")
	b := batchSandbox("exp", "10.0.0.3")
	exp := ft0.Add(time.Hour)
	b.ExpireTime = &exp
	f.UpsertBatchSandbox(b)
	before := f.Snapshot()
	c.Advance(49 * time.Minute)
	f.Tick()
	if f.Snapshot() != before {
		t.Fatal("Tick before any due time changed the snapshot")
	}
	c.Advance(time.Minute)
	f.Tick()
	after := f.Snapshot()
	if after.Sandbox(bsKey("calm")) != before.Sandbox(bsKey("calm")) {
		t.Error("Tick re-derived a sandbox with nothing timed")
	}
	soon := hasNotice(after.Sandbox(bsKey("exp")), model.CodeExpiringSoon)
	if soon == nil {
		t.Fatalf("no EXPIRING_SOON at expire-10m: %v", noticeCodes(after.Sandbox(bsKey("exp"))))
	}
	// The evidence is an observation: its time is when it was seen (now),
	// not the expiry it quotes, which would date it in the future.
	if len(soon.Evidence) != 1 || soon.Evidence[0].At == nil || !soon.Evidence[0].At.Equal(c.Now()) ||
		!strings.Contains(soon.Evidence[0].Text, exp.UTC().Format(time.RFC3339)) {
		t.Errorf("EXPIRING_SOON evidence %+v: want the expiry in its text and At %s", soon.Evidence, c.Now())
	}
	c.Advance(10 * time.Minute)
	f.Tick()
	n := hasNotice(f.Snapshot().Sandbox(bsKey("exp")), model.CodeExpiringSoon)
	if n == nil || !strings.Contains(n.Message, "expired at") {
		t.Fatalf("notice after the expiry: %+v", n)
	}
	if len(f.timers) != 0 {
		t.Errorf("timer heap still holds %d entries", len(f.timers))
	}
}

// A sandbox with a short lifetime is not EXPIRING_SOON at birth: only in
// the last half of its life (or the last ExpiringWithin, if shorter).
func TestShortLivedSandboxIsNotExpiringAtBirth(t *testing.T) {
	f, c := newSyncedFleet(t)
	b := batchSandbox("short", "10.0.0.4")
	b.SetCreated(ft0)
	exp := ft0.Add(5 * time.Minute)
	b.ExpireTime = &exp
	f.UpsertBatchSandbox(b)
	if n := hasNotice(mustSandbox(t, f, bsKey("short")), model.CodeExpiringSoon); n != nil {
		t.Fatalf("EXPIRING_SOON at birth of a 5-minute sandbox: %+v", n)
	}
	c.Advance(3 * time.Minute)
	f.Tick()
	if n := hasNotice(mustSandbox(t, f, bsKey("short")), model.CodeExpiringSoon); n == nil {
		t.Fatal("no EXPIRING_SOON in the last half of its life")
	}
}
