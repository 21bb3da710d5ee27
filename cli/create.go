package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// CONTRACT STUB: replaced by the helper that owns this command.
func newCreateCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "create",
		Short: "not built yet",
		RunE:  func(*cobra.Command, []string) error { return errors.New("create: not built yet") },
	}
}
