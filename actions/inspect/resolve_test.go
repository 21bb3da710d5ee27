package inspect_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/inspect"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// explain restart and exec answer "which Pod is this sandbox's?" alike,
// where a rule of explain's own would differ: a pooled Pod the Pool handed
// to a newer sandbox while the older one's alloc-status still lists it,
// and a BatchSandbox whose Pod of index 0 is gone while one of index 1
// runs. Where exec's target is OK, explain explains that Pod; where exec
// refuses its Pod, explain names that Pod and explains none.
func TestExplainResolvesThePodExecTargets(t *testing.T) {
	c := testcluster.Get(t)
	ns, k, ct := c.Namespace(t), c.Kubelet(t), c.Controller(t)

	k.CreatePod(ns, testcluster.PoolPod("warm-x1", "warm"))
	k.SetRunning(ns, "warm-x1", "10.7.1.1")
	ct.PooledSandbox(ns, "sbx-a", "warm", "10.7.1.1", "warm-x1")
	// B must be visibly newer than A: creation times have whole seconds.
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now))
	ct.PooledSandbox(ns, "sbx-b", "warm", "10.7.1.1", "warm-x1")
	ct.LabelPod(ns, "warm-x1", map[string]string{osv1.LabelBatchSandboxName: "sbx-b"})

	// sbx-c's Pod of index 0 is gone; the one of index 1 (a scale-down
	// in progress) still runs.
	bs := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("sbx-c", testcluster.SandboxPod("t", "")))
	k.CreatePod(ns, testcluster.OwnedByBatchSandbox(testcluster.SandboxPod("sbx-c-1", ""), bs, 1))
	k.SetRunning(ns, "sbx-c-1", "10.7.1.3")
	ct.SetEndpoints(ns, "sbx-c", "10.7.1.2", "10.7.1.3")

	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testcluster.Context(t)
	for _, tc := range []struct {
		name string
		ok   bool // exec's view, checked so that the case is the one meant
	}{
		{"sbx-a", false}, // IP_TAKEN or POD_GONE: warm-x1 serves sbx-b
		{"sbx-b", true},
		{"sbx-c", false}, // POD_GONE: sbx-c-0
	} {
		snap, err := clients.LookupSandbox(ctx, tc.name, kube.LookupOptions{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		target, err := execute.Resolve(snap, ns, tc.name)
		if err != nil {
			t.Fatalf("%s: exec resolves: %v", tc.name, err)
		}
		if (target.Identity == model.IdentityOK) != tc.ok {
			t.Fatalf("%s: exec's target %s is %s", tc.name, target.Pod, target.Identity)
		}
		rep, err := inspect.ExplainRestart(ctx, clients, ns, tc.name, "", []time.Time{time.Now()})
		switch {
		case target.Identity == model.IdentityOK && err != nil:
			t.Errorf("%s: exec targets Pod %s; explain: %v", tc.name, target.Pod, err)
		case target.Identity == model.IdentityOK && rep.Pod != target.Pod:
			t.Errorf("%s: exec targets Pod %s, explain explains Pod %s (%s)", tc.name, target.Pod, rep.Pod, rep.Resolved)
		case target.Identity != model.IdentityOK && err == nil:
			t.Errorf("%s: exec refuses its Pod %s (%s), explain explains Pod %s (%s)", tc.name, target.Pod, target.Identity, rep.Pod, rep.Resolved)
		case target.Identity != model.IdentityOK && !strings.Contains(err.Error(), target.Pod):
			t.Errorf("%s: explain's error does not name the sandbox's Pod %s: %v", tc.name, target.Pod, err)
		}
	}
}
