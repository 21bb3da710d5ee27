// Command sandscope is a terminal UI and CLI for operators of Kubernetes
// sandbox fleets. See README.md.
package main

import (
	"os"

	"github.com/sandscope/sandscope/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
