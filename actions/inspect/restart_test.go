package inspect_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/actions/inspect"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

func sandscope(args ...string) (stdout, stderr string, code int) {
	r := clitest.Run(cli.Main, "", args...)
	return r.Stdout, r.Stderr, r.Code
}

// TestExplainRestartOnTheAPIServer replays a liveness kill an hour later, its Events gone: a
// BatchSandbox's Pod with a liveness probe (3 × 10 s, timeout 1 s, grace
// 30 s) restarted 3 times, the last run ended with exit 137 reason Error
// 61 s after the process blocked, and the Events are gone. Then the
// Events are there too.
func TestExplainRestartOnTheAPIServer(t *testing.T) {
	c := testcluster.Get(t)
	ns, k, ct := c.Namespace(t), c.Kubelet(t), c.Controller(t)
	pod := testcluster.WithLivenessProbe(testcluster.SandboxPod("eval-0", "", "python", "-m", "eval"), "curl", "-sf", "localhost:8080/healthz")
	pod.Spec.Containers[0].LivenessProbe.TimeoutSeconds = 1
	grace := int64(30)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	bsbx := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("eval", pod))
	testcluster.OwnedByBatchSandbox(pod, bsbx, 0)
	k.CreatePod(ns, pod)
	k.SetRunning(ns, "eval-0", "10.7.0.1")
	block := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	// The formula says +60 s; the API server keeps whole seconds.
	finished := block.Add(61 * time.Second)
	k.Restarted(ns, "eval-0", osv1.ContainerSandbox, 3, 137, "Error", block.Add(-time.Hour), finished)
	base := []string{"--kubeconfig", c.Kubeconfig, "-n", ns, "explain", "restart"}
	bs := block.UTC().Format(time.RFC3339)

	out, errOut, code := sandscope(append(base, "eval-0", "--block-start", bs, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep inspect.RestartReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Checks) != 1 || rep.Liveness == nil || rep.Liveness.TimeoutSeconds != 1 || rep.RestartCount != 3 {
		t.Fatalf("report %s", out)
	}
	ck := rep.Checks[0]
	if !ck.Predicted.Equal(block.Add(60*time.Second)) || ck.Recorded == nil || !ck.Recorded.FinishedAt.Equal(finished) ||
		ck.DiffSeconds == nil || *ck.DiffSeconds != 1 || !ck.Agrees {
		t.Errorf("check %+v", ck)
	}
	if !strings.Contains(ck.Verdict, "agrees within 1 s") || !strings.Contains(ck.Verdict, "(inferred)") {
		t.Errorf("verdict %q", ck.Verdict)
	}
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "records only the last termination") || !strings.Contains(notes, "no Events recorded") {
		t.Errorf("notes %q", rep.Notes)
	}

	// By the sandbox's name, as text, with the Events of the run present.
	p := k.GetPod(ns, "eval-0")
	field := "spec.containers{sandbox}"
	k.EventFor(p, field, corev1.EventTypeNormal, "Started", "Started container sandbox", block.Add(-time.Hour), time.Time{}, 1)
	k.EventFor(p, field, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: command timed out", block.Add(11*time.Second), block.Add(31*time.Second), 3)
	k.EventFor(p, field, corev1.EventTypeNormal, "Killing", "Container sandbox failed liveness probe, will be restarted", block.Add(31*time.Second), time.Time{}, 1)
	out, errOut, code = sandscope(append(base, "eval", "--block-start", bs)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Logf("\n%s", out)
	for _, want := range []string{
		"BatchSandbox eval → Pod eval-0",
		"timeoutSeconds 1; terminationGracePeriodSeconds 30",
		"formula: kill = block start + 3 × 10s + 30s = block start + 60s",
		"records only the last termination",
		block.Add(60 * time.Second).UTC().Format("2006-01-02T15:04:05.0Z"),
		finished.UTC().Format("2006-01-02T15:04:05.0Z"),
		"+1.0s", "agrees within 1 s (+1s)",
		"claimed   first Unhealthy Event",
		"claimed   Killing Event \"failed liveness probe\" at " + block.Add(31*time.Second).UTC().Format(time.RFC3339),
		`an Event's claim (reported by "kubelet" on "` + p.Spec.NodeName + `", the Pod's node`,
		"inferred  the Killing Event lies inside the predicted SIGTERM window",
		"kubectl describe pod -n " + ns + " eval-0",
		"kubectl get events -n " + ns + " --field-selector involvedObject.name=eval-0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	// Usage errors exit 2, a name that designates nothing exits 1.
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"eval-0"}, 2, "--block-start is required"},
		{[]string{"eval-0", "--block-start", "yesterday"}, 2, "RFC 3339"},
		{[]string{"eval-0", "--block-start", bs, "--container", "nope"}, 2, "no such container"},
		{[]string{"eval-0", "--block-start", bs, "-o", "yaml"}, 2, "want text or json"},
		{[]string{}, 2, "usage"},
		{[]string{"nobody", "--block-start", bs}, 1, "no Pod or sandbox \"nobody\""},
	} {
		_, errOut, code := sandscope(append(base, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
}

// TestExplainRestartForgedLivenessEvent: a tenant allowed to create Events
// in its namespace writes a liveness Killing and Unhealthy about its own
// Pod, which has no liveness probe, copying the kubelet's reporting fields.
// explain restart predicts nothing, shows no probe config, and lists the
// Events as claims the spec contradicts, in JSON and in text.
func TestExplainRestartForgedLivenessEvent(t *testing.T) {
	c := testcluster.Get(t)
	ns, k, ct := c.Namespace(t), c.Kubelet(t), c.Controller(t)
	pod := testcluster.SandboxPod("plain-0", "", "python", "-m", "eval")
	testcluster.OwnedByBatchSandbox(pod, ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("plain", pod)), 0)
	k.CreatePod(ns, pod)
	k.SetRunning(ns, "plain-0", "10.7.0.2")
	block := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	finished := block.Add(61 * time.Second)
	k.Restarted(ns, "plain-0", osv1.ContainerSandbox, 1, 137, "Error", block.Add(-time.Hour), finished)
	p := k.GetPod(ns, "plain-0")

	tenant := c.Tenant(t, ns)
	field := "spec.containers{" + osv1.ContainerSandbox + "}"
	testcluster.ForgeEvent(t, tenant, testcluster.KubeletEvent(p, field, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: command timed out", block.Add(11*time.Second), block.Add(31*time.Second), 3))
	testcluster.ForgeEvent(t, tenant, testcluster.KubeletEvent(p, field, corev1.EventTypeWarning, "Killing", "Container sandbox failed liveness probe, will be restarted", block.Add(31*time.Second), block.Add(31*time.Second), 1))

	base := []string{"--kubeconfig", c.Kubeconfig, "-n", ns, "explain", "restart", "plain", "--block-start", block.UTC().Format(time.RFC3339)}
	out, errOut, code := sandscope(append(base, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep inspect.RestartReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Liveness != nil || len(rep.Checks) != 0 {
		t.Errorf("a liveness prediction for a container without a liveness probe:\n%s", out)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{
		"has no liveness probe: no liveness kill to predict",
		`set aside: Killing Event at ` + block.Add(31*time.Second).UTC().Format(time.RFC3339) + ` "Container sandbox failed liveness probe, will be restarted": the Pod's spec has no liveness probe on container sandbox`,
		`set aside: Unhealthy Event at `,
		`an Event's claim (reported by "kubelet" on "` + p.Spec.NodeName + `", the Pod's node; recorded in namespace ` + ns + `)`,
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}

	out, errOut, code = sandscope(base...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Logf("\n%s", out)
	if strings.Contains(out, "liveness probe: failureThreshold") || strings.Contains(out, "formula:") || strings.Contains(out, "consistent with a liveness kill") {
		t.Errorf("text output predicts a liveness kill:\n%s", out)
	}
	if !strings.Contains(out, "note: set aside: Killing Event at") || !strings.Contains(out, "the Pod's spec has no liveness probe") {
		t.Errorf("text output does not show the forged Killing Event as set aside:\n%s", out)
	}
}
