package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model/forensics"
	"github.com/sandscope/sandscope/output"
)

var _ inspect.RestartReader = (*kube.Clients)(nil)

func newExplainCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Explain what happened to a sandbox from the evidence the cluster still holds",
	}
	cmd.Args, cmd.RunE = subcommandsOnly(ExitUsage)
	cmd.AddCommand(newExplainRestartCommand(g))
	return cmd
}

type explainRestartFlags struct {
	blockStarts []string
	container   string
	output      string
}

func newExplainRestartCommand(g *Globals) *cobra.Command {
	f := &explainRestartFlags{}
	cmd := &cobra.Command{
		Use:   "restart [-n NS] POD|SANDBOX --block-start TIME [--block-start TIME ...] [--container C] [-o text|json]",
		Short: "Predict a liveness kill from the time the process blocked and compare it with the recorded restart",
		Long: `restart computes, forward from the time the process blocked (--block-start, RFC 3339, from business logs),
when the liveness probe would have had the container killed:

  block start + failureThreshold × periodSeconds + terminationGracePeriodSeconds

(the probe's own terminationGracePeriodSeconds wins over the Pod's), with the window its phase and
timeoutSeconds allow, and compares it with the termination the Pod still records (lastState.terminated,
finishedAt). A Pod records only the last termination of each container; with Events still there, the
first Unhealthy and the Killing are shown beside the prediction. Verdicts computed from timing are
inferred; the commands that confirm them are printed.

Exit codes: 0 explained, 1 the Pod could not be read, 2 usage error.`,
		ValidArgsFunction: g.completeSandbox,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &ExitError{Code: ExitUsage, Err: errors.New("usage: " + g.program() + " explain restart [-n NS] POD|SANDBOX --block-start TIME")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplainRestart(cmd, g, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.blockStarts, "block-start", nil, "When the process blocked (RFC 3339, e.g. 2026-11-29T17:01:40Z); repeat for several restarts")
	fl.StringVar(&f.container, "container", "", "Container to explain (default: the one that restarted, the main container first)")
	fl.StringVarP(&f.output, "output", "o", "text", "Output: text or json")
	return cmd
}

// demoSyncTimeout bounds the first read of the demo's fleet by a command
// that looks a sandbox up in it.
const demoSyncTimeout = 30 * time.Second

// parseBlockStart reads a block start: RFC 3339 with or without fractions.
func parseBlockStart(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("--block-start %q: want an RFC 3339 time such as 2026-11-29T17:01:40Z", s)
	}
	return t, nil
}

func runExplainRestart(cmd *cobra.Command, g *Globals, f *explainRestartFlags, name string) error {
	usage := func(err error) error { return &ExitError{Code: ExitUsage, Err: err} }
	if f.output != "text" && f.output != "json" {
		return usage(fmt.Errorf("-o %q: want text or json", f.output))
	}
	if len(f.blockStarts) == 0 {
		return usage(errors.New("--block-start is required: the time the process blocked, from the business logs"))
	}
	blocks := make([]time.Time, 0, len(f.blockStarts))
	for _, s := range f.blockStarts {
		t, err := parseBlockStart(s)
		if err != nil {
			return usage(err)
		}
		blocks = append(blocks, t)
	}
	if g.AllNamespaces {
		return usage(errors.New("-A does not apply: name the Pod's namespace with -n"))
	}
	conn, err := g.connect(cmd.Context())
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	defer conn.Close()
	// In the demo the sandbox is found in any namespace, by the short id
	// the TUI shows too; on a cluster it is read in the context's.
	namespace, name, err := conn.Locate(cmd.Context(), name, demoSyncTimeout)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	clients := conn.Clients
	rep, err := inspect.ExplainRestart(cmd.Context(), clients, namespace, name, f.container, blocks)
	switch {
	case errors.Is(err, forensics.ErrNoContainer):
		return usage(err)
	case apierrors.IsNotFound(err):
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("no Pod or sandbox %q in namespace %s", name, namespace)}
	case err != nil:
		return &ExitError{Code: ExitFailure, Err: err}
	}
	out := cmd.OutOrStdout()
	if f.output == "json" {
		if err := textsafe.WriteJSON(out, rep, "  "); err != nil {
			return &ExitError{Code: ExitInternal, Err: fmt.Errorf("writing the report: %w", err)}
		}
		return nil
	}
	output.WriteRestart(out, rep.Resolved, rep.RestartExplanation)
	return nil
}
