package sweep_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sandscope/sandscope/actions/sweep"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/execd/execdtest"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/output/outputtest"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// fleet builds sandboxes the way OpenSandbox lays them out, playing the
// engine's controller and the kubelet through the real API server.
type fleet struct {
	t  *testing.T
	c  *testcluster.Cluster
	ns string
	k  *testcluster.Kubelet
	ct *testcluster.Controller
}

func newFleet(t *testing.T) *fleet {
	c := testcluster.Get(t)
	return &fleet{t: t, c: c, ns: c.Namespace(t), k: c.Kubelet(t), ct: c.Controller(t)}
}

var userCommand = []string{"python", "-m", "server"}

// sandbox creates BatchSandbox name and its Pod name-0 (not yet running),
// letting edit change the Pod first. phase "" leaves the status unwritten.
func (f *fleet) sandbox(name, image string, entrypoint []string, edit func(*corev1.Pod)) *corev1.Pod {
	f.t.Helper()
	pod := testcluster.SandboxPod(name+"-0", image, entrypoint...)
	bsbx := f.ct.Create(testcluster.BatchSandboxGVR, f.ns, testcluster.BatchSandbox(name, pod))
	testcluster.OwnedByBatchSandbox(pod, bsbx, 0)
	if edit != nil {
		edit(pod)
	}
	return f.k.CreatePod(f.ns, pod)
}

// running makes the sandbox's Pod Running at ip and the engine record it.
func (f *fleet) running(name, ip, phase string) {
	f.t.Helper()
	f.k.SetRunning(f.ns, name+"-0", ip)
	f.ct.SetEndpoints(f.ns, name, ip)
	f.status(name, phase)
}

// exit makes the sandbox's main container exit with code and its Pod
// Failed, while the engine still records the sandbox as it was.
func (f *fleet) exit(name string, code int32) {
	f.t.Helper()
	f.k.Terminate(f.ns, name+"-0", osv1.ContainerSandbox, code, "Error")
	f.k.SetPhase(f.ns, name+"-0", corev1.PodFailed, "", "")
}

func (f *fleet) status(name, phase string) {
	f.t.Helper()
	f.ct.SetBatchSandboxStatus(f.ns, name, map[string]any{"phase": phase, "replicas": 1, "allocated": 1, "ready": 1})
}

// startRegistry runs an in-process registry holding <host>/app:1, whose
// config has an ENTRYPOINT and CMD, and returns the image reference.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := mutate.Config(empty.Image, v1.Config{Entrypoint: []string{"/srv/start"}, Cmd: []string{"--port", "8080"}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host+"/app:1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing the test image: %v", err)
	}
	return host + "/app:1"
}

// runCLI runs `sandscope args...` in-process and returns stdout, stderr and
// the exit code.
func runCLI(args ...string) (string, string, int) {
	r := clitest.Run(cli.Main, "", args...)
	return r.Stdout, r.Stderr, r.Code
}

