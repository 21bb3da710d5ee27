package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// listCommands are the subcommands that take a list of contexts
// (--context a,b); the others act in one cluster.
var listCommands = []string{"sweep"}

// oneContextOnly refuses a list of contexts to a subcommand that acts in one
// cluster (exec, create, explain, ...): which cluster would be a guess. The
// TUI (the root command) and sweep take a list. The exit code is the
// command's usage code.
func oneContextOnly(cmd *cobra.Command, g *Globals) error {
	if !cmd.HasParent() || len(splitContexts(g.Kube.Context())) <= 1 {
		return nil
	}
	top := cmd // the subcommand of sandscope itself: "entrypoints" for "entrypoints set"
	for top.Parent().HasParent() {
		top = top.Parent()
	}
	if slices.Contains(listCommands, top.Name()) {
		return nil
	}
	code := ExitUsage
	if top.Name() == "create" || top.Name() == "entrypoints" {
		code = createExitUsage // 2 means "refused before creating" there
	}
	return &ExitError{Code: code, Err: fmt.Errorf("%s acts in one cluster: --context takes one context here, not %q (the TUI and sweep take a list)",
		strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), g.Kube.Context())}
}
