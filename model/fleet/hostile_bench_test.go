package fleet

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// hostileFleet is n ordinary sandboxes plus one BatchSandbox (replicas 1,
// another namespace) whose endpoints annotation lists the n other tenants'
// Pod IPs.
func hostileFleet(tb testing.TB, n int) *Fleet { return hostileFleetReplicas(tb, n, 1) }

// hostileFleetReplicas: the same, the hostile sandbox asking for replicas
// slots (spec.replicas is a number it writes; no Pod needs to exist).
func hostileFleetReplicas(tb testing.TB, n, replicas int) *Fleet {
	tb.Helper()
	f := New(Options{Now: func() time.Time { return ft0 }})
	ips := make([]string, n)
	for i := range n {
		f.UpsertBatchSandbox(benchBatchSandbox(i))
		f.UpsertPod(model.SlimPod(modeltest.FleetPod(i)))
		ips[i] = modeltest.FleetIP(i)
	}
	v, _ := json.Marshal(ips)
	u := modeltest.UnstructuredBatchSandbox("hostile", map[string]string{osv1.AnnotationEndpoints: string(v)})
	u.SetNamespace("tenant-x")
	u.Object["spec"].(map[string]any)["replicas"] = int64(replicas)
	f.UpsertBatchSandbox(model.BatchSandboxFromUnstructured(u))
	f.SetStatus(model.SourceStatus{Synced: true})
	f.Snapshot()
	return f
}

// BenchmarkPodUpdateBesideHostileSandbox: one status update of an
// unrelated Pod whose IP the hostile sandbox lists. Run:
// go test ./model/ -run '^$' -bench HostileSandbox -benchmem
// replicas-1000: slots capped at spec.replicas do not help when the tenant
// writes replicas 1000; a status update that leaves the Pod's IP, UID and
// sandbox as they were does not re-derive the sandboxes recording its IP.
func BenchmarkPodUpdateBesideHostileSandbox(b *testing.B) {
	const n = 1000
	for _, replicas := range []int{1, n} {
		b.Run(fmt.Sprintf("replicas-%d", replicas), func(b *testing.B) {
			f := hostileFleetReplicas(b, n, replicas)
			ups := [2][]*model.Pod{updatedPods(n, 1), updatedPods(n, 2)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.UpsertPod(ups[(i/n)%2][i%n])
			}
		})
	}
}

// The hostile sandbox gets one slot (its spec.replicas), not one per IP it
// lists, and the excess is a notice, not a claim on other tenants' Pods.
func TestSlotsCappedAtReplicas(t *testing.T) {
	f := hostileFleet(t, 50)
	sb := f.Snapshot().Sandbox(model.SandboxKey(model.EngineBatchSandbox, "tenant-x", "hostile"))
	if sb == nil {
		t.Fatal("hostile sandbox missing")
	}
	if len(sb.Slots) != 1 {
		t.Fatalf("%d slots, want 1 (spec.replicas)", len(sb.Slots))
	}
	found := false
	for _, n := range sb.Notices {
		found = found || n.Code == model.CodeBadAnnotation
	}
	if !found {
		t.Errorf("no BAD_ANNOTATION notice for the 49 extra endpoints: %v", sb.Notices)
	}
}

// A Pod update that keeps its IP and UID does not re-derive the sandboxes
// recording that IP, unless the Pod changed sandbox: then they name the
// new one as the holder, even when no sandbox links the Pod (here: an owner
// reference without a pod index).
func TestHolderChangeWithoutIPChange(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.7")) // its a-0 is gone
	f.UpsertBatchSandbox(batchSandbox("b"))
	f.UpsertBatchSandbox(batchSandbox("c"))
	ownerOnly := func(bsbx string) modeltest.PodOption {
		return func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox", Name: bsbx, UID: types.UID("uid-" + bsbx)}}
		}
	}
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("p", "u-p", "10.0.0.7", ownerOnly("b"))))
	h := mustSandbox(t, f, bsKey("a")).Slots[0].Holder
	if h == nil || h.Pod != "p" || h.Sandbox != bsKey("b") {
		t.Fatalf("holder %+v, want p of %s", h, bsKey("b"))
	}
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("p", "u-p", "10.0.0.7", ownerOnly("c"))))
	if h := mustSandbox(t, f, bsKey("a")).Slots[0].Holder; h == nil || h.Sandbox != bsKey("c") {
		t.Fatalf("holder %+v, want p of %s", h, bsKey("c"))
	}
}
