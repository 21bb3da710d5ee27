package sweep_test

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// TestSweepPodRecreated plays the real controller's answer to a Pod
// deletion: the Pod is gone, endpoints [] and replicas 0, then a Pod of the
// same name with a new UID, a second SuccessfulCreate Event, [""], the new
// IP. A one-shot sweep never saw the first UID; the Events claim it.
func TestSweepPodRecreated(t *testing.T) {
	f := newFleet(t)
	plain := "python:3.12-slim"
	pod := testcluster.SandboxPod("again-0", plain, userCommand...)
	bsbx := f.ct.Create(testcluster.BatchSandboxGVR, f.ns, testcluster.BatchSandbox("again", pod))
	testcluster.OwnedByBatchSandbox(pod, bsbx, 0)
	first := f.k.CreatePod(f.ns, pod.DeepCopy())
	f.ct.RecordPodCreated(f.ns, bsbx, "again-0")
	f.ct.SetEndpoints(f.ns, "again", "")
	f.running("again", "10.3.0.1", "Succeed")

	// A sandbox created once: no finding.
	f.sandbox("once", plain, userCommand, nil)
	f.ct.RecordPodCreated(f.ns, f.ct.Get(testcluster.BatchSandboxGVR, f.ns, "once"), "once-0")
	f.running("once", "10.3.0.2", "Succeed")

	// Someone deletes again-0; the controller re-creates it at once.
	f.k.ForceDelete(f.ns, "again-0")
	f.ct.SetEndpoints(f.ns, "again")
	f.ct.SetBatchSandboxStatus(f.ns, "again", map[string]any{"phase": "Pending", "replicas": 0, "allocated": 0, "ready": 0})
	second := f.k.CreatePod(f.ns, pod.DeepCopy())
	if second.UID == first.UID {
		t.Fatal("same UID after re-creation")
	}
	f.ct.RecordPodCreated(f.ns, bsbx, "again-0")
	f.ct.SetEndpoints(f.ns, "again", "")
	f.running("again", "10.3.0.3", "Succeed")

	out, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--fail-on", "warning")
	if code != 1 {
		t.Errorf("exit %d, want 1 (a warning); stderr %s", code, errOut)
	}
	rep := decodeReport(t, out)
	got := findings(rep.Findings, model.CodePodRecreated)
	if len(got) != 1 || got[0].Sandbox != "again" || got[0].Pod != "again-0" || got[0].Severity != model.SeverityWarning {
		t.Fatalf("POD_RECREATED findings %+v\n%s", got, out)
	}
	r := got[0]
	if !strings.Contains(r.Message, "created 2 times under the same name (claimed by SuccessfulCreate Events)") ||
		!hasEvidence(r, model.Claimed, `2 SuccessfulCreate Event(s) for Pod again-0 say the controller created a Pod of that name 2 times`) ||
		!hasEvidence(r, model.Claimed, `Events' claims (reported by "batchsandbox-controller")`) ||
		!hasEvidence(r, model.Observed, "the Pod now is uid "+string(second.UID)) ||
		!hasEvidence(r, model.Inferred, "in-container state") {
		t.Errorf("POD_RECREATED finding %+v", r)
	}
	for _, fd := range rep.Findings {
		if fd.Sandbox == "once" {
			t.Errorf("finding on a sandbox created once: %+v", fd)
		}
	}
}
