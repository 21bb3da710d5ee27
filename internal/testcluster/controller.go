package testcluster

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// BatchSandboxStatusCounters are the status fields the real BatchSandbox
// CRD requires in every status write; SetBatchSandboxStatus sends 0 for any
// the caller leaves out.
var BatchSandboxStatusCounters = []string{"replicas", "allocated", "ready", "taskRunning", "taskSucceed", "taskFailed", "taskPending", "taskUnknown"}

// Controller plays the engines' controllers for one test: it creates their
// custom resources and writes their status (status subresource) and
// annotations, through the dynamic client (JSON, as custom resources are).
type Controller struct{ actor }

// Controller returns the engine-controller helpers for this test.
func (c *Cluster) Controller(t testing.TB) *Controller { return &Controller{c.actorFor(t)} }

// Create creates a custom resource (BatchSandbox, Pool, Sandbox, ...) in ns.
func (ct *Controller) Create(gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured) *unstructured.Unstructured {
	ct.t.Helper()
	out, err := ct.c.Dynamic.Resource(gvr).Namespace(ns).Create(ct.ctx, obj, metav1.CreateOptions{})
	if err != nil {
		ct.t.Fatalf("testcluster: creating %s %s/%s: %v", gvr.Resource, ns, obj.GetName(), err)
	}
	return out
}

