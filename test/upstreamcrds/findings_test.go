package upstreamcrds_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// TestSweepTasksAndRecreationWithTheRealCRDs: with the engines' own
// schemas in force, a pooled sandbox whose taskTemplate runs the user's
// command in a keep-alive pool Pod, with failed tasks, is TASK_FAILED and
// not ENTRYPOINT_NOT_RUN; a sandbox whose Pod the controller re-created
// under the same name (two SuccessfulCreate Events) is POD_RECREATED; both
// in `sandscope sweep -o json`.
func TestSweepTasksAndRecreationWithTheRealCRDs(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct, kl := c.Controller(t), c.Kubelet(t)

	// The pool and its pre-warmed Pod: bootstrap + keep-alive.
	poolPod := testcluster.SandboxPod("pool-a-x1", "python:3.12-slim", "tail", "-f", "/dev/null")
	pool := ct.Create(testcluster.PoolGVR, ns, testcluster.Pool("pool-a", poolPod, 1, 3, 0, 10))
	delete(poolPod.Labels, osv1.LabelSandboxID)
	poolPod.Labels[osv1.LabelPoolName] = "pool-a"
	yes := true
	poolPod.OwnerReferences = []metav1.OwnerReference{{APIVersion: testcluster.PoolGVR.GroupVersion().String(), Kind: "Pool",
		Name: "pool-a", UID: pool.GetUID(), Controller: &yes}}
	kl.CreatePod(ns, poolPod)
	kl.SetRunning(ns, "pool-a-x1", "10.244.2.1")

	// The pooled sandbox with a task, as the real controller writes it.
	task := testcluster.PooledBatchSandbox("task", "pool-a")
	task.Object["spec"].(map[string]any)["taskTemplate"] = map[string]any{"spec": map[string]any{"process": map[string]any{
		"command": []any{"python", "-m", "eval"}, "args": []any{"--suite", "full"}}}}
	ct.Create(testcluster.BatchSandboxGVR, ns, task)
	ct.SetAllocStatus(ns, "task", "pool-a-x1")
	ct.SetEndpoints(ns, "task", "10.244.2.1")
	ct.SetBatchSandboxStatus(ns, "task", map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1,
		"taskRunning": 1, "taskSucceed": 5, "taskFailed": 2, "taskPending": 0, "taskUnknown": 0,
		"conditions": []map[string]any{{"type": "Ready", "status": "True", "reason": "PodsReady", "message": "Sandbox is running",
			"lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z")}}})

	// A sandbox whose Pod was deleted and re-created under the same name.
	pod := testcluster.SandboxPod("again-0", "python:3.12-slim", "python", "-m", "server")
	bsbx := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("again", pod))
	testcluster.OwnedByBatchSandbox(pod, bsbx, 0)
	kl.CreatePod(ns, pod.DeepCopy())
	ct.RecordPodCreated(ns, bsbx, "again-0")
	kl.ForceDelete(ns, "again-0")
	ct.SetEndpoints(ns, "again")
	second := kl.CreatePod(ns, pod.DeepCopy())
	ct.RecordPodCreated(ns, bsbx, "again-0")
	kl.SetRunning(ns, "again-0", "10.244.2.2")
	ct.SetEndpoints(ns, "again", "10.244.2.2")
	ct.SetBatchSandboxStatus(ns, "again", map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})

	r := clitest.Run(cli.Main, "", "--kubeconfig", c.Kubeconfig, "-n", ns, "sweep", "-o", "json", "--fail-on", "warning")
	if r.Code != 1 {
		t.Errorf("sweep exit %d, want 1 (warnings); stderr %s", r.Code, r.Stderr)
	}
	var rep struct {
		Findings []model.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	byCode := map[string][]model.Finding{}
	for _, f := range rep.Findings {
		byCode[f.Code] = append(byCode[f.Code], f)
	}
	if tf := byCode[model.CodeTaskFailed]; len(tf) != 1 || tf[0].Sandbox != "task" || tf[0].Severity != model.SeverityWarning ||
		!strings.Contains(tf[0].Message, "2 task(s) failed (running 1, succeeded 5, failed 2, pending 0, unknown 0)") ||
		!strings.Contains(tf[0].Evidence[len(tf[0].Evidence)-1].Text, `["python", "-m", "eval", "--suite", "full"]`) {
		t.Errorf("TASK_FAILED: %+v", tf)
	}
	for _, code := range []string{model.CodeEntrypointNotRun, model.CodeImageConfigUnreadable} {
		for _, f := range byCode[code] {
			if f.Sandbox == "task" {
				t.Errorf("%s on a sandbox whose task runs the command: %+v", code, f)
			}
		}
	}
	rc := byCode[model.CodePodRecreated]
	if len(rc) != 1 || rc[0].Sandbox != "again" || !strings.Contains(rc[0].Message, "created 2 times under the same name (claimed by SuccessfulCreate Events)") {
		t.Fatalf("POD_RECREATED: %+v\n%s", rc, r.Stdout)
	}
	if !strings.Contains(rc[0].Evidence[1].Text, string(second.UID)) {
		t.Errorf("POD_RECREATED evidence does not name the Pod now: %+v", rc[0].Evidence)
	}

	// explain restart resolves a pooled sandbox through its alloc-status to
	// the pool Pod (read with the real CRD's object), which has no probe.
	r = clitest.Run(cli.Main, "", "--kubeconfig", c.Kubeconfig, "-n", ns, "explain", "restart", "task", "--block-start", "2026-11-29T17:00:00Z")
	if r.Code != 0 || !strings.Contains(r.Stdout, "BatchSandbox task → Pod pool-a-x1") || !strings.Contains(r.Stdout, "has no liveness probe") {
		t.Errorf("explain restart task: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