func findings(rep []model.Finding, code string) []model.Finding {
	var out []model.Finding
	for _, f := range rep {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

func hasEvidence(f model.Finding, kind model.EvidenceKind, text string) bool {
	for _, e := range f.Evidence {
		if e.Kind == kind && strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

// TestSweepEveryFinding builds a fleet with every finding of the table that
// a one-shot sweep can see, runs `sandscope sweep -o json` on it and checks
// the report against the contract and each finding's evidence.
func TestSweepEveryFinding(t *testing.T) {
	f := newFleet(t)
	image := startRegistry(t)
	plain := "python:3.12-slim"
	keepAlive := []string{"tail", "-f", "/dev/null"}
	grace1 := int64(1)

	// STUCK_TERMINATING: bound, main container still in PodInitializing,
	// deleted while a finalizer holds it. Grace 1 s + --stuck-after 1 s.
	f.sandbox("stuck", plain, userCommand, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &grace1 })
	f.k.Schedule(f.ns, "stuck-0", testcluster.DefaultNode)
	f.k.SetWaiting(f.ns, "stuck-0", osv1.ContainerSandbox, "PodInitializing", "")
	f.ct.SetEndpoints(f.ns, "stuck", "10.1.0.20")
	f.status("stuck", "Pending")
	deleted := f.k.DeleteHeld(f.ns, "stuck-0")
	t.Cleanup(func() { f.k.Release(f.ns, "stuck-0") })
	stuckAt := deleted.DeletionTimestamp.Add(time.Duration(grace1)*time.Second + time.Second)

	// A healthy sandbox: no finding.
	f.sandbox("healthy", plain, userCommand, nil)
	f.running("healthy", "10.1.0.1", "Succeed")

	// IP_TAKEN: victim's container exits, its IP goes to thief's Pod.
	f.sandbox("victim", plain, userCommand, nil)
	f.running("victim", "10.1.0.2", "Succeed")
	f.exit("victim", 1)
	f.sandbox("thief", plain, userCommand, nil)
	f.running("thief", "10.1.0.2", "Succeed")

	// POD_DEAD: the Pod failed, the engine still records its address.
	f.sandbox("dead", plain, userCommand, nil)
	f.running("dead", "10.1.0.3", "Succeed")
	f.exit("dead", 1)

	// POD_GONE: an address recorded for a Pod that does not exist.
	f.ct.Create(testcluster.BatchSandboxGVR, f.ns, testcluster.BatchSandbox("gone", testcluster.SandboxPod("gone-0", plain, userCommand...)))
	f.ct.SetEndpoints(f.ns, "gone", "10.1.0.4")
	f.status("gone", "Succeed")

	// IP_STALE: the Pod lives at another address than recorded.
	f.sandbox("stale", plain, userCommand, nil)
	f.running("stale", "10.1.0.6", "Succeed")
	f.ct.SetEndpoints(f.ns, "stale", "10.1.0.5")

	// ENTRYPOINT_NOT_RUN: keep-alive command, the image has an ENTRYPOINT.
	f.sandbox("keepalive", image, keepAlive, nil)
	f.running("keepalive", "10.1.0.7", "Succeed")

	// IMAGE_CONFIG_UNREADABLE: the registry does not answer (closed port).
	f.sandbox("unreadable", deadserver.Refusing(t)+"/missing:1", keepAlive, nil)
	f.running("unreadable", "10.1.0.8", "Succeed")

	// NOT_EXEC_READY (from status): Running, main container not ready.
	f.sandbox("notready", plain, userCommand, nil)
	f.running("notready", "10.1.0.9", "Succeed")
	f.k.UpdatePodStatus(f.ns, "notready-0", func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].Ready = false
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady || p.Status.Conditions[i].Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		}
	})

	// STATE_MISMATCH: the engine says Succeed (running), the Pod is still creating.
	f.sandbox("mismatch", plain, userCommand, nil)
	f.k.Schedule(f.ns, "mismatch-0", testcluster.DefaultNode)
	f.k.SetWaiting(f.ns, "mismatch-0", osv1.ContainerSandbox, "ContainerCreating", "")
	f.status("mismatch", "Succeed")

	// FAILED_STICKY: the engine says Failed, the Pod is Running and Ready.
	f.sandbox("sticky", plain, userCommand, nil)
	f.running("sticky", "10.1.0.10", "Failed")

	// RESTART_OOM (observed).
	f.sandbox("oom", plain, userCommand, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
	})
	f.running("oom", "10.1.0.11", "Succeed")
	f.k.Restart(f.ns, "oom-0", osv1.ContainerSandbox, 137, "OOMKilled")

	// RESTART_LIVENESS: probe period 10 s, threshold 3, grace 30 s. The first
	// failed probe at T−50 s predicts the kill at T−50+(3−1)×10+30 = T, and
	// the container's last run finished at T. Two twins with the same image
	// and probe that never restarted are the control.
	withProbe := func(p *corev1.Pod) {
		testcluster.WithLivenessProbe(p, "curl", "-sf", "localhost:8080/healthz")
		g := int64(30)
		p.Spec.TerminationGracePeriodSeconds = &g
	}
	f.sandbox("liveness", plain, userCommand, withProbe)
	f.running("liveness", "10.1.0.12", "Succeed")
	for i, n := range []string{"twin-a", "twin-b"} {
		f.sandbox(n, plain, userCommand, withProbe)
		f.running(n, fmt.Sprintf("10.1.0.%d", 30+i), "Succeed")
	}
	// Same image and probe, another CPU limit: not a valid control.
	f.sandbox("twin-c", plain, userCommand, func(p *corev1.Pod) {
		withProbe(p)
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	})
	f.running("twin-c", "10.1.0.32", "Succeed")
	end := time.Now().Add(-time.Minute).Truncate(time.Second)
	f.k.Restarted(f.ns, "liveness-0", osv1.ContainerSandbox, 1, 137, "Error", end.Add(-10*time.Minute), end)
	live := f.k.GetPod(f.ns, "liveness-0")
	field := "spec.containers{" + osv1.ContainerSandbox + "}"
	f.k.EventFor(live, field, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: command timed out", end.Add(-50*time.Second), end.Add(-30*time.Second), 3)
	f.k.EventFor(live, field, corev1.EventTypeNormal, "Killing", "Container sandbox failed liveness probe, will be restarted", end.Add(-30*time.Second), time.Time{}, 1)

	// Incident 003 an hour later: liveness probe, exit 137 reason Error, the
	// Events expired. Not OOM (the kubelet would have said OOMKilled): a
	// liveness kill, inferred, with the commands that confirm it.
	f.sandbox("expired", "python:3.11-slim", userCommand, withProbe) // another image: not in the twins' control
	f.running("expired", "10.1.0.15", "Succeed")
	f.k.Restart(f.ns, "expired-0", osv1.ContainerSandbox, 137, "Error")

	// RESTART_EVICTED: the node went NotReady as the container was killed.
	sick := "sick-" + f.ns
	f.sandbox("evicted", plain, userCommand, nil)
	f.k.Schedule(f.ns, "evicted-0", sick)
	f.running("evicted", "10.1.0.13", "Succeed")
	f.k.SetNodeNotReady(sick)
	f.k.Restart(f.ns, "evicted-0", osv1.ContainerSandbox, 137, "Error")

	// RESTART_UNEXPLAINED: exit 1, no probe, no node trouble.
	f.sandbox("unexplained", plain, userCommand, nil)
	f.running("unexplained", "10.1.0.14", "Succeed")
	f.k.Restart(f.ns, "unexplained-0", osv1.ContainerSandbox, 1, "Error")

	// Time itself must pass: a deleting Pod is stuck once its grace period
	// and --stuck-after are over on the clock sweep reads.
	time.Sleep(time.Until(stuckAt) + 500*time.Millisecond)

	start := time.Now()
	out, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--stuck-after", "1s", "--timeout", "30s")
	t.Logf("sweep took %s", time.Since(start).Round(time.Millisecond))
	if code != 1 {
		t.Errorf("exit code %d, want 1 (errors found); stderr: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr with -o json: %q", errOut)
	}
	contract := outputtest.CheckJSONContract(t, []byte(out))
	rep := decodeReport(t, out)
	if len(contract.Contexts) != 1 || !contract.Contexts[0].Reachable || contract.Contexts[0].Name != "testcluster" {
		t.Errorf("contexts = %+v", contract.Contexts)
	}
	if contract.Summary.Sandboxes != 20 {
		t.Errorf("summary.sandboxes = %d, want 20", contract.Summary.Sandboxes)
	}
	if contract.Summary.Score <= 0 || contract.Summary.Score >= 100 {
		t.Errorf("score %d", contract.Summary.Score)
	}

	want := map[string]string{ // code -> sandbox
		model.CodeIPTaken: "victim", model.CodePodDead: "dead", model.CodePodGone: "gone", model.CodeIPStale: "stale",
		model.CodeStuckTerminating: "stuck", model.CodeEntrypointNotRun: "keepalive", model.CodeImageConfigUnreadable: "unreadable",
		model.CodeNotExecReady: "notready", model.CodeStateMismatch: "mismatch", model.CodeFailedSticky: "sticky",
		model.CodeRestartOOM: "oom", model.CodeRestartLiveness: "liveness", model.CodeRestartEvicted: "evicted",
		model.CodeRestartUnexplained: "unexplained",
	}
	for code, sbx := range want {
		found := false
		for _, fd := range findings(rep.Findings, code) {
			if fd.Sandbox == sbx {
				found = true
				if fd.Severity != model.FindingSeverity[code] {
					t.Errorf("%s severity %s, want %s", code, fd.Severity, model.FindingSeverity[code])
				}
				if fd.Context != "testcluster" || fd.Namespace != f.ns {
					t.Errorf("%s placed at %s/%s", code, fd.Context, fd.Namespace)
				}
			}
		}
		if !found {
			t.Errorf("no %s finding for sandbox %s", code, sbx)
		}
	}
	for _, fd := range rep.Findings {
		if fd.Sandbox == "healthy" || fd.Sandbox == "thief" || fd.Sandbox == "twin-a" || fd.Sandbox == "twin-b" || fd.Sandbox == "twin-c" {
			t.Errorf("finding on a healthy sandbox: %+v", fd)
		}
		if fd.Code == model.CodeRestarted {
			t.Errorf("RESTARTED left unexplained: %+v", fd)
		}
	}

	// The liveness case: predicted and actual within 1 s, labelled right.
	var lv []model.Finding
	for _, l := range findings(rep.Findings, model.CodeRestartLiveness) {
		if l.Sandbox == "liveness" {
			lv = append(lv, l)
		}
	}
	if len(lv) != 1 {
		t.Errorf("want one RESTART_LIVENESS for sandbox liveness, got %+v", lv)
	} else {
		l := lv[0]
		for _, w := range []struct {
			kind model.EvidenceKind
			text string
		}{
			{model.Claimed, "Unhealthy Event(s) \"Liveness probe failed\""},
			{model.Claimed, "Killing Event at " + end.Add(-30*time.Second).UTC().Format(time.RFC3339)},
			{model.Observed, "lastState.terminated of container sandbox: reason Error, exit 137"},
			{model.Observed, "failureThreshold 3, periodSeconds 10; terminationGracePeriodSeconds 30"},
			{model.Inferred, fmt.Sprintf("= %s + (3 − 1) × 10s + 30s = %s; actual termination %s; difference +0s",
				end.Add(-50*time.Second).UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339))},
			{model.Observed, "0 of 2 siblings (same image, liveness probe and memory limit) restarted"},
			{model.Inferred, "the cause is specific to this Pod's workload"},
			{model.Observed, "sibling(s) differ in image, liveness probe or memory limit: not used as a control"},
			{model.Observed, "1 sibling(s) with the same image and liveness probe differ in resource limits (twin-c-0): not used as a control"},
		} {
			if !hasEvidence(l, w.kind, w.text) {
				t.Errorf("liveness finding lacks %s evidence %q: %+v", w.kind, w.text, l.Evidence)
			}
		}
	}
	if oom := findings(rep.Findings, model.CodeRestartOOM); len(oom) > 0 {
		for _, o := range oom {
			if o.Sandbox == "oom" && (!hasEvidence(o, model.Observed, "reason OOMKilled, exit 137") || !hasEvidence(o, model.Observed, "memory limit 512Mi") ||
				!hasEvidence(o, model.Inferred, "no shutdown logs are expected")) {
				t.Errorf("OOM evidence: %+v", o.Evidence)
			}
		}
	}
	expired := 0
	for _, l := range findings(rep.Findings, model.CodeRestartLiveness) {
		if l.Sandbox != "expired" {
			continue
		}
		expired++
		if !strings.Contains(l.Message, "inferred") || !strings.Contains(l.Message, "kubectl describe pod -n "+f.ns+" expired-0") ||
			!hasEvidence(l, model.Inferred, "verdict liveness kill is inferred, not observed") || !hasEvidence(l, model.Inferred, "OOM is not concluded") {
			t.Errorf("expired-Events liveness finding: %s %+v", l.Message, l.Evidence)
		}
	}
	if expired != 1 {
		t.Errorf("want one RESTART_LIVENESS (inferred) for sandbox expired, got %d", expired)
	}
	for _, o := range findings(rep.Findings, model.CodeRestartOOM) {
		if o.Sandbox == "expired" {
			t.Errorf("exit 137 reason Error concluded as OOM: %+v", o)
		}
	}
	for _, e := range findings(rep.Findings, model.CodeRestartEvicted) {
		if !hasEvidence(e, model.Observed, "node "+sick+" condition Ready=Unknown") {
			t.Errorf("evicted evidence: %+v", e.Evidence)
		}
	}
	for _, u := range findings(rep.Findings, model.CodeRestartUnexplained) {
		if u.Sandbox == "unexplained" && !strings.Contains(u.Message, "kubectl get events -n "+f.ns+" --field-selector involvedObject.name=unexplained-0") {
			t.Errorf("unexplained message lacks the kubectl command: %s", u.Message)
		}
	}
	for _, s := range findings(rep.Findings, model.CodeStuckTerminating) {
		if s.Sandbox == "stuck" && !hasEvidence(s, model.Observed, "PodInitializing") {
			t.Errorf("stuck evidence: %+v", s.Evidence)
		}
	}

	// Exit codes per --fail-on, and JUnit, on the same fleet.
	if _, _, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--fail-on", "warning", "--stuck-after", "1s"); code != 1 {
		t.Errorf("--fail-on warning: exit %d, want 1", code)
	}
	junit, _, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "junit", "--stuck-after", "1s")
	if code != 1 {
		t.Errorf("-o junit: exit %d, want 1", code)
	}
	doc := outputtest.ParseJUnit(t, []byte(junit))
	if len(doc.Suites) != 1 || doc.Suites[0].Tests != 21 { // 20 sandboxes + the context
		t.Errorf("junit: %d suites, tests %d, want 1 suite with 21 cases", len(doc.Suites), doc.Tests)
	}
	if doc.Failures != contract.Summary.Findings.Error {
		t.Errorf("junit failures %d, want the %d errors (--fail-on error)", doc.Failures, contract.Summary.Findings.Error)
	}
	table, _, _ := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "--stuck-after", "1s")
	for _, w := range []string{"SEVERITY", "RESTART_LIVENESS", "EVIDENCE", "Score"} {
		if !strings.Contains(table, w) {
			t.Errorf("table lacks %q:\n%s", w, table)
		}
	}
	t.Logf("table output:\n%s", table)
}

