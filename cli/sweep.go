package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// CONTRACT STUB: replaced by the helper that owns this command.
func newSweepCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "sweep",
		Short: "not built yet",
		RunE:  func(*cobra.Command, []string) error { return errors.New("sweep: not built yet") },
	}
}
