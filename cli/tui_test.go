package cli

import (
	"context"
	"testing"

	"github.com/sandscope/sandscope/kube"
)

// ctrl+c while the TUI is still starting (the demo's fleet being played,
// a cluster being connected to) is the operator quitting, as it is once the
// UI is up: no error, exit 0, where it printed "starting the demo fleet:
// context canceled" and exited 2.
func TestTUIInterruptedWhileStartingIsAQuit(t *testing.T) {
	g := &Globals{Kube: kube.NewConfigFlags()}
	cmd := NewRootCommand(g)
	if err := cmd.ParseFlags([]string{"--demo"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := runTUI(ctx, g); err != nil {
		t.Fatalf("interrupted while starting: %v, want a quit", err)
	}
}
