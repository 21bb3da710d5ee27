package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// watchGCPercent is the GC ratio while sandscope watches a fleet, from the
// start of the load on. The objects the watcher keeps (one set per sandbox)
// are allocated between short-lived ones (a decoded event's scratch, a
// re-derived row), and a heap span goes back to the OS only when all of it is
// free: the less often the GC runs while the fleet loads, the more garbage
// sits between the objects that stay, and the more spans they end up pinning.
// BenchmarkRetainedMemory (kube) measures it as span bytes per sandbox for
// 2.77 KB live: 4.8 KB at Go's default 100 %, 3.55 KB at 25 %, 3.26 KB at
// 10 %. Once Pods were decoded straight into the model, the load's garbage
// was small enough for the tighter ratio to cost little CPU; after the load,
// what is allocated is small and short-lived and the live heap rarely moves.
const watchGCPercent = 25

// A load whose live heap passes largeLoadHeap (about 25,000 sandboxes) goes
// on at largeLoadGCPercent: at 2.39 KB live a sandbox, BenchmarkRetainedMemory
// read 3,405 span bytes a sandbox at 25 % and 3,020 at 10 %, for 30 % more
// CPU in the loop. A small fleet, whose memory is far from any limit, loads
// at watchGCPercent and does not pay that CPU.
const (
	largeLoadHeap      = 64 << 20
	largeLoadGCPercent = 10
)

// tuneMemoryForWatch applies watchGCPercent while a watcher loads (a switch
// to another context loads again), tightens it for a large load, and once
// synced returns to watchGCPercent and gives the load's garbage back to the
// OS. A user who set GOGC or GOMEMLIMIT keeps their setting.
func tuneMemoryForWatch(ctx context.Context, synced func(context.Context) error) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(watchGCPercent)
	loadCtx, endLoad := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		tightenWhenLarge(loadCtx, liveHeapBytes, 250*time.Millisecond)
	}()
	err := synced(ctx)
	endLoad()
	<-watching // it may not tighten the ratio after this
	debug.SetGCPercent(watchGCPercent)
	if err != nil {
		return
	}
	debug.FreeOSMemory()
}

// tightenWhenLarge sets largeLoadGCPercent once live reports at least
// largeLoadHeap, looking every period until ctx ends.
func tightenWhenLarge(ctx context.Context, live func() uint64, period time.Duration) {
	err := wait.PollUntilContextCancel(ctx, period, false, func(context.Context) (bool, error) {
		return live() >= largeLoadHeap, nil
	})
	if err == nil {
		debug.SetGCPercent(largeLoadGCPercent)
	}
}

// liveHeapBytes is the heap the last GC found live.
func liveHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// heapProfileEnv names a file for a heap profile of the TUI, written once
// its watcher has synced (after the load's garbage went back to the OS):
// for memory reports, which need the figures of the real process, and the
// TUI owns the terminal. The text form carries runtime.MemStats too.
const heapProfileEnv = "SANDSCOPE_HEAPPROFILE"

// writeHeapProfileAfterSync writes the profile heapProfileEnv asks for, if
// it does, once synced reports the watcher synced. It reports a failure on
// errOut only: a profile is never worth stopping the TUI for.
func writeHeapProfileAfterSync(ctx context.Context, synced func(context.Context) error, errOut io.Writer) {
	path := os.Getenv(heapProfileEnv)
	if path == "" || synced(ctx) != nil {
		return
	}
	runtime.GC()
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 1)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(errOut, "sandscope: %s: %v\n", heapProfileEnv, err)
	}
}

// syncStatsEnv names a file for the runtime's CPU accounting at the moment
// the watcher synced: one "metric value" line per runtime/metrics sample
// named in syncStatsMetrics, so a report can give the collector's share of
// the CPU a start-up took (a CPU profile attributes assists to whatever
// allocated, which hides them).
const syncStatsEnv = "SANDSCOPE_SYNCSTATS"

var syncStatsMetrics = []string{
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/cpu/classes/gc/mark/dedicated:cpu-seconds",
	"/cpu/classes/gc/mark/idle:cpu-seconds",
	"/cpu/classes/gc/pause:cpu-seconds",
	"/cpu/classes/scavenge/total:cpu-seconds",
	"/cpu/classes/user:cpu-seconds",
	"/cpu/classes/idle:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
}

// writeSyncStatsAfterSync writes the file syncStatsEnv asks for, if it
// does, once synced reports the watcher synced; a failure is one line on
// errOut.
func writeSyncStatsAfterSync(ctx context.Context, synced func(context.Context) error, errOut io.Writer) {
	path := os.Getenv(syncStatsEnv)
	if path == "" || synced(ctx) != nil {
		return
	}
	samples := make([]metrics.Sample, len(syncStatsMetrics))
	for i, name := range syncStatsMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	var b strings.Builder
	for _, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindFloat64:
			fmt.Fprintf(&b, "%s %g\n", s.Name, s.Value.Float64())
		case metrics.KindUint64:
			fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(errOut, "sandscope: %s: %v\n", syncStatsEnv, err)
	}
}
