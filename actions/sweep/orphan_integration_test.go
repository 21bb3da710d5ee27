package sweep_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/output/outputtest"
)

// TestSweepDeletedSandboxesPods replays the pile-up of deleted sandboxes' Pods on the real API
// server: callers delete sandboxes whose Pods cannot finish terminating
// (two still pulling, main container in PodInitializing; one running). The
// sandbox objects are gone; the Pods must still be swept: a row per deleted
// sandbox, STUCK_TERMINATING naming the Pod and the deleted sandbox, and
// the summary's stuck block counting them with the one whose sandbox lives.
func TestSweepDeletedSandboxesPods(t *testing.T) {
	f := newFleet(t)
	grace1 := int64(1)
	plain := "python:3.12-slim"
	withGrace := func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &grace1 }
	var stuckAt time.Time
	hold := func(name string) {
		d := f.k.DeleteHeld(f.ns, name+"-0")
		t.Cleanup(func() { f.k.Release(f.ns, name+"-0") })
		stuckAt = d.DeletionTimestamp.Add(time.Duration(grace1)*time.Second + time.Second)
	}
	for _, name := range []string{"gone-a", "gone-b", "alive"} {
		f.sandbox(name, plain, userCommand, withGrace)
		f.k.Schedule(f.ns, name+"-0", testcluster.DefaultNode)
	}
	f.k.SetWaiting(f.ns, "gone-a-0", osv1.ContainerSandbox, "PodInitializing", "")
	f.k.SetWaiting(f.ns, "alive-0", osv1.ContainerSandbox, "PodInitializing", "")
	f.running("gone-b", "10.1.0.41", "Succeed")
	for _, name := range []string{"gone-a", "gone-b", "alive"} {
		hold(name)
	}
	for _, name := range []string{"gone-a", "gone-b"} {
		if err := f.c.Dynamic.Resource(testcluster.BatchSandboxGVR).Namespace(f.ns).Delete(testcluster.Context(t), name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting BatchSandbox %s: %v", name, err)
		}
	}
	// Time itself must pass: a deleting Pod is stuck once its grace period
	// and --stuck-after are over on the clock sweep reads.
	time.Sleep(time.Until(stuckAt) + 500*time.Millisecond)

	out, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--stuck-after", "1s", "--timeout", "30s", "--fail-on", "warning")
	if code != 1 || errOut != "" { // findings at or above --fail-on
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	contract := outputtest.CheckJSONContract(t, []byte(out))
	rep := decodeReport(t, out)
	if contract.Summary.Sandboxes != 3 || contract.Summary.Pods != 3 {
		t.Errorf("summary: %d sandboxes, %d pods; want 3 and 3 (the deleted sandboxes' Pods included)", contract.Summary.Sandboxes, contract.Summary.Pods)
	}
	st := contract.Summary.Stuck
	if st.Pods != 3 || st.PodInitializing != 2 || st.AgeMedian <= 0 || st.AgeP90 < st.AgeMedian ||
		len(st.TopNodes) != 1 || st.TopNodes[0].Name != testcluster.DefaultNode || st.TopNodes[0].Pods != 3 ||
		len(st.TopImages) != 1 || st.TopImages[0].Name != plain || st.TopImages[0].Pods != 3 {
		t.Errorf("stuck block %+v", st)
	}
	got := map[string]model.Finding{}
	for _, fd := range findings(rep.Findings, model.CodeStuckTerminating) {
		got[fd.Sandbox] = fd
	}
	for name, initializing := range map[string]bool{"gone-a": true, "gone-b": false} {
		fd, ok := got[name]
		if !ok {
			t.Errorf("no STUCK_TERMINATING for the Pod of deleted sandbox %s; findings: %+v", name, rep.Findings)
			continue
		}
		if fd.Pod != name+"-0" || !strings.Contains(fd.Message, "BatchSandbox "+name+" is deleted") ||
			strings.Contains(fd.Message, "PodInitializing") != initializing || !hasEvidence(fd, model.Observed, "not found") {
			t.Errorf("%s: %+v", name, fd)
		}
	}
	if fd, ok := got["alive"]; !ok || strings.Contains(fd.Message, "deleted") {
		t.Errorf("alive's STUCK_TERMINATING: %+v (present %v)", fd, ok)
	}

	table, _, _ := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "--stuck-after", "1s")
	for _, want := range []string{"Stuck Terminating: 3 pods (2 in PodInitializing)", "top nodes: " + testcluster.DefaultNode + " 3"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
