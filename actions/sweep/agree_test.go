package sweep

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/model"
)

// The detail view and the sweep give one Pod one restart verdict. The case
// is one where the node decides it: the container exited 1 while its node
// was NotReady. With the node read, that is node trouble (RESTART_EVICTED);
// without it, nothing in the Pod explains the exit (RESTART_UNEXPLAINED).
// The detail view once classified without the node (and the siblings), the
// sweep with them; both now ask inspect.Forensics.
func TestDetailViewAndSweepAgreeOnNodeTrouble(t *testing.T) {
	t.Parallel()
	const i = 7
	p := synthPod(i, synthHealthy)
	cs := &p.Status.ContainerStatuses[0]
	finished := synthT0.Add(150 * time.Second)
	cs.RestartCount = 1
	cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
		StartedAt: metav1.NewTime(synthT0), FinishedAt: metav1.NewTime(finished)}
	cs.State.Running.StartedAt = metav1.NewTime(finished.Add(time.Second))

	f := newSynthFleet()
	f.UpsertBatchSandbox(synthBatchSandbox(i))
	f.UpsertPod(model.SlimPod(p))
	f.SetStatus(model.SourceStatus{Synced: true})
	snap := f.Snapshot()
	l := &memLookup{pods: map[string]*corev1.Pod{p.Namespace + "/" + p.Name: p}, events: map[string][]corev1.Event{},
		nodes: map[string]*corev1.Node{p.Spec.NodeName: {ObjectMeta: metav1.ObjectMeta{Name: p.Spec.NodeName},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
				Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.",
				LastTransitionTime: metav1.NewTime(finished.Add(-20 * time.Second))}}}}}}
	sb := snap.Sandbox(snap.Sandboxes()[0].Key)

	findings, _ := Analyze(context.Background(), "synth", snap, l, Options{})
	var swept []string
	for _, f := range findings {
		if f.Pod == p.Name && slices.Contains(restartCodes, f.Code) {
			swept = append(swept, f.Code)
		}
	}
	// What the detail view shows: the Backend's Restarts (cli/session.go).
	var detail []string
	notices, _ := inspect.NewForensics(snap, l).ExplainSandbox(context.Background(), sb)
	for _, n := range notices {
		detail = append(detail, n.Code)
	}
	if want := []string{model.CodeRestartEvicted}; !slices.Equal(swept, want) {
		t.Fatalf("sweep: %v, want %v", swept, want)
	}
	if !slices.Equal(detail, swept) {
		t.Fatalf("detail view: %v, sweep: %v; want the same verdict", detail, swept)
	}
}

var restartCodes = []string{model.CodeRestarted, model.CodeRestartOOM, model.CodeRestartLiveness,
	model.CodeRestartEvicted, model.CodeRestartUnexplained}
