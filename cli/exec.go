package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// CONTRACT STUB: replaced by the helper that owns this command.
func newExecCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "exec",
		Short: "not built yet",
		RunE:  func(*cobra.Command, []string) error { return errors.New("exec: not built yet") },
	}
}
