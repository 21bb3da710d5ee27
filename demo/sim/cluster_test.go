package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet/fleettest"
)

// The engines' real CRDs: their schemas require every BatchSandbox status
// counter, so a write the real controller could not make is refused here too.
func TestMain(m *testing.M) {
	testcluster.MainWith(m, testcluster.Options{CRDs: testcluster.UpstreamCRDs})
}

// TestSimulatorOnARealAPIServer runs the simulator's examples against a real
// kube-apiserver (status through the status subresource, deletion through
// Delete with finalizers) and checks that every object is accepted and that a
// kube.Watcher sees the states the simulator plays.
func TestSimulatorOnARealAPIServer(t *testing.T) {
	ctx := t.Context()
	s, clients, ns := runSim(t, sim.Config{Seed: 11, Examples: true, ChurnPerHour: -1})
	w := kube.NewWatcher(clients, kube.WatcherOptions{Namespace: ns, ImageConfig: sim.ImageReader{}, StuckAfter: time.Second})
	go func() {
		if err := w.Run(ctx); err != nil {
			t.Errorf("watcher: %v", err)
		}
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if err := w.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}

	want := []string{
		string(model.IdentityOK), string(model.IdentityIPTaken), string(model.IdentityPodDead), string(model.IdentityPodGone),
		string(model.IdentityUIDChanged), string(model.IdentityIPStale),
		model.CodeStuckTerminating, model.CodeEntrypointNotRun, model.CodeImageConfigUnreadable, model.CodeNotExecReady,
		model.CodeStateMismatch, model.CodeFailedSticky, model.CodeBadAnnotation, model.CodeRestarted,
	}
	seen := fleettest.Sightings{}
	// On a timeout the check below names what was never seen.
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 150*time.Second, true, func(context.Context) (bool, error) {
		if errs := s.Errors(); len(errs) > 0 {
			t.Fatalf("the API server refused simulated operations: %v", errs)
		}
		seen.Note(w.Fleet().Snapshot())
		return len(seen.Missing(want)) == 0, nil
	})
	seen.Log(t, want)
	if m := seen.Missing(want); len(m) > 0 {
		t.Fatalf("the watcher never saw %v (%d simulated operations)", m, s.Ops())
	}
}

// runSim starts cfg's simulation in a fresh namespace of the test cluster
// (its nodes named after it, so that tests sharing the cluster do not meet),
// running until the test ends, and returns it with the namespace and
// clients for it. Operation errors are the caller's to check (Sim.Errors).
func runSim(t *testing.T, cfg sim.Config) (*sim.Sim, *kube.Clients, string) {
	t.Helper()
	c, ns := testcluster.GetWithNamespace(t)
	cfg.Namespaces, cfg.NodePrefix = []string{ns}, ns+"-node-"
	s, err := sim.New(c.Kube, c.Dynamic, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	go s.Run(t.Context()) //nolint:errcheck // ends with the test
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	return s, clients, ns
}

// TestAdoptionOnARealAPIServer: a BatchSandbox written the way sandscope's
// create writes it is adopted on a real API server (the engine's finalizer,
// its Pod, status through the status subresource), and the create's cleanup
// — the object, held by that finalizer, then its Pods with a grace period no
// kubelet would end here — leaves nothing behind.
func TestAdoptionOnARealAPIServer(t *testing.T) {
	ctx := t.Context()
	s, clients, ns := runSim(t, sim.Config{Seed: 12, ChurnPerHour: -1, PoolBuffer: -1, AdoptEvery: 500 * time.Millisecond})
	const name = "0f1e2d3c-made-by-sandscope"
	obj, err := kube.BatchSandboxObject(kube.SandboxSpec{Namespace: ns, Name: name, Image: sim.ImageScorer,
		Command: []string{osv1.BootstrapPath, "uvicorn", "scorer.app:app"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clients.CreateObject(ctx, kube.BatchSandboxGVR, obj); err != nil {
		t.Fatal(err)
	}
	var adopted string // what the last look saw
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		if errs := s.Errors(); len(errs) > 0 {
			t.Fatalf("the API server refused simulated operations: %v", errs)
		}
		pod, perr := clients.LivePod(ctx, ns, name+"-0")
		b, berr := clients.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		phase := ""
		if berr == nil {
			phase, _, _ = unstructured.NestedString(b.Object, "status", "phase")
		}
		adopted = fmt.Sprintf("pod %v (%v), phase %q (%v)", pod, perr, phase, berr)
		return perr == nil && pod.Status.Phase == corev1.PodRunning && phase == "Succeed" && len(b.GetFinalizers()) > 0, nil
	})
	if err != nil {
		t.Fatalf("not adopted within 30s: %s", adopted)
	}

	out := clients.DeleteSandbox(ctx, kube.BatchSandboxGVR, ns, name, osv1.LabelSandboxID+"="+name, nil, 15*time.Second)
	if !out.Gone || out.Err != nil {
		t.Fatalf("cleanup of the adopted sandbox: %+v", out)
	}
	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		_, lastErr = clients.LivePod(ctx, ns, name+"-0")
		return apierrors.IsNotFound(lastErr), nil
	})
	if err != nil {
		t.Fatalf("the adopted sandbox's Pod is still there after its cleanup: %v", lastErr)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("simulated operations failed: %v", errs)
	}
}
