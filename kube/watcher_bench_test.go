package kube_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model/fleet"
)

// BenchmarkWatcherFleet measures the watcher over N non-pooled BatchSandboxes
// with one Running Pod each, in the real test cluster:
//
//   - heapB/sandbox: live heap after sync (informer caches + fleet) per
//     sandbox, Pod and BatchSandbox together (target ≤ 3 KB);
//   - s-to-sync: from Run to a synced fleet;
//   - cpu-us/update: the watcher's CPU per Pod update event (decode,
//     transform, fleet): process CPU while patching M Pods with the watcher
//     running, minus the same patches without it, over M. Flat across N
//     means no fleet-wide work per event.
//
// Sizes come from SANDSCOPE_BENCH_SIZES (default 10000); one iteration is
// the whole measurement:
//
//	SANDSCOPE_BENCH_SIZES=10000,50000 go test ./kube/ -run '^$' -bench BenchmarkWatcherFleet -benchtime 1x -timeout 60m
func BenchmarkWatcherFleet(b *testing.B) {
	sizes := []int{10000}
	if env := os.Getenv("SANDSCOPE_BENCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("SANDSCOPE_BENCH_SIZES: bad size %q", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("sandboxes=%d", n), func(b *testing.B) { benchWatcherFleet(b, n) })
	}
}

const benchUpdates = 2000

func benchWatcherFleet(b *testing.B, n int) {
	c, ns := testcluster.GetWithNamespace(b)
	ctx := context.Background()
	populate(b, c, ns, n)
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		b.Fatal(err)
	}
	baselineCPU := patchPods(b, c, ns, min(n, benchUpdates), "baseline", nil)

	var heapPer, syncSecs, cpuPer float64
	for range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		w := kube.NewWatcher(clients, kube.WatcherOptions{Namespace: ns})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(runCtx) }()
		syncCtx, syncCancel := context.WithTimeout(ctx, 10*time.Minute)
		if err := w.WaitForSync(syncCtx); err != nil {
			b.Fatalf("sync: %v", err)
		}
		syncCancel()
		syncSecs = time.Since(start).Seconds()
		if got := len(w.Fleet().Snapshot().Sandboxes()); got != n {
			b.Fatalf("fleet has %d sandboxes after sync, want %d", got, n)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heapPer = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)

		m := min(n, benchUpdates)
		withCPU := patchPods(b, c, ns, m, "watched", w)
		cpuPer = float64((withCPU - baselineCPU).Microseconds()) / float64(m)
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(heapPer, "heapB/sandbox")
	b.ReportMetric(syncSecs, "s-to-sync")
	b.ReportMetric(cpuPer, "cpu-us/update")
}

// populate creates n BatchSandboxes, each with its Pod <name>-0 Running at a
// unique IP and the endpoints annotation, the way the engine leaves them.
func populate(b *testing.B, c *testcluster.Cluster, ns string, n int) {
	b.Helper()
	start := time.Now()
	err := testcluster.Parallel(context.Background(), n, 16, func(i int) error {
		return c.CreateFleetSandbox(context.Background(), ns, testcluster.FleetSandbox{
			Name: fmt.Sprintf("sbx-%06d", i), Image: "registry.example/rl-env:v1", IP: benchIP(i)})
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d BatchSandboxes + Running Pods in %s", n, time.Since(start).Round(time.Millisecond))
}

func benchIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

// patchPods patches a label on the first m Pods (16 writers) and returns the
// process CPU time spent until the watcher (when given) has seen the last
// one.
func patchPods(b *testing.B, c *testcluster.Cluster, ns string, m int, gen string, w *kube.Watcher) time.Duration {
	b.Helper()
	ctx := context.Background()
	cpu0 := processCPU()
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				patch := []byte(`{"metadata":{"labels":{"bench.sandscope.io/gen":"` + gen + `"}}}`)
				name := fmt.Sprintf("sbx-%06d-0", i)
				if _, err := c.Kube.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					b.Errorf("patching %s: %v", name, err)
				}
			}
		})
	}
	for i := range m {
		work <- i
	}
	close(work)
	wg.Wait()
	if w != nil {
		// Wait until the fleet has seen every patched Pod.
		deadline := time.Now().Add(2 * time.Minute)
		for !allPatched(w.Fleet().Snapshot(), ns, m, gen) {
			if time.Now().After(deadline) {
				b.Fatalf("the fleet did not see %d Pod updates within 2m", m)
			}
			time.Sleep(100 * time.Millisecond) // each look builds an O(N) snapshot: rarely
		}
	}
	return processCPU() - cpu0
}

func allPatched(s *fleet.Snapshot, ns string, m int, gen string) bool {
	seen := 0
	for _, p := range s.Pods() {
		if p.Namespace == ns && p.Labels.Get("bench.sandscope.io/gen") == gen {
			seen++
		}
	}
	return seen >= m
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
