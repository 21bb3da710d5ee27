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
	listen            string
	analyzeEvery      time.Duration
	insecurePlainHTTP bool
	tlsCertFile       string
	tlsKeyFile        string
	maxConnections    int
}

func newServeCommand(g *Globals) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve [-n NS | -A] [--listen :9808] [--tls-cert-file F --tls-private-key-file F | --insecure-plain-http]",
		Short: "Watch the fleet continuously and serve Prometheus metrics and live findings (read-only)",
		Long: `serve keeps the fleet in memory, as the terminal UI does, and serves:
  /metrics   Prometheus metrics (sandscope_sandboxes, sandscope_identity, sandscope_findings, ...)
  /findings  the latest analysis in the JSON contract of ` + "`sandscope sweep -o json`" + `
  /healthz   200 while the process runs
  /readyz    200 once the fleet has synced

It serves HTTPS (the certificate of --tls-cert-file, or a self-signed one made at start). /metrics and
/findings need a bearer token the API server accepts, of a user allowed to ` + "`get`" + ` that path (a non-resource
URL in RBAC): 401 without, 403 when not allowed. --insecure-plain-http serves plain HTTP to anyone, for local use.

It is always read-only: it never execs, creates or deletes. Findings, restart forensics and the score are
re-analyzed when the fleet changed, at most once per --analyze-every. SIGTERM shuts it down gracefully.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", serve.DefaultListen, "Address to serve on (host:port)")
	fl.DurationVar(&f.analyzeEvery, "analyze-every", serve.DefaultAnalyzeEvery, "Least time between two analyses of a changing fleet (findings, forensics, score)")
	fl.StringVar(&f.tlsCertFile, "tls-cert-file", "", "Serving certificate (PEM), read again when it changes; unset: a self-signed one made at start")
	fl.StringVar(&f.tlsKeyFile, "tls-private-key-file", "", "Private key (PEM) of --tls-cert-file")
	fl.BoolVar(&f.insecurePlainHTTP, "insecure-plain-http", false, "Serve plain HTTP with no authentication: anyone who can connect reads the whole fleet (local use only)")
	fl.IntVar(&f.maxConnections, "max-connections", serve.DefaultMaxConnections, "Connections served at once; more wait to be accepted")
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
	if f.maxConnections <= 0 {
		return usage(errors.New("--max-connections must be positive"))
	}
	if f.insecurePlainHTTP && (f.tlsCertFile != "" || f.tlsKeyFile != "") {
		return usage(errors.New("--insecure-plain-http serves no TLS: drop --tls-cert-file and --tls-private-key-file"))
	}
	if (f.tlsCertFile == "") != (f.tlsKeyFile == "") {
		return usage(errors.New("--tls-cert-file and --tls-private-key-file go together"))
	}
	if e, err := g.env(); err == nil && !e.CanAuthenticate() && !f.insecurePlainHTTP { // err: connect says why, below
		return usage(errors.New("the demo has no API server to check tokens with: add --insecure-plain-http"))
	}
	g.ReadOnly = true // serve never acts, whatever the flags say

	opts := serve.Options{
		PodSelector:       g.Selector,
		StuckAfter:        g.StuckAfter,
		AnalyzeEvery:      f.analyzeEvery,
		Log:               g.Err,
		InsecurePlainHTTP: f.insecurePlainHTTP,
		TLSCertFile:       f.tlsCertFile,
		TLSKeyFile:        f.tlsKeyFile,
		Limits:            serve.Limits{MaxConnections: f.maxConnections},
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
	srv, err := serve.New(conn.Clients, opts)
	if err != nil {
		ln.Close()
		return &ExitError{Code: ExitFailure, Err: err}
	}
	// The same GC tuning as the TUI while the fleet loads: serve holds the
	// same model and must fit the same memory. Its start-up ends with its
	// first analysis, whose garbage goes back to the OS with the load's.
	crash.Go(func() { tuneMemoryForWatch(ctx, srv.WaitForFirstAnalysis) })
	if err := srv.Serve(ctx, ln); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	return nil
}
