// Command sandscope is a terminal UI and CLI for operators of Kubernetes
// sandbox fleets. See README.md.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/sandscope/sandscope/cli"
)

func main() {
	os.Exit(run())
}

// run is main with a way back through deferred calls: a CPU profile asked
// for with SANDSCOPE_CPUPROFILE=FILE (for performance reports; the TUI
// owns the terminal, so a flag's output would have nowhere to go) is
// written when sandscope exits.
func run() int {
	if path := os.Getenv("SANDSCOPE_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sandscope: SANDSCOPE_CPUPROFILE: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "sandscope: SANDSCOPE_CPUPROFILE: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	return cli.MainAs(os.Args[0], os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
