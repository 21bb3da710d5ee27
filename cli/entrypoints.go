package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// CONTRACT STUB: replaced by the helper that owns this command.
func newEntrypointsCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "entrypoints",
		Short: "not built yet",
		RunE:  func(*cobra.Command, []string) error { return errors.New("entrypoints: not built yet") },
	}
}
