package execute_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/model"
)

// startPod creates pod, binds it to the env's node, makes it Running with
// ip and starts its execd (a pool Pod, a hostNetwork Pod, ...).
func (e *env) startPod(pod *corev1.Pod, ip string) *corev1.Pod {
	e.T.Helper()
	p := e.Node.Run(e.NS, pod, ip)
	e.startDaemon(p)
	return p
}

// warmSandbox starts warm Pod pod of Pool "warm" on a fresh IP and hands it
// to the pooled sandbox named sandbox.
func (e *env) warmSandbox(ct *testcluster.Controller, sandbox, pod string) *corev1.Pod {
	e.T.Helper()
	ip := testcluster.PodIP()
	warm := e.startPod(testcluster.PoolPod(pod, "warm"), ip)
	ct.PooledSandbox(e.NS, sandbox, "warm", ip, pod)
	return warm
}

// A pooled sandbox's Pod handed by the Pool to a newer sandbox while the
// older one's alloc-status still lists it: the Pod is the same Pod (name,
// UID and IP all match), and yet a command for A would run in B's sandbox.
// Every transport, from the CLI (targeted reads) and from a watched model,
// must refuse before anything reaches the Pod.
func TestExecPoolHandoverIsRefused(t *testing.T) {
	for _, labelled := range []bool{false, true} {
		t.Run(fmt.Sprintf("ownerLabel=%v", labelled), func(t *testing.T) {
			e := newEnv(t, nil)
			ct := e.C.Controller(t)
			warm := e.warmSandbox(ct, "sbx-a", "warm-x1")

			// Control: while warm-x1 is A's, exec to A runs there.
			r := runCLI(t, e, "", "sbx-a", "--via", "execd-direct", "--", "true")
			if r.Code != 0 {
				t.Fatalf("control: exec to A before the handover: exit %d stderr %s", r.Code, r.Stderr)
			}
			ran := e.daemon(warm).Commands()

			// The Pool hands warm-x1 to B; A's allocation still lists it.
			// Creation times have whole seconds: B must be visibly newer
			// (the model holds a Pod claimed by two sandboxes of the same
			// second for neither).
			nextSecond()
			ct.PooledSandbox(e.NS, "sbx-b", "warm", warm.Status.PodIP, "warm-x1")
			if labelled {
				ct.LabelPod(e.NS, "warm-x1", map[string]string{osv1.LabelBatchSandboxName: "sbx-b"})
			}
			before := e.execRequests("warm-x1")
			for _, via := range allVias {
				r := runCLI(t, e, "", "sbx-a", "--via", string(via), "--", "sh", "-c", "echo pi > pi.txt")
				obj := cliError(t, r)
				code, _ := obj["code"].(string)
				if r.Code != 125 || obj["executed"] != "no" || (code != execute.CodeIPTaken && code != execute.CodePodGone) {
					t.Errorf("%s: exit %d, %s; want 125, executed no, IP_TAKEN or POD_GONE", via, r.Code, r.Stderr)
				}
				if !strings.Contains(r.Stderr, "sbx-b") {
					t.Errorf("%s: the refusal does not name the sandbox that holds the Pod now: %s", via, r.Stderr)
				}
			}
			if n := e.daemon(warm).Commands() - ran; n != 0 {
				t.Errorf("warm-x1's execd ran %d commands meant for A", n)
			}
			if n := e.execRequests("warm-x1") - before; n != 0 {
				t.Errorf("the kubelet received %d exec/port-forward requests for warm-x1", n)
			}

			// B itself still reaches its Pod.
			if r := runCLI(t, e, "", "sbx-b", "--", "true"); r.Code != 0 {
				t.Errorf("exec to B: exit %d %s", r.Code, r.Stderr)
			}
		})
	}
}

// nextSecond waits until the wall clock enters a new second, so that an
// object created next has a later creationTimestamp than one created before.
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now))
}

// The TUI's path: a watched model that has not heard of the handover yet
// (B is unknown to it) still refuses, because a pooled sandbox's
// allocation and its Pod's owner label are re-read live before dispatch.
func TestExecPoolReleaseSeenLiveDespiteLaggingModel(t *testing.T) {
	e := newEnv(t, nil)
	ct := e.C.Controller(t)
	warm := e.warmSandbox(ct, "sbx-c", "warm-y1")
	e.fleet.UpsertBatchSandbox(model.BatchSandboxFromUnstructured(ct.Get(testcluster.BatchSandboxGVR, e.NS, "sbx-c")))
	e.observe(warm)
	x := e.executor(execute.Options{})
	if _, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "sbx-c", Command: []string{"true"}, Stdout: io.Discard}); err != nil {
		t.Fatalf("control: %v", err)
	}

	ct.SetAllocReleased(e.NS, "sbx-c", "warm-y1") // the model does not see this
	_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "sbx-c", Via: execute.ViaExecdDirect, Command: []string{"true"}, Stdout: io.Discard})
	ee := asExecError(t, err)
	if ee.Code != execute.CodePodGone || ee.Executed != refusal.ExecutedNo {
		t.Fatalf("released: got %s", ee.JSON())
	}

	ct.SetAllocReleased(e.NS, "sbx-c") // allocated again, but labelled for another sandbox now
	ct.LabelPod(e.NS, "warm-y1", map[string]string{osv1.LabelBatchSandboxName: "sbx-other"})
	_, err = x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "sbx-c", Command: []string{"true"}, Stdout: io.Discard})
	ee = asExecError(t, err)
	if ee.Code != execute.CodePodGone || !strings.Contains(ee.Message, "sbx-other") {
		t.Fatalf("relabelled: got %s", ee.JSON())
	}
}

