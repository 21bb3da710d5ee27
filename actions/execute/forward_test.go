package execute_test

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/testcluster"
)

func ping(addr string) error {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/ping")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &net.AddrError{Err: "status " + resp.Status, Addr: addr}
	}
	return nil
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// A healthy sandbox's forward carries bytes from a local port to its Pod's
// execd, on a free local port or the one asked for.
func TestForwardCarriesBytesToHealthySandbox(t *testing.T) {
	e := newEnv(t, nil)
	p := e.running("fwd-ok")
	x := e.executor(execute.Options{Forwarder: e.clients})
	sb := e.fleet.Snapshot().Sandbox("pod/" + e.NS + "/fwd-ok")
	if sb == nil {
		t.Fatal("the model does not hold the sandbox")
	}

	f, err := x.Forward(ctxT(t), execute.ForwardRequest{Sandbox: sb})
	if err != nil {
		t.Fatalf("forward: %v", err)
	}
	defer f.Close()
	if err := ping(f.LocalAddr); err != nil {
		t.Fatalf("GET /ping through %s: %v", f.LocalAddr, err)
	}
	if e.daemon(p).Requests() != 1 {
		t.Errorf("the Pod's execd saw %d requests, want 1", e.daemon(p).Requests())
	}
	if f.Target.UID != string(p.UID) || f.RemotePort != 44772 || !strings.HasPrefix(f.LocalAddr, "127.0.0.1:") {
		t.Errorf("forward %+v", f)
	}

	local := freePort(t)
	g, err := x.Forward(ctxT(t), execute.ForwardRequest{Namespace: e.NS, Ref: "fwd-ok", LocalPort: local, RemotePort: 44772})
	if err != nil {
		t.Fatalf("forward on %d: %v", local, err)
	}
	if g.LocalAddr != "127.0.0.1:"+strconv.Itoa(local) {
		t.Errorf("local address %s, want port %d", g.LocalAddr, local)
	}
	if err := ping(g.LocalAddr); err != nil {
		t.Fatalf("GET /ping through %s: %v", g.LocalAddr, err)
	}
	g.Close()
	select {
	case <-g.Done():
	default:
		t.Fatal("Close returned before the forward ended")
	}
	if g.Err() != nil {
		t.Errorf("a forward the user closed reports %v", g.Err())
	}
	if err := ping(g.LocalAddr); err == nil {
		t.Error("the closed forward still answers")
	}
}

// A sandbox whose identity is broken is refused by the same check as exec,
// before any tunnel is asked of the kubelet.
func TestForwardRefusedBeforeAnyTunnel(t *testing.T) {
	e := newEnv(t, nil)

	// IP_TAKEN: A's Pod died and B holds A's address.
	_, b := e.ipTaken("fwd-a", "fwd-b")

	// UID_CHANGED: the Pod was re-created under the same name.
	old := e.running("fwd-same")
	e.Kubelet.ForceDelete(e.NS, "fwd-same")
	e.daemon(old).Close()
	fresh := e.start("fwd-same", testcluster.PodIP())

	x := e.executor(execute.Options{Forwarder: e.clients})
	snap := e.fleet.Snapshot()
	for _, tc := range []struct {
		name  string
		req   execute.ForwardRequest
		codes []string
	}{
		{"ip-taken row", execute.ForwardRequest{Sandbox: snap.Sandbox("pod/" + e.NS + "/fwd-a")}, []string{execute.CodeIPTaken}},
		{"ip-taken ref", execute.ForwardRequest{Namespace: e.NS, Ref: "fwd-a"}, []string{execute.CodeIPTaken}},
		{"uid-changed", execute.ForwardRequest{Namespace: e.NS, Ref: "fwd-same"}, []string{execute.CodeUIDChanged}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req.Sandbox == nil && tc.req.Ref == "" {
				t.Fatal("no target")
			}
			f, err := x.Forward(ctxT(t), tc.req)
			if f != nil {
				f.Close()
			}
			ee := asExecError(t, err)
			if !strings.Contains(strings.Join(tc.codes, " "), ee.Code) || ee.Executed != refusal.ExecutedNo {
				t.Fatalf("got %s, want %v, executed no", ee.JSON(), tc.codes)
			}
		})
	}
	for _, pod := range []string{"fwd-a", "fwd-b", "fwd-same"} {
		if n := e.execRequests(pod); n != 0 {
			t.Errorf("the kubelet received %d port-forward requests for %s, want 0", n, pod)
		}
	}
	if e.daemon(b).Requests() != 0 || e.daemon(fresh).Requests() != 0 {
		t.Error("a stranger's execd received a request")
	}

	ro := e.executor(execute.Options{Forwarder: e.clients, ReadOnly: true})
	_, err := ro.Forward(ctxT(t), execute.ForwardRequest{Namespace: e.NS, Ref: "fwd-b"})
	if ee := asExecError(t, err); ee.Code != refusal.CodeReadOnly {
		t.Fatalf("read-only: %s", ee.JSON())
	}
}