// Get reads a custom resource.
func (ct *Controller) Get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	ct.t.Helper()
	out, err := ct.c.Dynamic.Resource(gvr).Namespace(ns).Get(ct.ctx, name, metav1.GetOptions{})
	if err != nil {
		ct.t.Fatalf("testcluster: reading %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return out
}

// Delete deletes a custom resource, as its owner or an operator does.
func (ct *Controller) Delete(gvr schema.GroupVersionResource, ns, name string) {
	ct.t.Helper()
	if err := ct.c.Dynamic.Resource(gvr).Namespace(ns).Delete(ct.ctx, name, metav1.DeleteOptions{}); err != nil {
		ct.t.Fatalf("testcluster: deleting %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

// SetStatus replaces .status of a custom resource through its status
// subresource, retrying on conflicts.
func (ct *Controller) SetStatus(gvr schema.GroupVersionResource, ns, name string, status map[string]any) *unstructured.Unstructured {
	ct.t.Helper()
	var out *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := ct.c.Dynamic.Resource(gvr).Namespace(ns).Get(ct.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.Object["status"] = jsonNumbers(status)
		out, err = ct.c.Dynamic.Resource(gvr).Namespace(ns).UpdateStatus(ct.ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		ct.t.Fatalf("testcluster: writing status of %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return out
}

// SetBatchSandboxStatus writes a BatchSandbox's status (phase, counters,
// conditions, ...), always including every counter the real CRD requires
// (missing ones are 0). Example:
//
//	ct.SetBatchSandboxStatus(ns, "sbx", map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
func (ct *Controller) SetBatchSandboxStatus(ns, name string, status map[string]any) *unstructured.Unstructured {
	ct.t.Helper()
	full := make(map[string]any, len(status)+len(BatchSandboxStatusCounters))
	for _, k := range BatchSandboxStatusCounters {
		full[k] = int64(0)
	}
	for k, v := range status {
		full[k] = v
	}
	return ct.SetStatus(BatchSandboxGVR, ns, name, full)
}

// SetAnnotations merges annotations into a custom resource's metadata
// (a value of "" removes the key) with a merge patch.
func (ct *Controller) SetAnnotations(gvr schema.GroupVersionResource, ns, name string, annotations map[string]string) *unstructured.Unstructured {
	ct.t.Helper()
	ann := make(map[string]any, len(annotations))
	for k, v := range annotations {
		if v == "" {
			ann[k] = nil
		} else {
			ann[k] = v
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		ct.t.Fatalf("testcluster: annotation patch: %v", err)
	}
	out, err := ct.c.Dynamic.Resource(gvr).Namespace(ns).Patch(ct.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		ct.t.Fatalf("testcluster: annotating %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return out
}

// SetEndpoints writes a BatchSandbox's sandbox.opensandbox.io/endpoints
// annotation: a JSON array with one IP per Pod index, "" for an unplaced Pod.
func (ct *Controller) SetEndpoints(ns, bsbx string, ips ...string) *unstructured.Unstructured {
	ct.t.Helper()
	if ips == nil {
		ips = []string{}
	}
	data, _ := json.Marshal(ips)
	return ct.SetAnnotations(BatchSandboxGVR, ns, bsbx, map[string]string{osv1.AnnotationEndpoints: string(data)})
}

// SetAllocStatus writes a pooled BatchSandbox's alloc-status annotation,
// {"pods":[...]} (the Pool Pods given to it).
func (ct *Controller) SetAllocStatus(ns, bsbx string, pods ...string) *unstructured.Unstructured {
	ct.t.Helper()
	return ct.SetAnnotations(BatchSandboxGVR, ns, bsbx, map[string]string{osv1.AnnotationAllocStatus: allocJSON(pods)})
}

// SetAllocReleased writes a pooled BatchSandbox's alloc-released annotation.
func (ct *Controller) SetAllocReleased(ns, bsbx string, pods ...string) *unstructured.Unstructured {
	ct.t.Helper()
	return ct.SetAnnotations(BatchSandboxGVR, ns, bsbx, map[string]string{osv1.AnnotationAllocReleased: allocJSON(pods)})
}

func allocJSON(pods []string) string {
	if pods == nil {
		pods = []string{}
	}
	data, _ := json.Marshal(map[string]any{"pods": pods})
	return string(data)
}

// jsonNumbers turns Go ints in a status map into int64, the only integer
// type unstructured objects can deep-copy.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonNumbers(e)
		}
		return out
	case []any:
		return jsonNumbersEach(x)
	case []map[string]any:
		return jsonNumbersEach(x)
	case []string:
		return jsonNumbersEach(x)
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

func jsonNumbersEach[E any](x []E) []any {
	out := make([]any, len(x))
	for i, e := range x {
		out[i] = jsonNumbers(e)
	}
	return out
}

// LabelPod sets labels on a Pod as an engine's controller does (the pool
// controller labels a Pod it allocates with the BatchSandbox's name).
func (ct *Controller) LabelPod(ns, name string, labels map[string]string) *corev1.Pod {
	ct.t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	out, err := ct.c.Kube.CoreV1().Pods(ns).Patch(ct.ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		ct.t.Fatalf("testcluster: labelling pod %s/%s: %v", ns, name, err)
	}
	return out
}

// PooledSandbox creates pooled BatchSandbox name on pool and plays the pool
// controller allocating pods to it: alloc-status, endpoints [ip], phase
// Succeed with one replica ready.
func (ct *Controller) PooledSandbox(ns, name, pool, ip string, pods ...string) *unstructured.Unstructured {
	ct.t.Helper()
	ct.Create(BatchSandboxGVR, ns, PooledBatchSandbox(name, pool))
	ct.SetAllocStatus(ns, name, pods...)
	ct.SetEndpoints(ns, name, ip)
	return ct.SetBatchSandboxStatus(ns, name, map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
}

// RecordPodCreated records the Event the BatchSandbox controller records
// when it creates pod for bsbx (reason SuccessfulCreate, on the
// BatchSandbox). The reason is spelled out, not taken from sandscope, so a
// test sees what the real controller writes.
func (ct *Controller) RecordPodCreated(ns string, bsbx *unstructured.Unstructured, pod string) *corev1.Event {
	ct.t.Helper()
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: bsbx.GetName() + ".", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "BatchSandbox", APIVersion: BatchSandboxGVR.GroupVersion().String(),
			Namespace: ns, Name: bsbx.GetName(), UID: bsbx.GetUID()},
		Reason: "SuccessfulCreate", Message: "Created pod: " + pod, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "batchsandbox-controller"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	out, err := ct.c.Kube.CoreV1().Events(ns).Create(ct.ctx, ev, metav1.CreateOptions{})
	if err != nil {
		ct.t.Fatalf("testcluster: recording SuccessfulCreate for pod %s/%s: %v", ns, pod, err)
	}
	return out
}
