package cli

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Names the binary answers to besides sandscope. kubectl runs
// kubectl-NAME for `kubectl NAME ...`, and (kubectl 1.26 and later) asks
// kubectl_complete-NAME for the plugin's shell completions.
const (
	pluginBinary     = "kubectl-sandscope"
	pluginCompletion = "kubectl_complete-sandscope"
	pluginDisplay    = "kubectl sandscope"
)

// invocation reads how the binary was started (argv[0], a copy or a
// symlink alike): the name usage and help show, and the arguments to run,
// which for kubectl's completion helper are cobra's __complete request.
func invocation(argv0 string, args []string) (program string, _ []string) {
	switch strings.TrimSuffix(filepath.Base(argv0), ".exe") {
	case pluginBinary:
		return pluginDisplay, args
	case pluginCompletion:
		return pluginDisplay, append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	return "sandscope", args
}

// setDisplayName makes usage and help say "kubectl sandscope ..." when run
// as the plugin.
func setDisplayName(root *cobra.Command, program string) {
	if program == "" || program == root.Name() {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = program
}

// program is the name to show in examples.
func (g *Globals) program() string {
	if g.Program == "" {
		return "sandscope"
	}
	return g.Program
}
