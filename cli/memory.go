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

// watchGCPercent is the GC ratio while sandscope watches a fleet once
// synced, and loadGCPercent the ratio while it loads the fleet. Every
// collection marks the whole fleet loaded so far, so the ratio sets most of
// the load's GC cost; what it costs in memory is the garbage allocated
// between the objects that stay, since a heap span goes back to the OS only
// when all of it is free. The load now allocates little besides what it
// keeps, and at 50,000 sandboxes half the default ratio leaves RSS within
// 3 MB of a quarter's, for two thirds of the collector's CPU (docs/design.md,
// "GC during the initial load"). At 150,000 three quarters of it took about
// a quarter less of the collector's CPU during the load than half did, for the
// same RSS at sync within the runs' spread, where the default ratio took it
// 13 to 16 MB higher (docs/performance.md, "Client CPU at 150,000"). Once
// synced the ratio goes back to half: the load's garbage is given back at
// the sync, but from then on a higher ratio lets the heap grow further above
// the fleet between collections.
const (
	watchGCPercent = 50
	loadGCPercent  = 75
)

// tuneMemoryForWatch applies loadGCPercent while a watcher loads; once
// synced it applies watchGCPercent and gives the load's garbage back to the
// OS. A user who set GOGC or GOMEMLIMIT keeps their setting.
func tuneMemoryForWatch(ctx context.Context, synced func(context.Context) error) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(loadGCPercent)
	if synced(ctx) != nil {
		return
	}
	debug.SetGCPercent(watchGCPercent)
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
