package execute_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/syncbuf"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
)

func asExecError(t *testing.T, err error) *refusal.Error {
	t.Helper()
	e, ok := errors.AsType[*refusal.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not an *refusal.Error", err, err)
	}
	return e
}

// refusedByEveryTransport runs id in ref through each transport, one
// subtest each, and returns the refusals; a subtest fails unless its
// transport refused with code before anything ran.
func refusedByEveryTransport(t *testing.T, x *execute.Executor, ns, ref, code string) []*refusal.Error {
	t.Helper()
	var refusals []*refusal.Error
	for _, via := range allVias {
		t.Run(string(via), func(t *testing.T) {
			_, err := x.Run(ctxT(t), execute.Request{Namespace: ns, Ref: ref, Via: via, Command: []string{"id"}, Stdout: io.Discard})
			ee := asExecError(t, err)
			if ee.Code != code || ee.Executed != refusal.ExecutedNo {
				t.Fatalf("got %s", ee.JSON())
			}
			refusals = append(refusals, ee)
		})
	}
	return refusals
}

// Incident 002 replayed: sandbox A's Pod dies, Pod B of another sandbox gets
// A's IP, and B's execd listens on it. Exec to A must be refused by every
// transport before anything reaches B.
func TestExecIncidentReplayIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	_, b := e.ipTaken("sandbox-a", "sandbox-b")
	x := e.executor(execute.Options{})

	for _, via := range allVias {
		t.Run(string(via), func(t *testing.T) {
			var out syncbuf.Buffer
			_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "sandbox-a", Via: via,
				Command: []string{"sh", "-c", "echo pi > pi.txt"}, Stdout: &out, Stderr: &out})
			ee := asExecError(t, err)
			if ee.Code != execute.CodeIPTaken && ee.Code != execute.CodePodNotRunning {
				t.Errorf("code %s, want IP_TAKEN or POD_NOT_RUNNING: %s", ee.Code, ee.Message)
			}
			if ee.Executed != refusal.ExecutedNo {
				t.Errorf("executed %s, want no", ee.Executed)
			}
			if !strings.Contains(string(ee.JSON()), "sandbox-b") {
				t.Errorf("evidence does not name the holder: %s", ee.JSON())
			}
			if out.String() != "" {
				t.Errorf("output %q from a refused command", out.String())
			}
			t.Logf("%s", ee.JSON())
		})
	}
	if n := e.daemon(b).Requests(); n != 0 {
		t.Errorf("B's execd received %d requests, want 0: %v", n, e.daemon(b).Seen())
	}
	if n := e.execRequests("sandbox-a") + e.execRequests("sandbox-b"); n != 0 {
		t.Errorf("the kubelet received %d exec/port-forward requests, want 0", n)
	}

	// Control: the very same request to A's recorded address, sent without
	// the check, lands in B's container with success.
	var out syncbuf.Buffer
	tr := &execute.ExecdDirectTransport{}
	res, err := tr.Exec(ctxT(t), execute.Dispatch{Namespace: e.NS, Pod: "sandbox-a", Address: b.Status.PodIP,
		Command: []string{"sh", "-c", "echo pi > pi.txt"}, Stdout: &out, Stderr: &out})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("control: %v exit %d", err, res.ExitCode)
	}
	if !strings.Contains(out.String(), "pod="+e.NS+"/sandbox-b uid="+string(b.UID)) || e.daemon(b).Commands() != 1 {
		t.Fatalf("control did not reach B (output %q, B commands %d)", out.String(), e.daemon(b).Commands())
	}
}

