package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/serve"
)

type serveFlags struct {
	listen       string
	analyzeEvery time.Duration
}

func newServeCommand(g *Globals) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve [-n NS | -A] [--listen :9808]",
		Short: "Watch the fleet continuously and serve Prometheus metrics and live findings (read-only)",
		Long: "serve keeps the fleet in memory, as the terminal UI does, and serves over HTTP:\n" +
			"  /metrics   Prometheus metrics (sandscope_sandboxes, sandscope_identity, sandscope_findings, ...)\n" +
			"  /findings  the latest analysis in the JSON contract of `sandscope sweep -o json`\n" +
			"  /healthz   200 while the process runs\n" +
			"  /readyz    200 once the fleet has synced\n\n" +
			"It is always read-only: it never execs, creates or deletes. Findings, restart forensics and the score are\n" +
			"re-analyzed when the fleet changed, at most once per --analyze-every. SIGTERM shuts it down gracefully.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", serve.DefaultListen, "Address to serve HTTP on (host:port)")
	fl.DurationVar(&f.analyzeEvery, "analyze-every", serve.DefaultAnalyzeEvery, "Least time between two analyses of a changing fleet (findings, forensics, score)")
	return cmd
}

func runServe(ctx context.Context, g *Globals, f *serveFlags) error {
	usage := func(err error) error { return &ExitError{Code: ExitUsage, Err: err} }
	if f.analyzeEvery <= 0 {
		return usage(errors.New("--analyze-every must be positive"))
	}
	if g.AllNamespaces && g.Kube.Namespace() != "" {
		return usage(errors.New("-n and -A cannot be used together"))
	}
	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		return usage(fmt.Errorf("--listen %q: want host:port, e.g. :9808", f.listen))
	}
	g.ReadOnly = true // serve never acts, whatever the flags say

	opts := serve.Options{
		PodSelector:  g.Selector,
		StuckAfter:   g.StuckAfter,
		AnalyzeEvery: f.analyzeEvery,
		Log:          g.Err,
	}
	conn, err := g.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The global --image-checks; read-only makes "on" anonymous. The demo's
	// simulation answers them, and no registry is asked.
	opts.Namespace, opts.ImageConfig, opts.Demo = conn.Namespace(), conn.ImageChecks(), conn.Demo()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("cannot listen on %s: %w", f.listen, err)}
	}
	srv := serve.New(conn.Clients, opts)
	// The same GC tuning as the TUI while the fleet loads: serve holds the
	// same model and must fit the same memory. Its start-up ends with its
	// first analysis, whose garbage goes back to the OS with the load's.
	crash.Go(func() { tuneMemoryForWatch(ctx, srv.WaitForFirstAnalysis) })
	if err := srv.Serve(ctx, ln); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	return nil
}
