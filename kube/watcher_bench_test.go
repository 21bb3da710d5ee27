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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
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
	c := testcluster.Get(b)
	ns := c.Namespace(b)
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
	ctx := context.Background()
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := createRunningSandbox(ctx, c, ns, i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	b.Logf("created %d BatchSandboxes + Running Pods in %s", n, time.Since(start).Round(time.Millisecond))
}

func benchIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

func createRunningSandbox(ctx context.Context, c *testcluster.Cluster, ns string, i int) error {
	name := fmt.Sprintf("sbx-%06d", i)
	ip := benchIP(i)
	pod := testcluster.SandboxPod(name+"-0", "registry.example/rl-env:v1")
	bs := testcluster.BatchSandbox(name, pod)
	bs.SetAnnotations(map[string]string{osv1.AnnotationEndpoints: `["` + ip + `"]`})
	created, err := c.Dynamic.Resource(testcluster.BatchSandboxGVR).Namespace(ns).Create(ctx, bs, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating batchsandbox %s: %w", name, err)
	}
	pod = testcluster.OwnedByBatchSandbox(pod, created, 0)
	pod.Spec.NodeName = testcluster.DefaultNode
	p, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	now := metav1.Now()
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		HostIP: "127.0.0.1", StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		InitContainerStatuses: []corev1.ContainerStatus{{
			Name: osv1.ContainerExecdInstaller, Image: "opensandbox/execd:v1.0.0", Ready: true,
			ImageID:     "docker-pullable://opensandbox/execd@sha256:" + strings.Repeat("a", 64),
			ContainerID: "containerd://" + strings.Repeat("1", 64),
			State:       corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}},
		}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: osv1.ContainerSandbox, Image: "registry.example/rl-env:v1", Ready: true, Started: ptr(true),
			ImageID:     "docker-pullable://registry.example/rl-env@sha256:" + strings.Repeat("b", 64),
			ContainerID: "containerd://" + strings.Repeat("2", 64),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	if _, err := c.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting pod %s running: %w", pod.Name, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

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
