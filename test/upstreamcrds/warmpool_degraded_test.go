package upstreamcrds_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// degradedPools names the pools WARM_POOL_DEGRADED reports at now.
func degradedPools(snap *fleet.Snapshot, now time.Time) map[string]string {
	out := map[string]string{}
	for _, x := range snap.ExtensionFindings(now) {
		if x.Notice.Code == model.CodeWarmPoolDegraded {
			name := strings.Fields(strings.TrimPrefix(x.Notice.Message, "warm pool "))[0]
			out[name] = x.Notice.Message
		}
	}
	return out
}

// A warm pool whose members never start, as the real controller runs it:
// it deletes a member not Ready 5 minutes after it was made and makes
// another at once, and its status counts ready members only. A watching
// reader sees the pool short of ready members while an unready member is
// replaced: WARM_POOL_DEGRADED, though every member it holds is young. A
// pool refilling after a claim (its new member starting) is not degraded,
// until that member is still not Ready 2 minutes after it was made.
func TestWarmPoolDegradedAsTheControllerReplacesWithTheRealCRDs(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct := c.Controller(t)
	ctx := testcluster.Context(t)

	ct.Create(testcluster.SandboxTemplateGVR, ns, testcluster.SandboxTemplate("python", testcluster.SandboxPod("x", "python:3.12-slim")))
	flaky := ct.Create(testcluster.SandboxWarmPoolGVR, ns, testcluster.SandboxWarmPool("flaky", "python", 2))
	warmMember(t, c, ns, flaky, "r3ady", "10.244.7.1")
	stuck := warmMember(t, c, ns, flaky, "st0ck", "")
	ct.SetStatus(testcluster.SandboxWarmPoolGVR, ns, "flaky", map[string]any{"replicas": 2, "readyReplicas": 1, "observedGeneration": 1,
		"selector": agentsandbox.LabelWarmPoolSandbox + "=hflaky"})
	refill := ct.Create(testcluster.SandboxWarmPoolGVR, ns, testcluster.SandboxWarmPool("refill", "python", 2))
	warmMember(t, c, ns, refill, "r3ady", "10.244.7.2")
	warmMember(t, c, ns, refill, "n3w00", "")
	ct.SetStatus(testcluster.SandboxWarmPoolGVR, ns, "refill", map[string]any{"replicas": 2, "readyReplicas": 1, "observedGeneration": 1,
		"selector": agentsandbox.LabelWarmPoolSandbox + "=hrefill"})

	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	w := kube.NewWatcher(clients, kube.WatcherOptions{Namespace: ns})
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	crash.Go(func() { _ = w.Run(wctx) })
	if err := w.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	members := func(pool string) func(*fleet.Snapshot) []string {
		return func(snap *fleet.Snapshot) []string {
			var out []string
			for i := range snap.NumSandboxes() {
				if sb := snap.SandboxAt(i); sb.Pool == pool {
					out = append(out, sb.Name())
				}
			}
			return out
		}
	}
	waitFor := func(what string, cond func(*fleet.Snapshot) bool) *fleet.Snapshot {
		t.Helper()
		var snap *fleet.Snapshot
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			snap = w.Fleet().Snapshot()
			return cond(snap), nil
		}); err != nil {
			t.Fatalf("the watcher never saw %s: %v; flaky members %v", what, err, members("flaky")(snap))
		}
		return snap
	}
	snap := waitFor("both pools with two members", func(s *fleet.Snapshot) bool {
		return len(members("flaky")(s)) == 2 && len(members("refill")(s)) == 2 && len(s.WarmPoolRows()) == 2
	})
	if got := degradedPools(snap, time.Now()); len(got) != 0 {
		t.Fatalf("young members starting are no degraded pool: %v", got)
	}

	// The controller replaces flaky-st0ck: it deletes the Sandbox (the
	// garbage collector then its Pod) and makes flaky-n3xt1, which does not
	// start either; the status stays 1 ready of 2.
	ct.Delete(testcluster.AgentSandboxGVR, ns, stuck.GetName())
	if err := c.Kube.CoreV1().Pods(ns).Delete(ctx, stuck.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	warmMember(t, c, ns, flaky, "n3xt1", "")
	snap = waitFor("flaky-st0ck replaced by flaky-n3xt1", func(s *fleet.Snapshot) bool {
		m := strings.Join(members("flaky")(s), " ")
		return strings.Contains(m, "flaky-n3xt1") && !strings.Contains(m, "flaky-st0ck")
	})
	got := degradedPools(snap, time.Now())
	if msg, ok := got["flaky"]; !ok || !strings.Contains(msg, "1 of 2 ready") || !strings.Contains(msg, "1 replaced unready") {
		t.Errorf("flaky, short of ready members while the controller replaces them: %q (all: %v)", msg, got)
	}
	if msg, ok := got["refill"]; ok {
		t.Errorf("refill, its new member starting, is degraded: %q", msg)
	}
	// Three minutes on, refill's member has not become Ready 2 minutes
	// after it was made: its pool is short and not starting.
	if msg, ok := degradedPools(snap, time.Now().Add(3*time.Minute))["refill"]; !ok || !strings.Contains(msg, "not Ready 2m0s after they were made") {
		t.Errorf("refill three minutes on: %q", msg)
	}
}
