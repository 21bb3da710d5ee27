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
// A looser ratio, or a memory limit in place of a ratio (the collector idle
// until the heap nears it), left a large fleet's RSS pinned higher; a
// tighter ratio costs CPU, since every collection marks the whole fleet
// loaded so far (docs/design.md, "GC during the initial load").
const watchGCPercent = 25

// tuneMemoryForWatch applies watchGCPercent while a watcher loads and once
// synced gives the load's garbage back to the OS. A user who set GOGC or
// GOMEMLIMIT keeps their setting.
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
