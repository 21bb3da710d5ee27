package output

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
)

// WriteEntrypoints prints the entrypoint table, one entry a row. The table
// is a ConfigMap anyone with write access to it filled: every cell is
// shown as one inert line.
func WriteEntrypoints(w io.Writer, entries []kube.EntrypointEntry) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DIGEST\tIMAGE\tARGV")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", textsafe.Line(e.Digest), textsafe.Line(e.Image), textsafe.Line(strings.Join(e.Argv, " ")))
	}
	tw.Flush()
}

// EntrypointJSON is an entry as -o json writes it.
func EntrypointJSON(e kube.EntrypointEntry) map[string]any {
	m := map[string]any{"digest": e.Digest, "argv": e.Argv, "image": e.Image}
	if !e.SetAt.IsZero() {
		m["setAt"] = e.SetAt
	}
	return m
}
