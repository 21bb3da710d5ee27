package cli

import (
	"context"
	"os"
	"runtime/debug"
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
