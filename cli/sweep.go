package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/output"
)

// sweepFlags are the sweep's own flags; -n, -A, --context, --stuck-after and
// --selector are the global ones.
type sweepFlags struct {
	output string
	failOn string
	read   readFlags
	probe  bool
}

// readFlags bound one read of a context, in sweep and get alike: both read
// through fleetSource and sweep.WithDeadline, so the flags mean the same.
type readFlags struct {
	timeout time.Duration
	maxTime time.Duration
}

func (r *readFlags) add(fl *pflag.FlagSet) {
	fl.DurationVar(&r.timeout, "timeout", sweep.DefaultTimeout, "Time each context may stay silent: to connect, between two signs of progress of its lists, and once synced to analyze (findings, forensics)")
	fl.DurationVar(&r.maxTime, "max-time", sweep.DefaultMaxTime, "Time allowed for each context in all, however its lists keep arriving (a context still syncing then is read partially, not unreachable)")
}

func newSweepCommand(g *Globals) *cobra.Command {
	f := &sweepFlags{}
	cmd := &cobra.Command{
		Use:   "sweep [-n NS | -A] [--context A,B,...] [-o table|json|junit] [--fail-on warning|error[,partial]]",
		Short: "Report what is wrong with the sandbox fleet now (for cron, CI and incident channels)",
		Long: `sweep reads every sandbox of one or more contexts (swept concurrently, each within --timeout) and reports
findings with evidence: identity (IP_TAKEN, POD_DEAD, POD_GONE, UID_CHANGED, IP_STALE), STUCK_TERMINATING,
ENTRYPOINT_NOT_RUN, NOT_EXEC_READY, STATE_MISMATCH, FAILED_STICKY, TASK_FAILED, POD_RECREATED and restart
forensics (RESTART_OOM, RESTART_LIVENESS, RESTART_EVICTED, RESTART_UNEXPLAINED; ` + "`explain restart`" + ` checks a
liveness kill's timing). A context that does not answer is CONTEXT_UNREACHABLE.

--timeout bounds silence, not the total: while a context's initial lists keep arriving its clock starts again,
up to --max-time in all; a context whose lists are still arriving then (or stopped halfway) is CONTEXT_PARTIAL
with "slow" and "syncing": {received, total} in JSON, never unreachable. Lists that take longer than 2 s
say how far they came on stderr every few seconds.

--context takes a comma-separated list of kubeconfig contexts.

The score (0-100) is 100 minus the weighted findings per sandbox: error 10, warning 3, info 1, at most 10
per sandbox; an unreachable context counts as one failed sandbox. 100 means no finding at all.

A context read partially (a kind forbidden, a lookup that did not finish, an address not checked in other
namespaces, a CRD missing that Pods name) is CONTEXT_PARTIAL, "partial": true in JSON, and fails the sweep
by default (--fail-on error,partial); --fail-on error alone lets it pass.

Exit codes: 0 nothing --fail-on fails on, 1 findings at or above it (or a partial read), 2 usage error or every
context unreachable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSweep(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "table", "Output format: table, json or junit")
	fl.StringVar(&f.failOn, "fail-on", sweep.DefaultFailOn, "Exit 1 when a finding is at or above this severity (warning or error), and with ,partial when a context was read partially")
	f.read.add(fl)
	fl.BoolVar(&f.probe, "probe", false, "Check each running sandbox's exec daemon live (GET /ping on port 44772)")
	return cmd
}

func runSweep(ctx context.Context, g *Globals, f *sweepFlags) error {
	usage := func(err error) error { return &ExitError{Code: ExitUsage, Err: err} }
	failOn, err := sweep.ParseFailOn(f.failOn)
	if err != nil {
		return usage(err)
	}
	switch f.output {
	case "table", "json", "junit":
	default:
		return usage(fmt.Errorf("-o must be table, json or junit, not %q", f.output))
	}
	opts, targets, err := fleetSource(ctx, g, f.read)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err
		}
		return &ExitError{Code: sweepExitUnusable, Err: err}
	}
	// The probe talks to every sandbox's exec daemon: only when asked for,
	// --readonly or not.
	opts.Probe = f.probe

	report := sweep.Sweep(ctx, targets, opts)
	out := g.Out
	switch f.output {
	case "json":
		err = output.WriteSweepJSON(out, &report)
	case "junit":
		err = output.WriteSweepJUnit(out, &report, failOn)
	default:
		// The width is the terminal's under Out, the text-safe writer that
		// wraps it (which is no terminal itself).
		rawOut, _ := g.rawStreams()
		err = output.WriteSweepTableWidth(out, &report, terminalWidth(rawOut))
	}
	if err != nil {
		return &ExitError{Code: ExitInternal, Err: fmt.Errorf("writing the report: %w", err)}
	}
	if code := sweepExitCode(&report, failOn); code != 0 {
		// The report says everything; for a table, one line on stderr says why the code.
		var why error
		if code == sweepExitUnusable {
			// Name each context and its exact cause: "no context could be
			// swept" alone left the user to find which and why.
			var causes []string
			for _, c := range report.Contexts {
				if !c.Reachable {
					causes = append(causes, c.Error)
				}
			}
			why = errors.New("sweep: no context could be swept")
			if len(causes) > 0 {
				why = fmt.Errorf("sweep: no context could be swept: %s", textsafe.Line(strings.Join(causes, "; ")))
			}
		} else {
			why = fmt.Errorf("sweep: findings at or above %s", failOn.Severity)
			if failOn.Partial && report.Partial() {
				why = fmt.Errorf("sweep: findings at or above %s, or a context read partially (CONTEXT_PARTIAL)", failOn.Severity)
			}
		}
		return &ExitError{Code: code, Err: why, Silent: f.output != "table"}
	}
	return nil
}

// fleetSource is how sweep and get read the fleet: the options of one
// read (-n/-A, --selector, --stuck-after, image checks, --timeout and
// --max-time) and a target per --context, or the demo's simulated fleet
// under --demo. Usage errors are *ExitError; a demo that does not start is
// a plain error.
func fleetSource(ctx context.Context, g *Globals, r readFlags) (sweep.Options, []sweep.Target, error) {
	usage := func(err error) error { return &ExitError{Code: ExitUsage, Err: err} }
	if r.timeout <= 0 {
		return sweep.Options{}, nil, usage(errors.New("--timeout must be positive"))
	}
	if g.AllNamespaces && g.Kube.Namespace() != "" {
		return sweep.Options{}, nil, usage(errors.New("-n and -A cannot be used together"))
	}
	// With --demo each context named is a simulated fleet of its own, as
	// in the TUI.
	names := splitContexts(g.Kube.Context())
	e, err := g.env()
	if err != nil {
		return sweep.Options{}, nil, err
	}
	opts, targets, err := e.Sweep(ctx, names, r.timeout)
	// Lists that take long say how far they came on stderr.
	opts.MaxTime, opts.Progress = r.maxTime, g.Err
	return opts, targets, err
}

// splitContexts reads --context as a comma list; empty entries are dropped.
func splitContexts(flag string) []string {
	var out []string
	for _, s := range strings.Split(flag, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Exit codes of `sandscope sweep` (README).
const (
	sweepExitFindings = 1 // findings at or above --fail-on
	sweepExitUnusable = 2 // a usage error, or no context could be swept
)

// sweepExitCode is 2 when every context was unreachable, 1 when a finding
// fails failOn (by default an error, or a context read partially), else 0.
func sweepExitCode(r *sweep.Report, failOn sweep.FailOn) int {
	switch {
	case r.Unreachable():
		return sweepExitUnusable
	case r.Fails(failOn):
		return sweepExitFindings
	}
	return 0
}

// terminalWidth is w's width in columns when w is a terminal, else 0: a
// file or a pipe gets every cell whole.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		return 0
	}
	return width
}
