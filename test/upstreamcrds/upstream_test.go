// Package upstreamcrds_test installs the engines' unchanged CRD manifests
// from ../shared/crds and checks that what testcluster (and so every other
// test) writes is accepted by the real schemas.
package upstreamcrds_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

func TestMain(m *testing.M) {
	testcluster.MainWith(m, testcluster.Options{CRDs: testcluster.UpstreamCRDs})
}

func TestUpstreamSchemasAcceptWhatTestsWrite(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct, kl := c.Controller(t), c.Kubelet(t)

	pod := testcluster.SandboxPod("sbx-0", "python:3.12-slim", "tail", "-f", "/dev/null")
	bsbx := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("sbx", pod))
	kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(pod, bsbx, 0))
	kl.SetRunning(ns, "sbx-0", "10.244.1.5")
	ct.SetEndpoints(ns, "sbx", "10.244.1.5")
	got := ct.SetBatchSandboxStatus(ns, "sbx", map[string]any{
		"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1, "taskRunning": 1,
		"conditions": []map[string]any{{"type": "Ready", "status": "True", "reason": "PodReady", "message": "", "lastTransitionTime": "2026-11-29T17:00:00Z"}},
	})
	for _, k := range testcluster.BatchSandboxStatusCounters {
		if _, found, _ := unstructured.NestedInt64(got.Object, "status", k); !found {
			t.Errorf("status.%s missing after the write", k)
		}
	}
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Succeed" {
		t.Errorf("phase = %q", phase)
	}

	ct.Create(testcluster.PoolGVR, ns, testcluster.Pool("pool-a", testcluster.SandboxPod("x", ""), 1, 3, 0, 10))
	ct.SetStatus(testcluster.PoolGVR, ns, "pool-a", map[string]any{"total": 3, "allocated": 1, "available": 2, "revision": "r1"})
	ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.PooledBatchSandbox("pooled", "pool-a"))
	ct.SetAllocStatus(ns, "pooled", "pool-a-abcde")

	agent := ct.Create(testcluster.AgentSandboxGVR, ns, testcluster.AgentSandbox("agent", testcluster.SandboxPod("agent", "")))
	if agent.GetAPIVersion() != "agents.x-k8s.io/v1beta1" {
		t.Errorf("agent sandbox apiVersion = %q", agent.GetAPIVersion())
	}
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "agent", map[string]any{
		"podIPs": []string{"10.244.1.9"}, "nodeName": testcluster.DefaultNode, "selector": "agents.x-k8s.io/sandbox-name-hash=abc",
		"serviceFQDN": "agent." + ns + ".svc.cluster.local",
	})

	snap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": testcluster.SandboxSnapshotGVR.GroupVersion().String(), "kind": "SandboxSnapshot",
		"metadata": map[string]any{"name": "snap"}, "spec": map[string]any{"sandboxName": "sbx"},
	}}
	ct.Create(testcluster.SandboxSnapshotGVR, ns, snap)

	// sandscope's own clients read them back.
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	list, err := clients.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).List(testcluster.Context(t), metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("listing BatchSandboxes: %d items, err %v", len(list.Items), err)
	}
}

// The real schemas are in force: a status write without the counters they
// require is refused, so SetBatchSandboxStatus's defaults matter.
func TestUpstreamBatchSandboxStatusRequiresCounters(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct := c.Controller(t)
	ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("sbx", testcluster.SandboxPod("sbx-0", "")))
	obj := ct.Get(testcluster.BatchSandboxGVR, ns, "sbx")
	obj.Object["status"] = map[string]any{"phase": "Pending"}
	_, err := c.Dynamic.Resource(testcluster.BatchSandboxGVR).Namespace(ns).UpdateStatus(testcluster.Context(t), obj, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("status without counters: err = %v, want Invalid", err)
	}
	obj = ct.Get(testcluster.BatchSandboxGVR, ns, "sbx")
	obj.Object["status"] = map[string]any{"phase": "Running"} // not in the phase enum
	for _, k := range testcluster.BatchSandboxStatusCounters {
		obj.Object["status"].(map[string]any)[k] = int64(0)
	}
	_, err = c.Dynamic.Resource(testcluster.BatchSandboxGVR).Namespace(ns).UpdateStatus(testcluster.Context(t), obj, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("status phase Running: err = %v, want Invalid (enum)", err)
	}
}

func TestUpstreamDiscovery(t *testing.T) {
	src, err := kube.DiscoverSources(testcluster.Context(t), testcluster.Get(t).Kube.Discovery())
	if err != nil {
		t.Fatalf("DiscoverSources: %v", err)
	}
	if !src.BatchSandbox || !src.Pool || !src.Snapshot || src.Agent == nil || src.Agent.Version != "v1beta1" {
		t.Fatalf("sources = %+v", src)
	}
	if len(src.Notes) != 0 {
		t.Fatalf("notes with every CRD installed: %v", src.Notes)
	}
}