// The model has not seen B yet (its IP index lags): the live list by field
// selector still catches the stranger for execd-direct.
func TestExecIncidentWithLaggingModel(t *testing.T) {
	e := newEnv(t, nil)
	ip := testcluster.PodIP()
	a := e.start("lag-a", ip)
	e.observe(a) // the model still believes A is Running at ip
	e.kill(a)
	b := e.start("lag-b", ip)
	x := e.executor(execute.Options{})
	_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "lag-a", Via: execute.ViaExecdDirect, Command: []string{"id"}, Stdout: io.Discard})
	ee := asExecError(t, err)
	if ee.Code != execute.CodeIPTaken || ee.Executed != refusal.ExecutedNo {
		t.Fatalf("got %s", ee.JSON())
	}
	if e.daemon(b).Requests() != 0 {
		t.Fatal("B received a request")
	}
}

func TestExecSameNameRecreationIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	old := e.running("same")
	e.Kubelet.ForceDelete(e.NS, "same")
	e.daemon(old).Close() // its execd went with it
	fresh := e.start("same", testcluster.PodIP())
	x := e.executor(execute.Options{})
	refusedByEveryTransport(t, x, e.NS, "same", execute.CodeUIDChanged)
	if e.daemon(fresh).Requests() != 0 || e.execRequests("same") != 0 {
		t.Fatal("the re-created Pod received a request")
	}
}

func TestExecPodDeletedBetweenCacheAndCheckIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.running("gone") // the cache still has it
	e.Kubelet.ForceDelete(e.NS, "gone")
	x := e.executor(execute.Options{})
	refusedByEveryTransport(t, x, e.NS, "gone", execute.CodePodGone)
}

func TestExecDeletingPodIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.running("deleting")
	e.Kubelet.DeleteHeld(e.NS, "deleting")
	t.Cleanup(func() { e.Kubelet.Release(e.NS, "deleting") })
	x := e.executor(execute.Options{})
	for _, r := range refusedByEveryTransport(t, x, e.NS, "deleting", execute.CodePodDeleting) {
		if r.Retryable {
			t.Errorf("retryable: %s", r.JSON())
		}
		// deletionTimestamp is the end of the grace period: the refusal
		// says when the delete was asked for and when its grace ends.
		if !strings.Contains(r.Message, "deletion requested") || !strings.Contains(r.Message, "grace ends") {
			t.Errorf("the refusal does not say which time is which: %s", r.Message)
		}
	}
}

func TestExecHealthySandboxThroughEachTransport(t *testing.T) {
	e := newEnv(t, nil)
	p := e.running("healthy")
	x := e.executor(execute.Options{})
	identity := "pod=" + e.NS + "/healthy uid=" + string(p.UID)
	for _, via := range allVias {
		t.Run(string(via), func(t *testing.T) {
			var out, errOut syncbuf.Buffer
			res, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "healthy", Via: via,
				Command: []string{"sh", "-c", "echo hello world; stderr oops; exit 3"}, Stdout: &out, Stderr: &errOut})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if res.ExitCode != 3 {
				t.Errorf("exit code %d, want 3", res.ExitCode)
			}
			if !strings.Contains(out.String(), identity) || !strings.HasSuffix(out.String(), "hello world\n") {
				t.Errorf("stdout %q, want the identity of %s and hello world", out.String(), identity)
			}
			// The fake kubelet's identity line echoes the wrapped argv; what
			// follows it is the command's own output.
			if _, rest, _ := strings.Cut(out.String(), "\n"); strings.Contains(rest, "__sandscope_end_") {
				t.Errorf("end marker leaked: %q", out.String())
			}
			if errOut.String() != "oops\n" {
				t.Errorf("stderr %q", errOut.String())
			}
			if res.Target.UID != string(p.UID) || res.Target.Container != "sandbox" {
				t.Errorf("target %+v", res.Target)
			}
		})
	}
	// pod/NAME works too, exit 0.
	res, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "pod/healthy", Command: []string{"true"}, Stdout: io.Discard})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("pod/NAME: %v %d", err, res.ExitCode)
	}
	if n := e.daemon(p).Commands(); n != 2 {
		t.Errorf("execd ran %d commands, want 2 (execd and execd-direct)", n)
	}
}

