package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
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

// tuneMemoryForWatch applies watchGCPercent while a watcher loads (a switch
// to another context loads again) and, once synced, returns the load's
// garbage to the OS. A user who set GOGC or GOMEMLIMIT keeps their setting.
func tuneMemoryForWatch(ctx context.Context, synced func(context.Context) error) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(watchGCPercent)
	if synced(ctx) != nil {
		return
	}
	debug.FreeOSMemory()
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
