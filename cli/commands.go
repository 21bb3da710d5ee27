package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// subcommands lists the subcommands; each lives in its own file.
func subcommands(g *Globals) []*cobra.Command {
	return []*cobra.Command{
		newSweepCommand(g),
		newExecCommand(g),
		newCreateCommand(g),
		newEntrypointsCommand(g),
		newExplainCommand(g),
		newServeCommand(g),
		newGetCommand(g),
		newCpCommand(g),
		newVersionCommand(g),
	}
}

// newVersionCommand prints what --version prints, for the habit of
// `kubectl version` and scripts that ask a subcommand.
func newVersionCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version sandscope was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s version %s\n", g.program(), Version())
			return err
		},
	}
}
