// Package nocrds_test runs against a cluster without any sandbox engine
// (kubetest.NoCRDs): discovery must report the missing CRDs as notes, not
// errors, and Pods keep working.
package nocrds_test

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/kubetest"
)

func TestMain(m *testing.M) {
	kubetest.MainWith(m, kubetest.Options{CRDs: kubetest.NoCRDs})
}

func TestDiscoverSourcesNotesMissingCRDs(t *testing.T) {
	src, err := kube.DiscoverSources(kubetest.Context(t), kubetest.Get(t).Kube.Discovery())
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
	c := kubetest.Get(t)
	ns := c.Namespace(t)
	kl := c.Kubelet(t)
	kl.CreatePod(ns, kubetest.SandboxPod("plain", ""))
	if p := kl.SetRunning(ns, "plain", "10.0.0.1"); p.Status.PodIP != "10.0.0.1" {
		t.Fatalf("podIP = %q", p.Status.PodIP)
	}
}
