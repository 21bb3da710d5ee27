package cli

import (
	"context"
	"os"
	"runtime/debug"
)

// steadyGCPercent is the GC ratio once the fleet is loaded. The watcher's
// heap is large and mostly static (one entry per sandbox), while what it
// allocates afterwards (a decoded event, a re-derived sandbox, a redrawn
// row) is small and short-lived: collecting at 25% growth instead of 100%
// keeps the process near its live heap at little CPU cost, since the live
// heap rarely moves. The start-up keeps Go's default: decoding the initial
// lists allocates fast, and a tight ratio there would only cost time.
const steadyGCPercent = 25

// tuneMemoryAfterSync keeps Go's default ratio while a watcher loads (a
// switch to another context loads again), then applies steadyGCPercent and
// returns the start-up's garbage to the OS. A user who set GOGC or
// GOMEMLIMIT keeps their setting.
func tuneMemoryAfterSync(ctx context.Context, synced func(context.Context) error) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(100)
	if synced(ctx) != nil {
		return
	}
	debug.SetGCPercent(steadyGCPercent)
	debug.FreeOSMemory()
}
