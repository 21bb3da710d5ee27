package demo

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/sandscope/sandscope/internal/memstat"
	"github.com/sandscope/sandscope/kube"
)

// BenchmarkDemoHourOfChurn plays an hour of the demo's churn (its default
// 800 sandboxes an hour, ~100 live) on a virtual clock and reports the
// live heap and this process's RSS at the start and after the hour, its
// peak RSS, and the objects the simulated API server holds then:
//
//   - demo: the simulation, its in-memory API server and the fleet watched
//     as the TUI watches it: what an idle `sandscope --demo` holds;
//   - unwatched: the simulation and its API server alone. demo minus
//     unwatched is what the watched fleet itself holds after an hour of
//     churn, as on a cluster, where the API server is not in the process.
//
// The RSS is the test process's (/proc/self/status): the hour passes in
// seconds here, so it says what an hour's state costs, not what an hour of
// the real binary does; test/bench's BenchmarkChurnRSS runs the binary on
// the real clock for that.
//
// SANDSCOPE_DEMO_HEAP_PROFILE=FILE writes a heap profile of the demo case
// at the end.
// Run: go test ./demo -run '^$' -bench DemoHourOfChurn -benchtime 1x
func BenchmarkDemoHourOfChurn(b *testing.B) {
	for _, watched := range []bool{true, false} {
		name := "demo"
		if !watched {
			name = "unwatched"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				start, end, objects := hourOfChurn(b, watched)
				b.ReportMetric(start.heap, "heapMB-start")
				b.ReportMetric(end.heap, "heapMB-60m")
				b.ReportMetric(start.rss, "rssMB-start")
				b.ReportMetric(end.rss, "rssMB-60m")
				b.ReportMetric(end.peak, "peakRssMB")
				b.ReportMetric(float64(objects), "objects-60m")
			}
		})
	}
}

// memory is the live heap after a collection and the process's RSS and
// peak RSS then, in MB.
type memory struct{ heap, rss, peak float64 }

func measure() memory {
	return memory{heap: memstat.LiveHeapMB(), rss: memstat.ProcMB("self", "VmRSS"), peak: memstat.ProcMB("self", "VmHWM")}
}

func hourOfChurn(b *testing.B, watched bool) (start, end memory, objects int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := testingclock.NewFakeClock(t0)
	d, err := Start(ctx, Options{Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	var w *kube.Watcher
	if watched {
		w = kube.NewWatcher(d.Clients, d.WatcherOptions(kube.WatcherOptions{}))
		go func() { _ = w.Run(ctx) }()
		sctx, scancel := context.WithTimeout(ctx, time.Minute)
		defer scancel()
		if err := w.WaitForSync(sctx); err != nil {
			b.Fatal(err)
		}
	}
	start = measure()
	for minute := 1; minute <= 60; minute++ {
		clock.SetTime(t0.Add(time.Duration(minute) * time.Minute))
		if err := d.Sim.RunUntil(ctx, clock.Now()); err != nil {
			b.Fatal(err)
		}
		if w != nil {
			settle(w) // let the watcher take in the minute's changes
		} else {
			time.Sleep(20 * time.Millisecond) // the housekeeping's turn
		}
		if minute%10 == 0 {
			sandboxes := -1
			if w != nil {
				sandboxes = w.Fleet().Snapshot().NumSandboxes()
			}
			m := measure()
			b.Logf("minute %d: heap %.1f MB, RSS %.1f MB (peak %.1f MB), %d objects in the simulated API, %d sandboxes watched", minute, m.heap, m.rss, m.peak, countObjects(ctx, d), sandboxes)
		}
	}
	end, objects = measure(), countObjects(ctx, d)
	if path := os.Getenv("SANDSCOPE_DEMO_HEAP_PROFILE"); path != "" && watched {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
	}
	return start, end, objects
}

// settle waits until the watched fleet stops changing for a moment.
func settle(w *kube.Watcher) {
	last := w.Fleet().Snapshot().Version
	for quiet := 0; quiet < 3; {
		time.Sleep(20 * time.Millisecond)
		if v := w.Fleet().Snapshot().Version; v != last {
			last, quiet = v, 0
			continue
		}
		quiet++
	}
}

// countObjects counts what the simulated API server holds: Pods, Events
// and the engines' objects.
func countObjects(ctx context.Context, d *Demo) int {
	n := 0
	if l, err := d.Clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
		n += len(l.Items)
	}
	if l, err := d.Clients.Kube.CoreV1().Events("").List(ctx, metav1.ListOptions{}); err == nil {
		n += len(l.Items)
	}
	return n
}

// The in-memory API server keeps only what a real one would: the fakes'
// request logs are dropped and Events expire an hour after they were last
// seen (kube-apiserver's --event-ttl), so the demo's memory follows its
// fleet, not how long it has run.
func TestDemoAPIStaysBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d, err := Start(ctx, Options{Clock: testingclock.NewFakeClock(t0), Warmup: 80 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	kc := d.Clients.Kube.(*logsClientset).Interface.(*clientset)
	dyn := d.Clients.Dynamic.(*dynamicfake.FakeDynamicClient)
	if n, m := len(kc.fake.Actions()), len(dyn.Actions()); n+m > 0 {
		t.Errorf("after the warm-up the fakes still log %d + %d requests", n, m)
	}
	events, err := d.Clients.Kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kept int
	for _, e := range events.Items {
		age := t0.Sub(e.LastTimestamp.Time)
		if age > eventTTL {
			t.Errorf("Event %s/%s (%s) last seen %s ago is still there", e.Namespace, e.Name, e.Reason, age)
		}
		if age > eventTTL-20*time.Minute {
			kept++
		}
	}
	if kept == 0 {
		t.Errorf("no Event of the hour's first 20 minutes is kept (%d Events): the TTL is too eager", len(events.Items))
	}
}
