package execute_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
)

// The CLI is tested from here (an external test package may import cli)
// so that it runs against this package's cluster, test kubelets and execd
// daemons.

func runCLI(t *testing.T, e *env, stdin string, args ...string) clitest.Result {
	t.Helper()
	return clitest.Run(cli.Main, stdin, append([]string{"--kubeconfig", e.C.Kubeconfig, "-n", e.NS, "exec"}, args...)...)
}

// runCLIArgs runs the CLI with the env's kubeconfig and no -n.
func runCLIArgs(t *testing.T, e *env, out, errOut io.Writer, args ...string) int {
	t.Helper()
	return cli.Main(append([]string{"--kubeconfig", e.C.Kubeconfig}, args...), strings.NewReader(""), out, errOut)
}

// cliError parses stderr, which must be exactly one JSON error object
// carrying the contract's keys.
func cliError(t *testing.T, r clitest.Result) map[string]any {
	t.Helper()
	return r.ErrorObject(t, "code", "message", "retryable", "executed", "evidence")
}

func TestCLIExecExitCodes(t *testing.T) {
	e := newEnv(t, nil)
	e.token = "cli-token-do-not-print"
	ip := testcluster.PodIP()
	a := e.start("cli-a", ip)
	e.kill(a)
	b := e.start("cli-b", ip)
	healthy := e.start("cli-ok", testcluster.PodIP())

	for _, via := range []string{"kube", "execd", "execd-direct"} {
		t.Run("ran/"+via, func(t *testing.T) {
			r := runCLI(t, e, "", "cli-ok", "--via", via, "--execd-token", e.token, "--", "sh", "-c", "echo hello; exit 3")
			if r.Code != 3 || !strings.HasSuffix(r.Stdout, "hello\n") || r.Stderr != "" {
				t.Fatalf("exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, string(healthy.UID)) {
				t.Fatalf("ran in the wrong Pod: %q", r.Stdout)
			}
		})
		t.Run("refused/"+via, func(t *testing.T) {
			r := runCLI(t, e, "", "cli-a", "--via", via, "--execd-token", e.token, "--", "echo", "pi")
			obj := cliError(t, r)
			if r.Code != 125 || obj["executed"] != "no" || (obj["code"] != "IP_TAKEN" && obj["code"] != "POD_NOT_RUNNING") || r.Stdout != "" {
				t.Fatalf("exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
			}
			if strings.Contains(r.Stderr, e.token) {
				t.Fatal("the token is printed")
			}
		})
	}
	if e.daemon(b).Requests() != 0 || e.execRequests("cli-b") != 0 {
		t.Fatal("B received a request")
	}

	t.Run("stdin", func(t *testing.T) {
		r := runCLI(t, e, "piped\n", "cli-ok", "-i", "--", "cat")
		if r.Code != 0 || !strings.HasSuffix(r.Stdout, "piped\n") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		r := runCLI(t, e, "", "cli-ok", "--via", "execd-direct", "--execd-token", "wrong-"+e.token, "--", "true")
		obj := cliError(t, r)
		if r.Code != 125 || obj["code"] != "FORBIDDEN" || strings.Contains(r.Stderr, e.token) {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("readonly", func(t *testing.T) {
		r := clitest.Run(cli.Main, "", "--kubeconfig", e.C.Kubeconfig, "-n", e.NS, "--readonly", "exec", "cli-ok", "--", "true")
		if obj := cliError(t, r); r.Code != 125 || obj["code"] != "READ_ONLY" {
			t.Fatalf("exit %d %s", r.Code, r.Stderr)
		}
	})
	t.Run("no such sandbox", func(t *testing.T) {
		r := runCLI(t, e, "", "nope", "--", "true")
		if obj := cliError(t, r); r.Code != 125 || obj["code"] != "NOT_FOUND" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("no command", func(t *testing.T) {
		r := runCLI(t, e, "", "cli-ok")
		// A usage error exits 2, as in every command; 125 is a refused target.
		if obj := cliError(t, r); r.Code != 2 || obj["code"] != "USAGE" {
			t.Fatalf("%+v", r)
		}
	})
	if n := e.daemon(healthy).Commands(); n != 2 {
		t.Errorf("the healthy Pod's execd ran %d commands, want 2", n)
	}
}

// The node dies mid-command: exit 126 and executed "unknown", never 0.
func TestCLIExecUnknownOutcome(t *testing.T) {
	started := make(chan struct{}, 1)
	e := newEnv(t, kubelettest.DiesMidCommand(started))
	e.start("cli-dies", testcluster.PodIP())
	go func() {
		<-started
		time.Sleep(100 * time.Millisecond)
		e.Server.Close()
	}()
	r := runCLI(t, e, "", "cli-dies", "--", "sleep", "10")
	obj := cliError(t, r)
	if r.Code != 126 || obj["executed"] != "unknown" || obj["retryable"] != false {
		t.Fatalf("exit %d stderr %s", r.Code, r.Stderr)
	}
}

// --timeout ends the wait: exit 126 with the TIMEOUT error, whatever the
// stream did as the client left (a killed command may still report an exit
// status, which is then the client's doing, not the command's).
func TestCLIExecTimeoutIsUnknown(t *testing.T) {
	e := newEnv(t, nil)
	e.start("cli-timeout", testcluster.PodIP())
	for _, via := range []string{"kube", "execd", "execd-direct"} {
		r := runCLI(t, e, "", "cli-timeout", "--via", via, "--timeout", "2s", "--", "sleep", "30")
		t.Logf("%s: exit %d stderr %s", via, r.Code, r.Stderr)
		obj := cliError(t, r)
		if r.Code != 126 || obj["code"] != execute.CodeTimeout || obj["executed"] != "unknown" {
			t.Errorf("%s: exit %d stderr %s", via, r.Code, r.Stderr)
		}
	}
}

// A user with exactly OpenSandbox's rights (Pods, pods/exec,
// BatchSandboxes: nothing of agent-sandbox's kind) execs into a
// BatchSandbox: the refused agent-sandbox read is skipped, not fatal. A
// name none of the readable kinds has is refused FORBIDDEN saying it may
// be an agent Sandbox this user cannot see, not a confident NOT_FOUND.
func TestCLIExecWithOpenSandboxRightsOnly(t *testing.T) {
	e := newEnv(t, nil)
	ct, ip := e.C.Controller(t), testcluster.PodIP()
	pod := testcluster.SandboxPod("osb-ok-0", "")
	testcluster.OwnedByBatchSandbox(pod, ct.Create(testcluster.BatchSandboxGVR, e.NS, testcluster.BatchSandbox("osb-ok", pod)), 0)
	e.Kubelet.CreatePod(e.NS, pod)
	e.Kubelet.Schedule(e.NS, pod.Name, e.Node.Name)
	healthy := e.Kubelet.SetRunning(e.NS, pod.Name, ip)
	e.startDaemon(healthy)
	ct.SetEndpoints(e.NS, "osb-ok", ip)
	ct.SetBatchSandboxStatus(e.NS, "osb-ok", map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
	const user = "opensandbox-user"
	e.C.ConfigAs(t, e.NS, user, "opensandbox-user",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get", "create"}},
		rbacv1.PolicyRule{APIGroups: []string{"sandbox.opensandbox.io"}, Resources: []string{"batchsandboxes"}, Verbs: []string{"get", "list", "watch"}},
	)
	as := func(args ...string) clitest.Result {
		return clitest.Run(cli.Main, "", append([]string{"--kubeconfig", e.C.Kubeconfig, "--as", user, "-n", e.NS, "exec"}, args...)...)
	}
	r := as("osb-ok", "--", "sh", "-c", "echo hello")
	if r.Code != 0 || !strings.HasSuffix(r.Stdout, "hello\n") || !strings.Contains(r.Stdout, string(healthy.UID)) {
		t.Fatalf("exec as %s: exit %d stdout %q stderr %q; want hello from osb-ok's Pod", user, r.Code, r.Stdout, r.Stderr)
	}
	r = as("nope", "--", "true")
	obj := cliError(t, r)
	if msg, _ := obj["message"].(string); r.Code != 125 || obj["code"] != "FORBIDDEN" || !strings.Contains(msg, "sandboxes") {
		t.Fatalf("exec of an unknown name as %s: exit %d stderr %s; want FORBIDDEN naming the unreadable sandboxes kind", user, r.Code, r.Stderr)
	}
}

// On a cluster, the short id the TUI shows runs in its BatchSandbox's Pod
// without -n, as the whole id does.
func TestCLIExecByShortID(t *testing.T) {
	e := newEnv(t, nil)
	// Random, so that no other sandbox of the cluster starts the same way.
	id := fmt.Sprintf("%08x-4659-4a6b-9d3e-0c5aff3444d1", rand.Uint32())
	ct := e.C.Controller(t)
	pod := testcluster.SandboxPod(id+"-0", "")
	bs := ct.Create(testcluster.BatchSandboxGVR, e.NS, testcluster.BatchSandbox(id, testcluster.SandboxPod("t", "")))
	e.Kubelet.CreatePod(e.NS, testcluster.OwnedByBatchSandbox(pod, bs, 0))
	e.Kubelet.Schedule(e.NS, pod.Name, e.Node.Name)
	ip := testcluster.PodIP()
	p := e.Kubelet.SetRunning(e.NS, pod.Name, ip)
	e.startDaemon(p)
	ct.SetEndpoints(e.NS, id, ip)
	ct.SetBatchSandboxStatus(e.NS, id, map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})

	var out, errOut bytes.Buffer
	code := runCLIArgs(t, e, &out, &errOut, "exec", id[:8], "--", "sh", "-c", "echo hello")
	if code != 0 || !strings.Contains(out.String(), "hello") || !strings.Contains(out.String(), string(p.UID)) {
		t.Fatalf("exec %s (the short id of %s, no -n): exit %d, stdout %q, stderr %q", id[:8], id, code, out.String(), errOut.String())
	}
}

// A malformed --execd-token-secret refuses before anything is sent, for
// one target and for many: TRANSPORT, executed no, not retryable, naming
// the form it wants.
func TestCLIMalformedTokenSecretRefuses(t *testing.T) {
	e := newEnv(t, kubelettest.ShellExec)
	for _, args := range [][]string{
		{"sbx-a", "--execd-token-secret", "no-key", "--", "true"},
		{"--selector", "team=rl", "--execd-token-secret", "ns/name", "--", "true"},
	} {
		r := runCLI(t, e, "", args...)
		if r.Code != 125 {
			t.Fatalf("%v: exit %d, want 125; stderr %s", args, r.Code, r.Stderr)
		}
		m := cliError(t, r)
		if m["code"] != execute.CodeTransport || m["executed"] != "no" || m["retryable"] != false ||
			!strings.Contains(fmt.Sprint(m["message"]), "NS/NAME:KEY") {
			t.Errorf("%v: %s", args, r.Stderr)
		}
	}
}