// The TUI's path: the watched model saw the Pool hand warm-z1 to B while
// A's alloc-status still lists it. The live reads alone cannot tell (the
// Pod has the same name, UID and IP, carries no owner label, and A's live
// allocation still names it): the model's slot state must refuse.
func TestExecRefusedWhenModelSlotIsNotOK(t *testing.T) {
	e := newEnv(t, nil)
	ct := e.C.Controller(t)
	warm := e.warmSandbox(ct, "sbx-a", "warm-z1")
	ct.PooledSandbox(e.NS, "sbx-b", "warm", warm.Status.PodIP, "warm-z1")
	for _, n := range []string{"sbx-a", "sbx-b"} {
		e.fleet.UpsertBatchSandbox(model.BatchSandboxFromUnstructured(ct.Get(testcluster.BatchSandboxGVR, e.NS, n)))
	}
	e.observe(warm)
	var a *model.Sandbox
	for _, s := range e.fleet.Snapshot().Sandboxes() {
		if s.Name() == "sbx-a" {
			a = s
		}
	}
	if a == nil || a.Identity() == model.IdentityOK {
		t.Fatalf("the model holds sbx-a as OK: %+v", a)
	}
	x := e.executor(execute.Options{})
	for _, via := range allVias {
		_, err := x.Run(ctxT(t), execute.Request{Sandbox: a, Via: via, Command: []string{"true"}, Stdout: io.Discard})
		ee := asExecError(t, err)
		if ee.Executed != refusal.ExecutedNo || (ee.Code != execute.CodeIPTaken && ee.Code != execute.CodePodGone) ||
			!strings.Contains(string(ee.JSON()), "sbx-b") {
			t.Errorf("%s: got %s", via, ee.JSON())
		}
	}
	if n := e.execRequests("warm-z1") + int(e.daemon(warm).Requests()); n != 0 {
		t.Fatalf("%d requests reached warm-z1", n)
	}
}

// Whatever answers on a sandbox's execd port is sandbox code. A redirect
// must not carry the command or the access token anywhere: the thief
// server it points at receives nothing, and the refusal says executed no.
func TestExecdRedirectIsNeverFollowed(t *testing.T) {
	e := newEnv(t, nil)
	e.token = "redirect-token-must-stay"
	var stolen atomic.Int64
	thief := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		w.WriteHeader(http.StatusOK)
	})}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go thief.Serve(tl) //nolint:errcheck // closed below
	t.Cleanup(func() { thief.Close() })

	for _, via := range []execute.Via{execute.ViaExecd, execute.ViaExecdDirect} {
		t.Run(string(via), func(t *testing.T) {
			ip := testcluster.PodIP()
			name := "redir-" + strings.ReplaceAll(string(via), "-", "")
			e.Kubelet.CreatePod(e.NS, testcluster.SandboxPod(name, ""))
			e.Kubelet.Schedule(e.NS, name, e.Node.Name)
			p := e.Kubelet.SetRunning(e.NS, name, ip)
			// The sandbox's "execd" redirects every request to the thief.
			var seen atomic.Int64
			hostile := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen.Add(1)
				http.Redirect(w, r, "http://"+tl.Addr().String()+r.URL.Path, http.StatusTemporaryRedirect)
			})}
			hl, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(execd.DefaultPort)))
			if err != nil {
				t.Fatal(err)
			}
			go hostile.Serve(hl) //nolint:errcheck // closed below
			t.Cleanup(func() { hostile.Close() })
			e.Daemons.AddAddr(string(p.UID), hl.Addr().String())
			e.observe(p)

			x := e.executor(execute.Options{})
			_, err = x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: name, Via: via, Command: []string{"id"}, Stdout: io.Discard})
			ee := asExecError(t, err)
			if ee.Code != execute.CodeRedirected || ee.Executed != refusal.ExecutedNo {
				t.Fatalf("got %s", ee.JSON())
			}
			if strings.Contains(string(ee.JSON()), e.token) {
				t.Fatalf("the token is in the error: %s", ee.JSON())
			}
			if seen.Load() == 0 {
				t.Fatal("the hostile execd was never asked: the test proves nothing")
			}
		})
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
}

