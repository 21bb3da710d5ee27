package fleet

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/forensics"
	"github.com/sandscope/sandscope/model/modeltest"
)

func createdAt(t time.Time) modeltest.PodOption {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}

type wantEvidence struct {
	kind model.EvidenceKind
	text string // substring
}

func hasEvidence(n model.Notice, w wantEvidence) bool {
	return slices.ContainsFunc(n.Evidence, func(e model.Evidence) bool { return e.Kind == w.kind && strings.Contains(e.Text, w.text) })
}

func createEvent(sandbox, pod string, first, last time.Time, count int32) corev1.Event {
	return corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "BatchSandbox", Namespace: ns, Name: sandbox},
		Reason:         forensics.ReasonSuccessfulCreate, Message: "Created pod: " + pod, Type: corev1.EventTypeNormal,
		FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(last), Count: count,
	}
}

// A one-shot reader never saw the first UID: the Pod being much younger
// than its sandbox is the trace; a Pod created with its sandbox is not.
func TestPodRecreatedFromTimestamps(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertBatchSandbox(batchSandbox("fresh", "10.0.0.1"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("fresh-0", "u1", "10.0.0.1", modeltest.OwnedBy("fresh", 0), createdAt(ft0.Add(2*time.Second)))))
	f.UpsertBatchSandbox(batchSandbox("again", "10.0.0.2"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("again-0", "u2", "10.0.0.2", modeltest.OwnedBy("again", 0), createdAt(ft0.Add(40*time.Minute)))))

	if sb := mustSandbox(t, f, bsKey("fresh")); hasNotice(sb, model.CodePodRecreated) != nil {
		t.Errorf("POD_RECREATED on a Pod created with its sandbox: %v", noticeCodes(sb))
	}
	sb := mustSandbox(t, f, bsKey("again"))
	n := hasNotice(sb, model.CodePodRecreated)
	if n == nil || n.Severity != model.SeverityWarning || n.Pod != "again-0" || !strings.Contains(n.Message, "created 40m0s after its sandbox: re-created under the same name (inferred)") {
		t.Fatalf("POD_RECREATED: %+v (%v)", n, noticeCodes(sb))
	}
	for _, w := range []wantEvidence{{model.Observed, "sandbox created at 2026-11-29T17:24:05Z"}, {model.Observed, "Pod again-0 (uid u2) created at 2026-11-29T18:04:05Z, 40m0s after"},
		{model.Inferred, "in-container state (files, processes) is gone"}} {
		if !hasEvidence(*n, w) {
			t.Errorf("no %s evidence %q: %+v", w.kind, w.text, n.Evidence)
		}
	}

	// A pooled sandbox's Pod comes from its Pool: its age says nothing.
	f.UpsertBatchSandbox(pooledSandbox("pooled", ft0, []string{"pool-a-x"}, "10.0.0.3"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("pool-a-x", "u3", "10.0.0.3", modeltest.PooledIn("pool-a"), createdAt(ft0.Add(time.Hour)))))
	if sb := mustSandbox(t, f, bsKey("pooled")); hasNotice(sb, model.CodePodRecreated) != nil {
		t.Errorf("POD_RECREATED on a pooled sandbox: %v", noticeCodes(sb))
	}
}

// The engine's Ready condition: Ready long before the Pod existed is a
// re-creation even when the Pod is only a minute younger than its sandbox.
func TestPodRecreatedFromReadyCondition(t *testing.T) {
	f, _ := newSyncedFleet(t)
	b := batchSandbox("r", "10.0.0.4")
	b.SetReady(ft0.Add(70 * time.Second)) // late: kept
	f.UpsertBatchSandbox(b)
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("r-0", "u4", "10.0.0.4", modeltest.OwnedBy("r", 0), createdAt(ft0.Add(100*time.Second)))))
	n := hasNotice(mustSandbox(t, f, bsKey("r")), model.CodePodRecreated)
	if n == nil || !strings.Contains(n.Message, "created after its sandbox was already Ready") ||
		!hasEvidence(*n, wantEvidence{model.Observed, "Ready=True condition last transitioned at 2026-11-29T17:25:15Z"}) ||
		!hasEvidence(*n, wantEvidence{model.Inferred, "the sandbox was Ready before this Pod existed"}) {
		t.Fatalf("POD_RECREATED from Ready: %+v", n)
	}
	// An early Ready is not kept, so it cannot point anywhere.
	early := batchSandbox("e")
	early.SetReady(ft0.Add(5 * time.Second))
	if early.ReadySince() != nil || !reflect.DeepEqual(early, batchSandbox("e")) {
		t.Errorf("an early Ready transition was kept: %+v", early)
	}
}

// SuccessfulCreate Events: a Pod name created twice is an observed
// re-creation, added to the timestamp notice or standing alone.
func TestRecreatedFromEvents(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertBatchSandbox(batchSandbox("quick", "10.0.0.5"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("quick-0", "u5", "10.0.0.5", modeltest.OwnedBy("quick", 0), createdAt(ft0.Add(30*time.Second)))))
	f.UpsertBatchSandbox(batchSandbox("late", "10.0.0.6"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("late-0", "u6", "10.0.0.6", modeltest.OwnedBy("late", 0), createdAt(ft0.Add(time.Hour)))))
	events := []corev1.Event{
		createEvent("quick", "quick-0", ft0, ft0, 1), createEvent("quick", "quick-0", ft0.Add(30*time.Second), ft0.Add(30*time.Second), 1),
		createEvent("late", "late-0", ft0, ft0.Add(time.Hour), 2),         // aggregated: count 2
		createEvent("quick", "quick-0-other", ft0, ft0.Add(time.Hour), 5), // another Pod's name
	}
	quick := mustSandbox(t, f, bsKey("quick"))
	if hasNotice(quick, model.CodePodRecreated) != nil {
		t.Fatal("timestamps 30 s apart already flagged")
	}
	got, changed := forensics.RecreatedFromEvents(quick, events)
	if !changed || len(got) != 1 || !strings.Contains(got[0].Message, "created 2 times under the same name (observed)") ||
		!hasEvidence(got[0], wantEvidence{model.Observed, "2 SuccessfulCreate Event(s) for Pod quick-0"}) {
		t.Fatalf("quick: %+v", got)
	}
	got, changed = forensics.RecreatedFromEvents(mustSandbox(t, f, bsKey("late")), events)
	if !changed || len(got) != 1 || !strings.Contains(got[0].Message, "(observed: created 2 times)") ||
		!hasEvidence(got[0], wantEvidence{model.Observed, "sandbox created at"}) || !hasEvidence(got[0], wantEvidence{model.Observed, "2 SuccessfulCreate Event(s) for Pod late-0"}) {
		t.Fatalf("late: %+v", got)
	}
	if _, changed := forensics.RecreatedFromEvents(quick, events[3:]); changed {
		t.Error("another Pod's Events counted")
	}
}