// pods/portforward is routed by name: once the Pod is re-created under the
// same name, the forward closes itself instead of reaching the new Pod.
func TestForwardClosesWhenPodRecreated(t *testing.T) {
	e := newEnv(t, nil)
	p := e.running("fwd-re")
	x := e.executor(execute.Options{Forwarder: e.clients})
	f, err := x.Forward(ctxT(t), execute.ForwardRequest{Namespace: e.NS, Ref: "fwd-re", Recheck: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("forward: %v", err)
	}
	defer f.Close()
	if err := ping(f.LocalAddr); err != nil {
		t.Fatalf("ping before: %v", err)
	}

	e.Kubelet.ForceDelete(e.NS, "fwd-re")
	e.daemon(p).Close()
	fresh := e.start("fwd-re", testcluster.PodIP())

	select {
	case <-f.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the forward to a re-created Pod is still open")
	}
	ee := asExecError(t, f.Err())
	if ee.Code != execute.CodeUIDChanged && ee.Code != execute.CodePodGone {
		t.Fatalf("closed with %s, want UID_CHANGED or POD_GONE", ee.JSON())
	}
	t.Logf("closed: %s", ee.Message)
	if err := ping(f.LocalAddr); err == nil {
		t.Error("the local port still answers after the forward closed")
	}
	if n := e.daemon(fresh).Requests(); n != 0 {
		t.Errorf("the re-created Pod's execd received %d requests", n)
	}
}

// Another Pod taking the sandbox's address while the forward is open (the
// model's IP index sees it) closes the forward too.
func TestForwardClosesWhenAddressTaken(t *testing.T) {
	e := newEnv(t, nil)
	ip := testcluster.PodIP()
	a := e.start("fwd-ipa", ip)
	e.observe(a)
	x := e.executor(execute.Options{Forwarder: e.clients})
	f, err := x.Forward(ctxT(t), execute.ForwardRequest{Sandbox: e.fleet.Snapshot().Sandbox("pod/" + e.NS + "/fwd-ipa"),
		Recheck: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("forward: %v", err)
	}
	defer f.Close()
	if err := ping(f.LocalAddr); err != nil {
		t.Fatalf("ping before: %v", err)
	}

	e.Kubelet.CreatePod(e.NS, testcluster.SandboxPod("fwd-ipb", ""))
	e.Kubelet.Schedule(e.NS, "fwd-ipb", e.Node.Name)
	b := e.Kubelet.SetRunning(e.NS, "fwd-ipb", ip)
	e.observe(b)

	select {
	case <-f.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the forward is still open while another Pod holds its address")
	}
	if ee := asExecError(t, f.Err()); ee.Code != execute.CodeIPTaken || !strings.Contains(ee.Message, "fwd-ipb") {
		t.Fatalf("closed with %s, want IP_TAKEN naming fwd-ipb", ee.JSON())
	}
}