// With hostNetwork the "Pod IP" is the node's: any process there may own
// execd's port. execd transports refuse; kube (routed by Pod name) runs.
func TestExecHostNetworkRefusesExecd(t *testing.T) {
	e := newEnv(t, nil)
	pod := testcluster.SandboxPod("hostnet", "")
	pod.Spec.HostNetwork = true
	p := e.startPod(pod, testcluster.PodIP())
	e.observe(p)
	x := e.executor(execute.Options{})
	for _, via := range []execute.Via{execute.ViaExecd, execute.ViaExecdDirect} {
		_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "hostnet", Via: via, Command: []string{"id"}, Stdout: io.Discard})
		ee := asExecError(t, err)
		if ee.Code != execute.CodeHostNetwork || ee.Executed != refusal.ExecutedNo {
			t.Fatalf("%s: got %s", via, ee.JSON())
		}
	}
	if n := e.daemon(p).Requests(); n != 0 {
		t.Fatalf("execd received %d requests", n)
	}
	res, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "hostnet", Via: execute.ViaKube, Command: []string{"true"}, Stdout: io.Discard})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("kube: %v exit %d", err, res.ExitCode)
	}
}

// A process that never saw the first Pod (a fresh CLI) cannot tell a
// same-name re-creation from the Pod alone; the UID the caller recorded
// at create can. --expect-uid and --expect-ip refuse a Pod that differs.
func TestCLIExecExpectUIDAndIP(t *testing.T) {
	e := newEnv(t, nil)
	first := e.start("expect", testcluster.PodIP())
	e.Kubelet.ForceDelete(e.NS, "expect")
	e.daemon(first).Close()
	fresh := e.start("expect", testcluster.PodIP())

	r := runCLI(t, e, "", "expect", "--expect-uid", string(first.UID), "--", "true")
	if obj := cliError(t, r); r.Code != 125 || obj["code"] != execute.CodeUIDChanged || obj["executed"] != "no" {
		t.Fatalf("--expect-uid of the first Pod: exit %d %s", r.Code, r.Stderr)
	}
	r = runCLI(t, e, "", "expect", "--expect-uid", string(fresh.UID), "--expect-ip", first.Status.PodIP, "--", "true")
	if obj := cliError(t, r); r.Code != 125 || obj["code"] != execute.CodeIPStale {
		t.Fatalf("--expect-ip of the first Pod: exit %d %s", r.Code, r.Stderr)
	}
	if n := e.execRequests("expect"); n != 0 {
		t.Fatalf("%d exec requests reached the re-created Pod", n)
	}
	r = runCLI(t, e, "", "expect", "--expect-uid", string(fresh.UID), "--expect-ip", fresh.Status.PodIP, "--", "true")
	if r.Code != 0 {
		t.Fatalf("matching expectations: exit %d %s", r.Code, r.Stderr)
	}
}

// Without -n a sandbox id is looked up in every namespace: found when it
// is unique, refused with the candidates when it is not.
func TestCLIExecFindsSandboxWithoutNamespace(t *testing.T) {
	e := newEnv(t, nil)
	uniq := "uniq-" + e.NS
	p := e.start(uniq, testcluster.PodIP())
	var out, errOut strings.Builder
	code := runCLIArgs(t, e, &out, &errOut, "exec", uniq, "--", "true")
	if code != 0 {
		t.Fatalf("unique id without -n: exit %d %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), string(p.UID)) {
		t.Fatalf("ran elsewhere: %q", out.String())
	}

	e2 := newEnv(t, nil)
	twin := "twin-" + e.NS
	e.start(twin, testcluster.PodIP())
	e2.start(twin, testcluster.PodIP())
	out.Reset()
	errOut.Reset()
	code = runCLIArgs(t, e, &out, &errOut, "exec", twin, "--", "true")
	if code != 125 || !strings.Contains(errOut.String(), `"AMBIGUOUS"`) ||
		!strings.Contains(errOut.String(), e.NS) || !strings.Contains(errOut.String(), e2.NS) {
		t.Fatalf("ambiguous id: exit %d %s", code, errOut.String())
	}

	// In the wrong namespace: NOT_FOUND names where it is.
	out.Reset()
	errOut.Reset()
	code = runCLIArgs(t, e, &out, &errOut, "-n", e2.NS, "exec", uniq, "--", "true")
	if code != 125 || !strings.Contains(errOut.String(), `"NOT_FOUND"`) || !strings.Contains(errOut.String(), "namespace "+e.NS) {
		t.Fatalf("wrong namespace: exit %d %s", code, errOut.String())
	}
}
