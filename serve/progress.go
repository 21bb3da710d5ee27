package serve

import (
	"context"
	"time"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/internal/crash"
)

// waitForSync waits for the fleet's first sync and, once it takes longer
// than 2 s, says in the log every few seconds how far the initial lists
// have come: at 50,000 sandboxes over a slow link a silent log until
// "fleet synced" reads like a hang.
func (s *Server) waitForSync(ctx context.Context) error {
	synced := make(chan error, 1)
	crash.Go(func() { synced <- s.watcher.WaitForSync(ctx) })
	progress := sweep.NewProgressReporter(s.opts.Log, "sandscope serve: ", s.watcher.Status().Context, time.Now())
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-synced:
			return err
		case now := <-tick.C:
			progress.Report(now, s.watcher.SyncProgress())
		}
	}
}