// TestSweepExitCodes: a clean namespace exits 0 whatever --fail-on; one with
// only warnings exits 0 at --fail-on error and 1 at --fail-on warning; bad
// flags exit 2.
func TestSweepExitCodes(t *testing.T) {
	f := newFleet(t)
	f.sandbox("fine", "python:3.12-slim", userCommand, nil)
	f.running("fine", "10.2.0.1", "Succeed")
	for _, failOn := range []string{"error", "warning"} {
		out, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--fail-on", failOn)
		if code != 0 {
			t.Errorf("clean fleet, --fail-on %s: exit %d (%s)\n%s", failOn, code, errOut, out)
		}
	}
	f.sandbox("drifted", "python:3.12-slim", userCommand, nil)
	f.running("drifted", "10.2.0.3", "Succeed")
	f.ct.SetEndpoints(f.ns, "drifted", "10.2.0.2") // IP_STALE: a warning
	if out, _, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--fail-on", "error"); code != 0 {
		t.Errorf("warnings only, --fail-on error: exit %d\n%s", code, out)
	}
	out, _, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--fail-on", "warning")
	if code != 1 {
		t.Errorf("warnings only, --fail-on warning: exit %d", code)
	}
	if rep := decodeReport(t, out); len(findings(rep.Findings, model.CodeIPStale)) != 1 {
		t.Errorf("want one IP_STALE: %+v", rep.Findings)
	}
	for _, args := range [][]string{
		{"--fail-on", "fatal"}, {"-o", "yaml"}, {"--timeout", "0s"}, {"-A"},
	} {
		full := append([]string{"sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns}, args...)
		if _, _, code := runCLI(full...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestSweepUnreachableContext: a kubeconfig with the real context, one whose
// server port is closed and one whose server accepts connections but never
// answers. The dead ones become CONTEXT_UNREACHABLE within the timeout; the
// real one is still reported. All unreachable exits 2.
func TestSweepUnreachableContext(t *testing.T) {
	f := newFleet(t)
	f.sandbox("alive", "python:3.12-slim", userCommand, nil)
	f.running("alive", "10.3.0.1", "Succeed")
	f.sandbox("corpse", "python:3.12-slim", userCommand, nil)
	f.running("corpse", "10.3.0.2", "Succeed")
	f.exit("corpse", 1)

	kc := kubeconfigWithDeadContexts(t, f.c.Kubeconfig, "https://"+deadserver.Refusing(t), "https://"+deadserver.Silent(t))
	const timeout = 3 * time.Second
	start := time.Now()
	out, errOut, code := runCLI("sweep", "--kubeconfig", kc, "--context", "testcluster,closed,silent", "-n", f.ns, "-o", "json", "--timeout", timeout.String())
	took := time.Since(start)
	t.Logf("sweep of 3 contexts took %s", took.Round(time.Millisecond))
	if took > timeout+5*time.Second {
		t.Errorf("sweep took %s with a %s timeout per context", took, timeout)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (CONTEXT_UNREACHABLE is an error); stderr %s", code, errOut)
	}
	outputtest.CheckJSONContract(t, []byte(out))
	rep := decodeReport(t, out)
	if len(rep.Contexts) != 3 {
		t.Fatalf("contexts = %+v", rep.Contexts)
	}
	byName := map[string]sweep.ContextResult{}
	for _, c := range rep.Contexts {
		byName[c.Name] = c
	}
	if c := byName["testcluster"]; !c.Reachable || c.Error != "" {
		t.Errorf("testcluster = %+v", c)
	}
	for _, n := range []string{"closed", "silent"} {
		if c := byName[n]; c.Reachable || c.Error == "" || c.Server == "" {
			t.Errorf("%s = %+v", n, c)
		}
	}
	unreach := findings(rep.Findings, model.CodeContextUnreachable)
	if len(unreach) != 2 {
		t.Errorf("CONTEXT_UNREACHABLE findings: %+v", unreach)
	}
	if dead := findings(rep.Findings, model.CodePodDead); len(dead) != 1 || dead[0].Context != "testcluster" || dead[0].Sandbox != "corpse" {
		t.Errorf("the reachable context's findings are missing: %+v", rep.Findings)
	}
	t.Logf("unreachable: %s | %s", byName["closed"].Error, byName["silent"].Error)

	// Every context unreachable: exit 2.
	start = time.Now()
	_, _, code = runCLI("sweep", "--kubeconfig", kc, "--context", "closed,silent", "-o", "json", "--timeout", timeout.String())
	if code != 2 {
		t.Errorf("all unreachable: exit %d, want 2", code)
	}
	if took := time.Since(start); took > timeout+5*time.Second {
		t.Errorf("all-unreachable sweep took %s", took)
	}
}

// TestSweepProbe: with --probe, a Running sandbox whose execd does not
// answer on :44772 is NOT_EXEC_READY; one whose daemon answers is not.
func TestSweepProbe(t *testing.T) {
	f := newFleet(t)
	base := fmt.Sprintf("127.%d.%d.", 100+rand.IntN(100), rand.IntN(250))
	up, silent := base+"10", base+"11"
	srv, err := execdtest.Start(execdtest.Config{Addr: up + ":44772", Identity: "up-0"})
	if err != nil {
		t.Skipf("cannot bind a loopback address for the fake execd: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	f.sandbox("up", "python:3.12-slim", userCommand, nil)
	f.running("up", up, "Succeed")
	f.sandbox("silent", "python:3.12-slim", userCommand, nil)
	f.running("silent", silent, "Succeed")

	clients, err := kube.NewClients(f.c.Config, f.ns)
	if err != nil {
		t.Fatal(err)
	}
	rep := sweep.Sweep(context.Background(), []sweep.Target{sweep.ClientsTarget("test", clients)}, sweep.Options{Probe: true, Timeout: 30 * time.Second})
	nr := findings(rep.Findings, model.CodeNotExecReady)
	if len(nr) != 1 || nr[0].Sandbox != "silent" || !hasEvidence(nr[0], model.Observed, "GET http://"+silent+":44772/ping") {
		t.Fatalf("NOT_EXEC_READY = %+v, want one for silent", nr)
	}
	if srv.Requests() != 1 {
		t.Errorf("the live daemon got %d requests, want 1 ping", srv.Requests())
	}
	// Without --probe nothing is dialled and status shows both ready.
	before := srv.Requests()
	rep = sweep.Sweep(context.Background(), []sweep.Target{sweep.ClientsTarget("test", clients)}, sweep.Options{Timeout: 30 * time.Second})
	if n := len(findings(rep.Findings, model.CodeNotExecReady)); n != 0 || srv.Requests() != before {
		t.Errorf("without --probe: %d NOT_EXEC_READY, %d requests", n, srv.Requests()-before)
	}
}

// A namespace that does not exist lists as empty as one that holds no
// sandbox; the sweep asks which it is. A mistyped -n scored 100 and exited
// 0 (a CI gate that can never fail); an empty namespace stays clean.
func TestSweepOfAMissingNamespace(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	for _, tc := range []struct {
		ns      string
		missing bool
	}{{ns, false}, {ns + "-typo", true}} {
		clients, err := kube.NewClients(c.Config, tc.ns)
		if err != nil {
			t.Fatal(err)
		}
		rep := sweep.Sweep(context.Background(), []sweep.Target{sweep.ClientsTarget("test", clients)}, sweep.Options{Timeout: 30 * time.Second})
		got := findings(rep.Findings, model.CodeNamespaceNotFound)
		switch {
		case tc.missing && (len(got) != 1 || got[0].Severity != model.SeverityError || got[0].Namespace != tc.ns || rep.Summary.Score == 100):
			t.Errorf("namespace %s does not exist: findings %+v, score %d; want one NAMESPACE_NOT_FOUND error", tc.ns, rep.Findings, rep.Summary.Score)
		case !tc.missing && (len(rep.Findings) != 0 || rep.Summary.Score != 100):
			t.Errorf("empty namespace %s: findings %+v, score %d; want none and 100", tc.ns, rep.Findings, rep.Summary.Score)
		}
	}
}

// ---- helpers -------------------------------------------------------------------

func decodeReport(t *testing.T, out string) sweep.Report {
	t.Helper()
	var rep sweep.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, out)
	}
	return rep
}

// kubeconfigWithDeadContexts copies the test kubeconfig and adds contexts
// "closed" and "silent" with the same credentials and the given servers.
func kubeconfigWithDeadContexts(t *testing.T, path, closedServer, silentServer string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	for name, server := range map[string]string{"closed": closedServer, "silent": silentServer} {
		cl := cfg.Clusters[cur.Cluster].DeepCopy()
		cl.Server = server
		cfg.Clusters[name] = cl
		ctx := cur.DeepCopy()
		ctx.Cluster = name
		cfg.Contexts[name] = ctx
	}
	out := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	return out
}
