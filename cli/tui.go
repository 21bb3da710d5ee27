package cli

import (
	"context"
	"fmt"
)

// runTUI connects and opens the terminal UI. (Wired once ui/ lands.)
func runTUI(ctx context.Context, g *Globals) error {
	c, err := g.Connect(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.Out, "connected to %s (%s)\n", c.Context, c.Server)
	return nil
}
