package sweep_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/output/outputtest"
)

// slowPods is the fleet of the slow-link tests: enough Pods that their list
// takes tens of seconds through the link's drip.
const slowPods = 2000

// slowFleet fills a namespace with slowPods sandbox Pods.
func slowFleet(t *testing.T, c *testcluster.Cluster) string {
	t.Helper()
	ns := c.Namespace(t)
	ctx := context.Background()
	err := testcluster.Parallel(ctx, slowPods, 16, func(i int) error {
		pod := testcluster.SandboxPod(fmt.Sprintf("slow-%05d", i), "")
		pod.Spec.NodeName = testcluster.DefaultNode
		// A kilobyte of its own, which compression cannot squeeze away:
		// the list's size on the wire is then known within a factor.
		noise := make([]byte, 512)
		_, _ = rand.Read(noise)
		pod.Annotations = map[string]string{"test.sandscope.io/noise": hex.EncodeToString(noise)}
		if _, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestSweepSlowListIsPartialNotUnreachable: a server that is still
// streaming its Pod list when the sweep's time is up answered; the sweep
// says how far the list came (N of M), calls the context partial, and exits
// as --fail-on partial says; it is not CONTEXT_UNREACHABLE, and not exit 2.
// While it waits, it says on stderr how far the lists have come.
func TestSweepSlowListIsPartialNotUnreachable(t *testing.T) {
	c := testcluster.Get(t)
	ns := slowFleet(t, c)
	// The first 256 KiB of each connection's answers at once (discovery,
	// the first Pods), then 32 KiB/s: the Pods' list (over a MiB) takes
	// half a minute.
	kc := c.SlowLink(t, 256<<10, 32<<10)

	out, errOut, code := runCLI("sweep", "--kubeconfig", kc, "-n", ns, "-o", "json", "--timeout", "3s", "--max-time", "6s", "--image-checks=off")
	t.Logf("exit %d; stderr:\n%s", code, errOut)
	if code != 1 {
		t.Errorf("exit %d, want 1 (a partial read fails by default, an unreachable context would be 2)", code)
	}
	outputtest.CheckJSONContract(t, []byte(out))
	rep := decodeReport(t, out)
	if len(rep.Contexts) != 1 {
		t.Fatalf("contexts = %+v", rep.Contexts)
	}
	cr := rep.Contexts[0]
	if !cr.Reachable || !cr.Partial || cr.Error != "" || !strings.HasPrefix(cr.Slow, "slow: ") {
		t.Errorf("context = %+v; want reachable, partial, slow, no error", cr)
	}
	// The Pods' list is the slow one. The agent-sandbox lists, empty, may
	// not have ended either on a busy machine (they share the throttled
	// connection), and say no count: the total is then unknown, and
	// only the Pods' own progress says N of M.
	var pods *model.ListProgress
	if cr.Syncing != nil {
		for i, p := range cr.Syncing.Resources {
			if p.Resource == "pods" {
				pods = &cr.Syncing.Resources[i]
			}
		}
	}
	if s := cr.Syncing; s == nil || s.Received <= 0 || s.Received >= slowPods || (s.Total != slowPods && s.Total != 0) {
		t.Errorf("syncing = %+v; want some but not all of %d received, of %d or of an unknown total", s, slowPods, slowPods)
	} else if pods == nil || pods.Received <= 0 || pods.Received >= slowPods || pods.Total == nil || *pods.Total != slowPods {
		t.Errorf("the Pods' progress = %+v; want some but not all of %d received, of %d", pods, slowPods, slowPods)
	} else if !strings.Contains(cr.Slow, "of "+model.Thousands(slowPods)) {
		t.Errorf("slow = %q; want it to say N of %d", cr.Slow, slowPods)
	}
	if n := len(findings(rep.Findings, model.CodeContextUnreachable)); n != 0 {
		t.Errorf("%d CONTEXT_UNREACHABLE; the server answered", n)
	}
	if n := len(findings(rep.Findings, model.CodeContextPartial)); n != 1 {
		t.Errorf("%d CONTEXT_PARTIAL, want 1: %+v", n, rep.Findings)
	}
	if !strings.Contains(errOut, "sandscope: syncing testcluster: pods ") {
		t.Errorf("stderr has no progress line")
	}

	// get says the same: read partially, slow, not "no answer".
	kc = c.SlowLink(t, 256<<10, 32<<10)
	_, errOut, code = runCLI("get", "sb", "--kubeconfig", kc, "-n", ns, "--timeout", "3s", "--max-time", "4s", "--image-checks=off")
	if code != 1 || !strings.Contains(errOut, "was read partially: slow: ") || strings.Contains(errOut, "no answer") {
		t.Errorf("get: exit %d, stderr %q; want 1, read partially, slow", code, errOut)
	}

	// --fail-on error lets a partial read pass.
	kc = c.SlowLink(t, 256<<10, 32<<10)
	_, _, code = runCLI("sweep", "--kubeconfig", kc, "-n", ns, "-o", "json", "--timeout", "3s", "--max-time", "4s", "--fail-on", "error", "--image-checks=off")
	if code != 0 {
		t.Errorf("--fail-on error: exit %d, want 0", code)
	}
}

// TestSweepTimeoutBoundsSilence: lists that take longer than --timeout but
// keep arriving are waited for: the context is read whole.
func TestSweepTimeoutBoundsSilence(t *testing.T) {
	c := testcluster.Get(t)
	ns := slowFleet(t, c)
	kc := c.SlowLink(t, 256<<10, 256<<10)

	out, errOut, code := runCLI("sweep", "--kubeconfig", kc, "-n", ns, "-o", "json", "--timeout", "2s", "--image-checks=off")
	t.Logf("exit %d; stderr:\n%s", code, errOut)
	rep := decodeReport(t, out)
	if len(rep.Contexts) != 1 || !rep.Contexts[0].Reachable || rep.Contexts[0].Partial {
		t.Fatalf("contexts = %+v; want one, read whole", rep.Contexts)
	}
	if rep.Summary.Pods != slowPods {
		t.Errorf("pods = %d, want %d", rep.Summary.Pods, slowPods)
	}
	if !strings.Contains(errOut, "sandscope: syncing testcluster: pods ") {
		t.Errorf("stderr has no progress line although the lists took longer than 2 s")
	}
}
