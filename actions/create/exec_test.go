package create_test

import (
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/internal/testcluster"
)

// useRealExecPath wires the production prober: a test kubelet serving
// pods/portforward into each Pod's fake execd, reached through the real
// API server by actions/execute's identity-checked exec path.
func (h *harness) useRealExecPath() *testcluster.Node {
	h.t.Helper()
	n := h.c.StartNode(h.t, "create-"+h.ns, testcluster.NodeOptions{})
	h.creator.Prober = &create.ExecProber{Exec: execute.New(execute.Options{
		Cluster: h.clients, Transports: execute.DefaultTransports(h.clients, "", 0)})}
	return n
}

func TestReadyThroughRealExecPath(t *testing.T) {
	h := newHarness(t)
	e := h.useRealExecPath()
	r, pod := h.startSvc(create.Request{ExecdTimeout: 20 * time.Second})
	h.kl.Schedule(h.ns, pod.Name, e.Name)
	running := h.kl.SetRunning(h.ns, pod.Name, testcluster.PodIP())
	r.until(t, create.StageStarting)
	// The daemon comes up a moment after the container: Starting must wait
	// for it, not report Ready on Pod Running.
	time.Sleep(300 * time.Millisecond)
	e.StartExecd(running, "")
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
	h.kl.Schedule(h.ns, pod.Name, e.Name)
	h.kl.SetRunning(h.ns, pod.Name, testcluster.PodIP()) // no daemon ever starts
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeExecdUnreachable || err.Stage != create.StageStarting {
		t.Fatalf("err = %v", err)
	}
	t.Logf("refusal: %s", err.Message)
	h.assertCleanedUp(err)
}
