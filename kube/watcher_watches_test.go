package kube_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

// Watches reports each watched resource: all up once synced, the broken
// ones down while the API server is gone, all up again once every watch
// is back.
func TestWatcherWatches(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	w := startWatcher(t, c.Config, kube.WatcherOptions{Namespace: ns})
	state := func() (up, down []string) {
		for _, ws := range w.Watches() {
			if ws.Up {
				up = append(up, ws.Resource)
			} else {
				down = append(down, ws.Resource)
			}
		}
		return up, down
	}
	up, down := state()
	if fmt.Sprint(up) != "[batchsandboxes pods pools sandboxclaims sandboxes sandboxtemplates sandboxwarmpools]" || len(down) != 0 {
		t.Fatalf("after sync: up %v, down %v; want every resource up, sorted", up, down)
	}

	c.StopAPIServer(t)
	waitUntil(t, waitTimeout, "pods watch down", func() bool {
		_, down := state()
		for _, r := range down {
			if r == "pods" {
				return true
			}
		}
		return false
	})
	c.StartAPIServer(t)
	// The watches retry on a back-off capped at 2 s (reconnectBackoff).
	waitUntil(t, 90*time.Second, "every watch up again", func() bool {
		_, down := state()
		return len(down) == 0
	})
}
