// Package nocrds_test runs against a cluster without any sandbox engine
// (testcluster.NoCRDs): discovery must report the missing CRDs as notes, not
// errors, and Pods keep working.
package nocrds_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/sweep"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

func TestMain(m *testing.M) {
	testcluster.MainWith(m, testcluster.Options{CRDs: testcluster.NoCRDs})
}

func TestDiscoverSourcesNotesMissingCRDs(t *testing.T) {
	src, err := kube.DiscoverSources(testcluster.Context(t), testcluster.Get(t).Kube.Discovery())
	if err != nil {
		t.Fatalf("DiscoverSources without CRDs must not fail: %v", err)
	}
	if src.BatchSandbox || src.Pool || src.Snapshot || src.Agent != nil {
		t.Fatalf("sources found on a cluster without CRDs: %+v", src)
	}
	notes := strings.Join(src.Notes, "\n")
	for _, want := range []string{"BatchSandbox CRD not installed", "agent-sandbox Sandbox CRD not installed"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", src.Notes, want)
		}
	}
}

func TestPodsWorkWithoutCRDs(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := c.Kubelet(t)
	kl.CreatePod(ns, testcluster.SandboxPod("plain", ""))
	if p := kl.SetRunning(ns, "plain", "10.0.0.1"); p.Status.PodIP != "10.0.0.1" {
		t.Fatalf("podIP = %q", p.Status.PodIP)
	}
}

// A fleet that clearly uses an engine (Pods labelled with a BatchSandbox's
// name) read on a cluster without its CRD is a partial read: the sweep
// says which CRD is missing and that Pods name sandboxes of it. Plain-Pod
// sandboxes alone use no CRD: their read is whole.
func TestSweepPartialWhenUsedCRDMissing(t *testing.T) {
	c := testcluster.Get(t)
	sweepNS := func(ns string) sweep.ContextResult {
		t.Helper()
		clients, err := kube.NewClients(c.Config, ns)
		if err != nil {
			t.Fatal(err)
		}
		rep := sweep.Sweep(testcluster.Context(t), []sweep.Target{sweep.ClientsTarget("test", clients)}, sweep.Options{Namespace: ns, Timeout: time.Minute})
		if len(rep.Contexts) != 1 || !rep.Contexts[0].Reachable {
			t.Fatalf("sweep of %s: %+v", ns, rep.Contexts)
		}
		return rep.Contexts[0]
	}

	plain := c.Namespace(t)
	kl := c.Kubelet(t)
	kl.CreatePod(plain, testcluster.SandboxPod("plain", ""))
	kl.SetRunning(plain, "plain", "10.0.0.2")
	if got := sweepNS(plain); got.Partial {
		t.Errorf("plain-Pod sandboxes only: partial %v", got.Unseen)
	}

	used := c.Namespace(t)
	pod := testcluster.SandboxPod("bsbx-a-0", "")
	pod.Labels[osv1.LabelBatchSandboxName] = "bsbx-a"
	kl.CreatePod(used, pod)
	kl.SetRunning(used, "bsbx-a-0", "10.0.0.3")
	got := sweepNS(used)
	if !got.Partial || !strings.Contains(strings.Join(got.Unseen, "\n"), "BatchSandbox CRD is not installed") {
		t.Errorf("Pods of a BatchSandbox without its CRD: partial %v, unseen %q; want partial naming the missing CRD", got.Partial, got.Unseen)
	}
}