func TestExecStdinThroughKube(t *testing.T) {
	e := newEnv(t, nil)
	e.running("stdin")
	x := e.executor(execute.Options{})
	var out syncbuf.Buffer
	res, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "stdin", Command: []string{"cat"},
		Stdin: strings.NewReader("line1\nline2\n"), Stdout: &out, Stderr: &out})
	if err != nil || res.ExitCode != 0 || !strings.HasSuffix(out.String(), "line1\nline2\n") {
		t.Fatalf("%v %d %q", err, res.ExitCode, out.String())
	}
	_, err = x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "stdin", Via: execute.ViaExecd, Command: []string{"cat"},
		Stdin: strings.NewReader("x"), Stdout: &out})
	if ee := asExecError(t, err); ee.Code != refusal.CodeUsage || ee.Executed != refusal.ExecutedNo {
		t.Fatalf("stdin over execd: %s", ee.JSON())
	}
}

func TestExecReadOnlyIsRefusedInActions(t *testing.T) {
	e := newEnv(t, nil)
	p := e.running("ro")
	x := e.executor(execute.Options{ReadOnly: true})
	for _, via := range allVias {
		_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "ro", Via: via, Command: []string{"id"}, Stdout: io.Discard})
		if ee := asExecError(t, err); ee.Code != refusal.CodeReadOnly || ee.Executed != refusal.ExecutedNo {
			t.Fatalf("%s: %s", via, ee.JSON())
		}
	}
	err := x.Shell(ctxT(t), e.fleet.Snapshot().Sandbox("pod/"+e.NS+"/ro"), execute.ShellOptions{}).Run()
	if ee := asExecError(t, err); ee.Code != refusal.CodeReadOnly {
		t.Fatalf("shell: %s", ee.JSON())
	}
	if e.execRequests("ro") != 0 || e.daemon(p).Requests() != 0 {
		t.Fatal("a read-only exec reached the Pod")
	}
}

// The kubelet leg dies mid-command: client-go returns nil, but the end
// marker never came, so the outcome is unknown (exit 126), never success.
func TestExecKubeletDiesMidCommandIsUnknown(t *testing.T) {
	started := make(chan struct{}, 1)
	e := newEnv(t, kubelettest.DiesMidCommand(started))
	e.running("dies")
	x := e.executor(execute.Options{})
	go func() {
		<-started
		time.Sleep(100 * time.Millisecond)
		e.Server.Close()
	}()
	var out syncbuf.Buffer
	res, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "dies", Command: []string{"sleep", "10"}, Stdout: &out})
	if err == nil {
		t.Fatalf("a dead node read as success: exit %d, output %q", res.ExitCode, out.String())
	}
	ee := asExecError(t, err)
	if ee.Executed != refusal.ExecutedUnknown || ee.Retryable {
		t.Fatalf("got %s", ee.JSON())
	}
	if out.String() != "working\n" {
		t.Errorf("partial output %q", out.String())
	}
}

// execd's stream ends without an end frame: unknown as well.
func TestExecdStreamWithoutEndFrameIsUnknown(t *testing.T) {
	e := newEnv(t, nil)
	e.running("vanish")
	x := e.executor(execute.Options{})
	for _, via := range []execute.Via{execute.ViaExecd, execute.ViaExecdDirect} {
		_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "vanish", Via: via, Command: []string{"vanish"}, Stdout: io.Discard})
		if ee := asExecError(t, err); ee.Executed != refusal.ExecutedUnknown {
			t.Fatalf("%s: %s", via, ee.JSON())
		}
	}
}

