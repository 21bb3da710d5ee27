package codec

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// BenchmarkRetainedMemory is the watcher's memory per sandbox without a
// cluster, for quick iteration: the simulator's fleet (the same objects the
// scale bench loads into a real server) is encoded as the server sends it
// (Pods as protobuf, BatchSandboxes as JSON), decoded by the watcher's own
// decoders and transforms into informer stores, and fed to a Fleet. The
// figure is the live heap after GC over N (target <= 3 KB per sandbox,
// Pod + BatchSandbox). The real-cluster figure comes from test/bench/run.sh.
//
//	SANDSCOPE_BENCH_SIZES=10000 go test ./kube/codec/ -run '^$' -bench RetainedMemory -benchtime 1x
func BenchmarkRetainedMemory(b *testing.B) {
	n := 10000
	if env := os.Getenv("SANDSCOPE_BENCH_SIZES"); env != "" {
		v, err := strconv.Atoi(strings.Split(env, ",")[0])
		if err != nil || v <= 0 {
			b.Fatalf("SANDSCOPE_BENCH_SIZES: bad size %q", env)
		}
		n = v
	}
	pods, bsbxs := wireFleet(b, n)
	var perSandbox, spansPerSandbox, scanPerSandbox float64
	for range b.N {
		before, inuseBefore, scanBefore := liveHeap(), heapInuse(), scannableHeap()
		// As the Watcher does: the fleet is the only store (fleetwatch.go).
		fl := fleet.New(fleet.Options{})
		lists := mem.NewStringLists() // as the Watcher shares them
		intern := &internCache{}      // as a Pod watch stream has one
		for _, data := range bsbxs {
			obj, _, err := batchSandboxCodec{lists: lists}.Decode(data, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			fl.UpsertBatchSandbox(obj.(*model.BatchSandbox))
		}
		for _, data := range pods {
			p, _, err := decodePod(data, lists, intern) // as podwatch.go reads them
			if err != nil {
				b.Fatal(err)
			}
			fl.UpsertPod(p)
		}
		fl.SetStatus(model.SourceStatus{Synced: true})
		if got := len(fl.Snapshot().Sandboxes()); got != n {
			b.Fatalf("%d sandboxes in the fleet, want %d", got, n)
		}
		perSandbox = float64(int64(liveHeap())-int64(before)) / float64(n)
		// Spans holding the fleet, live objects and the holes between
		// them: what the process's anonymous RSS tracks, since a span is
		// returned to the OS only when empty. Garbage allocated between
		// long-lived objects (the decoding) leaves such holes.
		spansPerSandbox = float64(int64(heapInuse())-int64(inuseBefore)) / float64(n)
		// What every collection has to scan for pointers: the mark
		// work per cycle while the fleet loads.
		scanPerSandbox = float64(int64(scannableHeap())-int64(scanBefore)) / float64(n)
		if path := os.Getenv("SANDSCOPE_HEAPPROFILE"); path != "" {
			writeHeapProfile(b, path)
		}
		runtime.KeepAlive(fl)
	}
	b.ReportMetric(perSandbox, "heapB/sandbox")
	b.ReportMetric(spansPerSandbox, "spanB/sandbox")
	b.ReportMetric(scanPerSandbox, "scanB/sandbox")
}

// wireFleet loads n simulated sandboxes into fake clients and returns their
// Pods and BatchSandboxes encoded as a server sends them.
func wireFleet(tb testing.TB, n int) (pods, bsbxs [][]byte) {
	tb.Helper()
	kc := kubefake.NewSimpleClientset()
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(kruntime.NewScheme(),
		map[schema.GroupVersionResource]string{sim.BatchSandboxGVR: "BatchSandboxList"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const ns = "bench"
	if _, err := sim.Load(ctx, kc, dc, sim.LoadOptions{N: n, Namespace: ns, Seed: 1}); err != nil {
		tb.Fatal(err)
	}
	podList, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	rv := 4_000_000
	for i := range podList.Items {
		p := &podList.Items[i]
		rv++
		stampAsServer(&p.ObjectMeta, rv)
		pods = append(pods, marshalPod(tb, p))
	}
	bsList, err := dc.Resource(sim.BatchSandboxGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range bsList.Items {
		u := &bsList.Items[i]
		var m metav1.ObjectMeta
		rv++
		stampAsServer(&m, rv)
		u.SetUID(serverUID(u.GetNamespace(), u.GetName()))
		u.SetResourceVersion(m.ResourceVersion)
		if ct := u.GetCreationTimestamp(); ct.IsZero() {
			u.SetCreationTimestamp(m.CreationTimestamp)
		}
		data, err := u.MarshalJSON()
		if err != nil {
			tb.Fatal(err)
		}
		bsbxs = append(bsbxs, data)
	}
	if len(pods) != n || len(bsbxs) != n {
		tb.Fatalf("simulator loaded %d Pods and %d BatchSandboxes, want %d", len(pods), len(bsbxs), n)
	}
	return pods, bsbxs
}

// serverUID is a UID as the server makes them (a UUID), the same for the
// same object every run.
func serverUID(namespace, name string) types.UID {
	return types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(namespace+"/"+name)).String())
}

// writeHeapProfile writes the live heap (for go tool pprof) to path.
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// heapInuse is the bytes in in-use heap spans after a GC.
func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// scannableHeap is the part of the heap the collector scans for pointers,
// as of the last collection (liveHeap runs two).
func scannableHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
