package fleet

import (
	"fmt"
	"math/rand"
	"runtime"
	"syscall"
	"testing"
	"time"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// Benchmarks of the fleet model at 10,000 and 50,000 sandboxes (BatchSandbox
// + Pod each). Run: go test ./model/fleet -bench . -run '^$' -benchmem
//
//   - BenchmarkFleetMemory: heap bytes per sandbox, Pod and BatchSandbox
//     included, as the informer transforms leave them (SlimPod, the
//     BatchSandbox converter), and the time to load the fleet.
//   - BenchmarkPodUpdate: one Pod status update event (O(1): the 50k figure
//     should match the 10k one).
//   - BenchmarkSnapshotAfterChange: Snapshot() after one change.

var benchSizes = []int{10_000, 50_000}

func benchBatchSandbox(i int) *model.BatchSandbox {
	owner := modeltest.FleetOwner(i)
	u := modeltest.UnstructuredBatchSandbox(owner, map[string]string{osv1.AnnotationEndpoints: `["` + modeltest.FleetIP(i) + `"]`})
	u.SetNamespace("opensandbox")
	u.SetLabels(map[string]string{osv1.LabelSandboxID: owner, "user.example/team": "rl"})
	return model.BatchSandboxFromUnstructured(u)
}

// buildBenchFleet loads n sandboxes the way an informer's initial list does.
func buildBenchFleet(n int) *Fleet {
	f := New(Options{Now: func() time.Time { return ft0 }})
	for i := 0; i < n; i++ {
		f.UpsertBatchSandbox(benchBatchSandbox(i))
		f.UpsertPod(model.SlimPod(modeltest.FleetPod(i)))
	}
	f.SetStatus(model.SourceStatus{Synced: true})
	f.SetImageConfig(model.ImageConfig{Ref: "registry.example/rl-env@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"})
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
			bs := make([]*model.BatchSandbox, n)
			pods := make([]*model.Pod, n)
			for i := range bs {
				bs[i], pods[i] = benchBatchSandbox(i), model.SlimPod(modeltest.FleetPod(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				f := New(Options{Now: func() time.Time { return ft0 }})
				for i := range bs {
					f.UpsertBatchSandbox(bs[i])
					f.UpsertPod(pods[i])
				}
				f.SetStatus(model.SourceStatus{Synced: true})
				f.Snapshot()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sandbox")
		})
	}
}

// BenchmarkInitialLists loads a fleet as a watcher's initial lists arrive:
// one whole list, then the other, in either order (which list completes
// first is a race between two streams), then the sync.
func BenchmarkInitialLists(b *testing.B) {
	const n = 10000
	bs, pods := benchLists(n)
	// As kube/ hands a list over: the fleet is told its length first.
	upsertSandboxes := func(f *Fleet) {
		f.ReserveBatchSandboxes(len(bs))
		for _, x := range bs {
			f.UpsertBatchSandbox(x)
		}
	}
	upsertPods := func(f *Fleet) {
		f.ReservePods(len(pods))
		for _, p := range pods {
			f.UpsertPod(p)
		}
	}
	for _, order := range []struct {
		name          string
		first, second func(*Fleet)
	}{{"sandboxes-first", upsertSandboxes, upsertPods}, {"pods-first", upsertPods, upsertSandboxes}} {
		b.Run(order.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f := New(Options{Now: func() time.Time { return ft0 }})
				order.first(f)
				order.second(f)
				f.SetStatus(model.SourceStatus{Synced: true})
				f.Snapshot()
			}
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
func updatedPods(k int, round int) []*model.Pod {
	out := make([]*model.Pod, k)
	for i := range out {
		p := modeltest.FleetPod(i)
		p.Status.ContainerStatuses[0].RestartCount = int32(round)
		out[i] = model.SlimPod(p)
	}
	return out
}

func BenchmarkPodUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := benchFleet(n)
			ups := [2][]*model.Pod{updatedPods(1000, 1), updatedPods(1000, 2)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.UpsertPod(ups[(i/1000)%2][i%1000])
			}
		})
	}
}

// BenchmarkBatchSandboxUpdate: one BatchSandbox update event (a new object
// for a sandbox the fleet has), allocations included.
func BenchmarkBatchSandboxUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := benchFleet(n)
			ups := make([]*model.BatchSandbox, 1000)
			for i := range ups {
				ups[i] = benchBatchSandbox(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.UpsertBatchSandbox(ups[i%len(ups)])
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
			ups := [2][]*model.Pod{updatedPods(1000, 3), updatedPods(1000, 4)}
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
				bs, p := benchBatchSandbox(n+i), model.SlimPod(modeltest.FleetPod(n+i))
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

// BenchmarkSyncMerge: the Snapshot that follows the sync, which sorts the
// whole initial list into the published lists, with the list in a random
// order as client-go's temporary store hands a streamed list over.
func BenchmarkSyncMerge(b *testing.B) {
	const n = 50_000
	bs, pods := benchLists(n)
	rng := rand.New(rand.NewSource(1))
	rng.Shuffle(n, func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	rng.Shuffle(n, func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	var cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		f := New(Options{Now: func() time.Time { return ft0 }})
		for _, p := range pods {
			f.UpsertPod(p)
		}
		for _, x := range bs {
			f.UpsertBatchSandbox(x)
		}
		runtime.GC() // the load's garbage is not the merge's
		b.StartTimer()
		cpu0 := processCPU(b)
		f.SetStatus(model.SourceStatus{Synced: true})
		if f.Snapshot().NumSandboxes() != n {
			b.Fatal("not every sandbox placed")
		}
		cpu += processCPU(b) - cpu0
	}
	// The machine may be shared: CPU time says more than wall time.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchLists is a fleet of n sandboxes as its two initial lists bring it:
// the BatchSandboxes and their Pods, in the same order.
func benchLists(n int) ([]*model.BatchSandbox, []*model.Pod) {
	bs := make([]*model.BatchSandbox, n)
	pods := make([]*model.Pod, n)
	for i := range bs {
		bs[i], pods[i] = benchBatchSandbox(i), model.SlimPod(modeltest.FleetPod(i))
	}
	return bs, pods
}
