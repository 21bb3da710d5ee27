package create_test

import (
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/kube/execd/execdtest"
)

// Pod IPs on loopback for this package only (actions/execute draws 127.100-239.x.y).
var ipSeq atomic.Int64

func nextIP() string {
	n := ipSeq.Add(1)
	return fmt.Sprintf("127.78.%d.%d", n/250, n%250+2)
}

// execPath wires the production prober: a test kubelet serving
// pods/portforward into each Pod's fake execd, reached through the real
// API server by actions/execute's identity-checked exec path.
type execPath struct {
	node string
	pods *execdtest.Pods
}

func (h *harness) useRealExecPath() *execPath {
	h.t.Helper()
	e := &execPath{node: "create-" + h.ns, pods: execdtest.NewPods()}
	kl, err := kubelettest.Start(kubelettest.Config{Addr: "127.0.0.1:0", LookupPod: kubelettest.APIPodLookup(h.c.Kube),
		Exec: kubelettest.ShellExec, PortForward: e.pods.Forward})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { kl.Close() })
	if _, err := kl.RegisterNode(h.ctx, h.c.Kube, e.node); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(e.pods.Close)
	h.creator.Prober = &create.ExecProber{Exec: execute.New(execute.Options{
		Cluster: h.clients, Transports: execute.DefaultTransports(h.clients, "", 0)})}
	return e
}

func TestReadyThroughRealExecPath(t *testing.T) {
	h := newHarness(t)
	e := h.useRealExecPath()
	r, pod := h.startSvc(create.Request{ExecdTimeout: 20 * time.Second})
	h.kl.Schedule(h.ns, pod.Name, e.node)
	running := h.kl.SetRunning(h.ns, pod.Name, nextIP())
	r.until(t, create.StageStarting)
	// The daemon comes up a moment after the container: Starting must wait
	// for it, not report Ready on Pod Running.
	time.Sleep(300 * time.Millisecond)
	d, err := execdtest.Start(execdtest.Config{Addr: net.JoinHostPort(running.Status.PodIP, strconv.Itoa(execd.DefaultPort)),
		Identity: fmt.Sprintf("pod=%s/%s uid=%s", running.Namespace, running.Name, running.UID)})
	if err != nil {
		t.Fatal(err)
	}
	e.pods.Add(string(running.UID), d)
	res, cerr := r.wait(t)
	if cerr != nil {
		t.Fatalf("Run: %v", cerr)
	}
	if res.Stage != create.StageReady {
		t.Fatalf("stage %s", res.Stage)
	}
}

func TestExecdSilentThroughRealExecPath(t *testing.T) {
	h := newHarness(t)
	e := h.useRealExecPath()
	r, pod := h.startSvc(create.Request{ExecdTimeout: 2 * time.Second})
	h.kl.Schedule(h.ns, pod.Name, e.node)
	h.kl.SetRunning(h.ns, pod.Name, nextIP()) // no daemon ever starts
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeExecdUnreachable || err.Stage != create.StageStarting {
		t.Fatalf("err = %v", err)
	}
	t.Logf("refusal: %s", err.Message)
	h.assertCleanedUp(err)
}