// The Pod is re-created under the same name while the command runs: the
// command's end was seen, but where it ran is not proven: unknown.
func TestExecPodReplacedDuringCommandIsUnknown(t *testing.T) {
	var e *env
	e = newEnv(t, func(ctx context.Context, req kubelettest.ExecRequest) error {
		cs := e.C.Kube.CoreV1().Pods(req.Namespace)
		zero := int64(0)
		if err := cs.Delete(ctx, req.Pod, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			return err
		}
		fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: req.Pod, Labels: map[string]string{"opensandbox.io/id": req.Pod}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "sandbox", Image: "x"}}}}
		if _, err := cs.Create(ctx, fresh, metav1.CreateOptions{}); err != nil {
			return err
		}
		return kubelettest.ShellExec(ctx, req)
	})
	e.running("swap")
	x := e.executor(execute.Options{})
	_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "swap", Command: []string{"true"}, Stdout: io.Discard})
	ee := asExecError(t, err)
	if ee.Code != execute.CodeUIDChanged || ee.Executed != refusal.ExecutedUnknown {
		t.Fatalf("got %s", ee.JSON())
	}
}

func TestExecdTokenIsSentAndNeverPrinted(t *testing.T) {
	e := newEnv(t, nil)
	e.token = "s3cret-token-value"
	e.running("token")
	ok := e.executor(execute.Options{})
	for _, via := range []execute.Via{execute.ViaExecd, execute.ViaExecdDirect} {
		if res, err := ok.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "token", Via: via, Command: []string{"true"}, Stdout: io.Discard}); err != nil || res.ExitCode != 0 {
			t.Fatalf("%s with the right token: %v", via, err)
		}
	}
	bad := e.executor(execute.Options{Transports: execute.DefaultTransports(e.clients, "wrong-"+e.token, 0)})
	for _, via := range []execute.Via{execute.ViaExecd, execute.ViaExecdDirect} {
		_, err := bad.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "token", Via: via, Command: []string{"true"}, Stdout: io.Discard})
		ee := asExecError(t, err)
		if ee.Code != refusal.CodeForbidden || ee.Executed != refusal.ExecutedNo {
			t.Fatalf("%s: %s", via, ee.JSON())
		}
		if s := string(ee.JSON()) + ee.Error() + err.Error(); strings.Contains(s, e.token) {
			t.Fatalf("the token appears in the error: %s", s)
		}
	}
}

func TestExecBareContainerNotRunning(t *testing.T) {
	e := newEnv(t, nil)
	e.running("crash")
	e.Kubelet.SetWaiting(e.NS, "crash", "sandbox", "CrashLoopBackOff", "back-off")
	x := e.executor(execute.Options{})
	_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "crash", Command: []string{"id"}, Stdout: io.Discard})
	if ee := asExecError(t, err); ee.Code != execute.CodeContainerNotRunning || ee.Executed != refusal.ExecutedNo {
		t.Fatalf("got %s", ee.JSON())
	}
}

// killedOnCancel is a transport whose command is killed when the client
// leaves and still reports the kill's exit status (as the demo's does).
type killedOnCancel struct{}

func (killedOnCancel) Streams() bool { return true }
func (killedOnCancel) Exec(ctx context.Context, _ execute.Dispatch) (execute.Outcome, error) {
	<-ctx.Done()
	return execute.Outcome{ExitCode: 137}, nil
}

// An exit status that arrives only because --timeout cut the command off
// is not the command's: the outcome is TIMEOUT, executed unknown.
func TestExecTimeoutWinsOverAKilledExitStatus(t *testing.T) {
	e := newEnv(t, nil)
	e.running("killed")
	x := e.executor(execute.Options{Transports: map[execute.Via]execute.Transport{execute.ViaKube: killedOnCancel{}}})
	_, err := x.Run(ctxT(t), execute.Request{Namespace: e.NS, Ref: "killed", Command: []string{"sleep", "5"}, Timeout: 200 * time.Millisecond, Stdout: io.Discard})
	ee := asExecError(t, err)
	if ee.Code != execute.CodeTimeout || ee.Executed != refusal.ExecutedUnknown {
		t.Fatalf("got %s", ee.JSON())
	}
}
