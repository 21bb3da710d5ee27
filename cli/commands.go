package cli

import "github.com/spf13/cobra"

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
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
