package model

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Benchmarks of the fleet model at 10,000 and 50,000 sandboxes (BatchSandbox
// + Pod each). Run: go test ./model/ -bench . -run '^$' -benchmem
//
//   - BenchmarkFleetMemory: heap bytes per sandbox, Pod and BatchSandbox
//     included, as the informer transforms leave them (SlimPod, the
//     BatchSandbox converter), and the time to load the fleet.
//   - BenchmarkPodUpdate: one Pod status update event (O(1): the 50k figure
//     should match the 10k one).
//   - BenchmarkSnapshotAfterChange: Snapshot() after one change.

var benchSizes = []int{10_000, 50_000}

// benchPod is a realistic OpenSandbox Pod as the API server sends it, before the transform.
func benchPod(i int) *corev1.Pod {
	name := fmt.Sprintf("3f2b9c1e-5d4a-4e8f-9a7b-%012d-0", i)
	owner := name[:len(name)-2]
	yes := true
	start := metav1.NewTime(ft0)
	grace := int64(30)
	env := make([]corev1.EnvVar, 12)
	for j := range env {
		env[j] = corev1.EnvVar{Name: fmt.Sprintf("SANDBOX_ENV_%d", j), Value: "some-value-of-moderate-length"}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "opensandbox", UID: types.UID(fmt.Sprintf("8d7e6f5a-4b3c-2d1e-0f9a-%012d", i)),
			ResourceVersion:   "123456789",
			CreationTimestamp: start,
			Labels: map[string]string{osv1.LabelSandboxID: owner, osv1.LabelBatchSandboxName: owner, osv1.LabelPodIndex: "0",
				"user.example/team": "rl", "opensandbox.io/manual-cleanup": "true"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(make([]byte, 2048))},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox",
				Name: owner, UID: types.UID("uid-" + owner), Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: "Update"}, {Manager: "controller", Operation: "Update"}},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", i%200), TerminationGracePeriodSeconds: &grace, RestartPolicy: corev1.RestartPolicyNever,
			Volumes: []corev1.Volume{{Name: "opensandbox-bin"}, {Name: "kube-api-access"}},
			InitContainers: []corev1.Container{{Name: "execd-installer", Image: "opensandbox/execd:v1.0.4",
				Command: []string{"/bin/sh", "-c", "cp /execd /bootstrap.sh /opt/opensandbox/"}}},
			Containers: []corev1.Container{{Name: osv1.ContainerSandbox, Image: "registry.example/rl-env:2026.11",
				Command: []string{osv1.BootstrapPath, "tail", "-f", "/dev/null"}, Env: env,
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: benchIP(i), PodIPs: []corev1.PodIP{{IP: benchIP(i)}}, StartTime: &start,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}, {Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "execd-installer", Image: "opensandbox/execd:v1.0.4",
				ImageID: "docker-pullable://opensandbox/execd@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				State:   corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: osv1.ContainerSandbox, Image: "registry.example/rl-env:2026.11", Ready: true,
				ImageID: "docker-pullable://registry.example/rl-env@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
				State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}},
		},
	}
}

func benchIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 8+i/65536, (i/256)%256, i%256) }

func benchBatchSandbox(i int) *BatchSandbox {
	owner := fmt.Sprintf("3f2b9c1e-5d4a-4e8f-9a7b-%012d", i)
	u := unstructuredBatchSandbox(owner, map[string]string{osv1.AnnotationEndpoints: `["` + benchIP(i) + `"]`})
	u.SetNamespace("opensandbox")
	u.SetLabels(map[string]string{osv1.LabelSandboxID: owner, "user.example/team": "rl"})
	return BatchSandboxFromUnstructured(u)
}

// buildBenchFleet loads n sandboxes the way an informer's initial list does.
func buildBenchFleet(n int) *Fleet {
	f := NewFleet(FleetOptions{Now: func() time.Time { return ft0 }})
	for i := 0; i < n; i++ {
		f.UpsertBatchSandbox(benchBatchSandbox(i))
		f.UpsertPod(SlimPod(benchPod(i)))
	}
	f.SetStatus(SourceStatus{Synced: true})
	f.SetImageConfig(ImageConfig{Ref: "registry.example/rl-env@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"})
	f.Snapshot()
	return f
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func BenchmarkFleetMemory(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var perSandbox float64
			for it := 0; it < b.N; it++ {
				before := heapInUse()
				f := buildBenchFleet(n)
				after := heapInUse()
				perSandbox = float64(int64(after)-int64(before)) / float64(n)
				if got := len(f.Snapshot().Sandboxes()); got != n {
					b.Fatalf("%d sandboxes", got)
				}
				runtime.KeepAlive(f)
			}
			b.ReportMetric(perSandbox, "heapB/sandbox")
		})
	}
}

