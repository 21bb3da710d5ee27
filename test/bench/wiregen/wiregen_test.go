package wiregen_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/test/bench/wiregen"
)

// TestWatcherSyncsFromGenerator runs sandscope's watcher against a
// generator: it must sync with every sandbox, see the dead ones' reused IPs
// as a real server's fleet shows them, ask nothing the generator does not
// serve, and see a live status change.
func TestWatcherSyncsFromGenerator(t *testing.T) {
	t.Run("streamed", func(t *testing.T) { testWatcherSyncs(t, false) })
	t.Run("precomputed", func(t *testing.T) { testWatcherSyncs(t, true) })
}

func testWatcherSyncs(t *testing.T, precompute bool) {
	const n = 3000 // several gzip members when precomputed
	g, err := wiregen.Start(wiregen.Options{Load: sim.LoadOptions{N: n, Namespace: "gen", Seed: 1}, Precompute: precompute})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clients, err := kube.NewClients(g.Config(), g.Namespace())
	if err != nil {
		t.Fatal(err)
	}
	w := kube.NewWatcher(clients, kube.WatcherOptions{})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	if err := w.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		return w.Fleet().Snapshot().NumSandboxes() == n, nil
	}); err != nil {
		t.Fatalf("the model holds %d sandboxes, want %d", w.Fleet().Snapshot().NumSandboxes(), n)
	}
	taken := 0
	for _, sb := range w.Fleet().Snapshot().Sandboxes() {
		if sb.Identity() == model.IdentityIPTaken {
			taken++
		}
	}
	if taken != n/100 {
		t.Errorf("%d sandboxes IP_TAKEN, want %d (every 100th is dead, its IP reused)", taken, n/100)
	}
	if u := g.Unknown(); u != 0 {
		t.Errorf("the watcher asked %d things the generator does not serve:\n%v", u, g.Requests())
	}
	name := g.Name(7)
	g.SetRestarts(7, 4242)
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, sb := range w.Fleet().Snapshot().Sandboxes() {
			if sb.Name() == name && sb.Restarts == 4242 {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Errorf("sandbox %s never showed the restarts of a live MODIFIED event", name)
	}
	cancel()
	<-done
}
