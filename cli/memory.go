package cli

import (
	"context"
	"os"
	"runtime/debug"
)

// tuiGCPercent is the TUI's GC ratio, from start-up on. The watcher's heap
// is large and long-lived (one entry per sandbox), while most of what it
// allocates is short-lived: the decoded API objects it slims, a re-derived
// sandbox, a redrawn row. Go's default (collect at 100 % growth) lets the
// start-up's decoding garbage pile up between the objects that stay, and a
// span goes back to the OS only once every object in it is dead: with the
// same 2.9 KB live per sandbox, `BenchmarkRetainedMemory` (kube/) ends with
// 5.9 KB of heap spans per sandbox at GOGC=100, 4.1 KB at 25 and 3.6 KB at
// 10. 25 costs a few more collections while the lists load, and keeps the
// process near its live heap for the rest of its life.
const tuiGCPercent = 25

// tuneMemory applies tuiGCPercent and, once the watcher synced, returns the
// start-up's free spans to the OS (a switch to another context loads again
// and calls it again). A user who set GOGC or GOMEMLIMIT keeps their setting.
func tuneMemory(ctx context.Context, synced func(context.Context) error) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(tuiGCPercent)
	if synced(ctx) != nil {
		return
	}
	debug.FreeOSMemory()
}