// BenchmarkFleetLoad: feeding n already converted sandboxes and Pods (an
// informer's initial list) into an empty Fleet, up to the first Snapshot.
func BenchmarkFleetLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			bs := make([]*BatchSandbox, n)
			pods := make([]*Pod, n)
			for i := range bs {
				bs[i], pods[i] = benchBatchSandbox(i), SlimPod(benchPod(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				f := NewFleet(FleetOptions{Now: func() time.Time { return ft0 }})
				for i := range bs {
					f.UpsertBatchSandbox(bs[i])
					f.UpsertPod(pods[i])
				}
				f.SetStatus(SourceStatus{Synced: true})
				f.Snapshot()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sandbox")
		})
	}
}

var benchFleets = map[int]*Fleet{}

func benchFleet(n int) *Fleet {
	if f := benchFleets[n]; f != nil {
		return f
	}
	f := buildBenchFleet(n)
	benchFleets[n] = f
	return f
}

// updatedPods prepares status updates (a restart) for the first k Pods, slimmed, outside the timing.
func updatedPods(k int, round int) []*Pod {
	out := make([]*Pod, k)
	for i := range out {
		p := benchPod(i)
		p.Status.ContainerStatuses[0].RestartCount = int32(round)
		out[i] = SlimPod(p)
	}
	return out
}

func BenchmarkPodUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := benchFleet(n)
			ups := [2][]*Pod{updatedPods(1000, 1), updatedPods(1000, 2)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.UpsertPod(ups[(i/1000)%2][i%1000])
			}
		})
	}
}

// BenchmarkSnapshotAfterChange: one Pod update then Snapshot(). ns/op covers
// both; snapshot-ns/op is the Snapshot() call alone (timed by hand, since
// StopTimer around the update would make the framework run millions of
// untimed updates).
func BenchmarkSnapshotAfterChange(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := benchFleet(n)
			ups := [2][]*Pod{updatedPods(1000, 3), updatedPods(1000, 4)}
			var inSnapshot time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.UpsertPod(ups[(i/1000)%2][i%1000])
				start := time.Now()
				s := f.Snapshot()
				inSnapshot += time.Since(start)
				if s.NumSandboxes() != n {
					b.Fatalf("%d sandboxes", s.NumSandboxes())
				}
			}
			b.ReportMetric(float64(inSnapshot.Nanoseconds())/float64(b.N), "snapshot-ns/op")
		})
	}
}

// BenchmarkSnapshotAfterAdd: a new sandbox (BatchSandbox + Pod) then
// Snapshot(): the structural case, which merges the new entry in.
func BenchmarkSnapshotAfterAdd(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := benchFleet(n)
			var inSnapshot time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				bs, p := benchBatchSandbox(n+i), SlimPod(benchPod(n+i))
				b.StartTimer()
				f.UpsertBatchSandbox(bs)
				f.UpsertPod(p)
				start := time.Now()
				f.Snapshot()
				inSnapshot += time.Since(start)
			}
			b.ReportMetric(float64(inSnapshot.Nanoseconds())/float64(b.N), "snapshot-ns/op")
		})
	}
}

// BenchmarkSlimPod: the informer transform's cost per Pod.
func BenchmarkSlimPod(b *testing.B) {
	p := benchPod(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = SlimPod(p)
	}
}

// BenchmarkBatchSandboxConvert: the BatchSandbox transform's cost.
func BenchmarkBatchSandboxConvert(b *testing.B) {
	u := unstructuredBatchSandbox("x", map[string]string{osv1.AnnotationEndpoints: `["10.0.0.1"]`})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = BatchSandboxFromUnstructured(u)
	}
}

var _ = unstructured.Unstructured{}
