// Package serve is `sandscope serve`: a long-running, read-only exporter
// that keeps the fleet in memory through a kube.Watcher (as the TUI does)
// and serves it to Prometheus (/metrics), to scripts (/findings, the sweep's
// JSON contract, live) and to the kubelet's probes (/healthz, /readyz).
// It never execs, creates or deletes. The fleet's data goes only over TLS
// to users the API server allows (auth.go), on connections bounded in
// number and time (Limits).
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/output"
)

// Defaults of Options.
const (
	DefaultListen         = ":9808"
	DefaultAnalyzeEvery   = 30 * time.Second
	DefaultMaxConnections = 64
	shutdownGrace         = 5 * time.Second
)

// Limits bound what one client can hold: a connection that sends nothing,
// sends slowly, reads slowly or sits idle between requests is closed, and
// at most MaxConnections are served at once (the next wait to be accepted).
type Limits struct {
	MaxConnections int
	// ReadHeaderTimeout bounds the TLS handshake and the request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the whole request; WriteTimeout the time from its
	// headers to the end of the answer (authentication included).
	ReadTimeout, WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for this long.
	IdleTimeout time.Duration
}

// DefaultLimits are the limits Serve uses unless told otherwise: a scrape of a large fleet writes megabytes within the
// write timeout; Prometheus's default interval (30 s) and more keep a
// connection busy or open it again, so a connection idle 30 s is closed.
var DefaultLimits = Limits{
	MaxConnections:    DefaultMaxConnections,
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       30 * time.Second,
}

// withDefaults fills every zero field from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxConnections <= 0 {
		l.MaxConnections = d.MaxConnections
	}
	for _, f := range []struct{ v, def *time.Duration }{
		{&l.ReadHeaderTimeout, &d.ReadHeaderTimeout}, {&l.ReadTimeout, &d.ReadTimeout},
		{&l.WriteTimeout, &d.WriteTimeout}, {&l.IdleTimeout, &d.IdleTimeout},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}

// Options of a Server.
type Options struct {
	// ContextName names the cluster in findings and the report ("" = the
	// kubeconfig context, or "in-cluster").
	ContextName string
	// Namespace to watch; "" watches every namespace.
	Namespace   string
	PodSelector string
	StuckAfter  time.Duration
	// ImageConfig reads image configs for ENTRYPOINT_NOT_RUN; nil = off.
	ImageConfig kube.ImageConfigReader
	// AnalyzeEvery is the least time between two analyses (findings, restart
	// forensics, score). An analysis runs when the fleet changed since the
	// last one, so an idle fleet costs no API calls.
	AnalyzeEvery time.Duration
	// MaxForensics bounds the Pods whose Events one analysis reads.
	MaxForensics int
	// Demo marks the status as the simulated fleet.
	Demo bool
	// Log receives one line per lifecycle step and per failed analysis.
	Log io.Writer

	// InsecurePlainHTTP serves plain HTTP and lets anyone who can connect
	// read /metrics and /findings: for a workstation, never a cluster.
	// Otherwise serve speaks TLS, and a request for /metrics or /findings
	// needs a bearer token the API server accepts (TokenReview) of a user
	// allowed `get` on that path (SubjectAccessReview). /healthz and
	// /readyz answer anyone: they tell nothing about the fleet.
	InsecurePlainHTTP bool
	// TLSCertFile and TLSKeyFile are the serving certificate and its key;
	// both "" makes a self-signed certificate at start.
	TLSCertFile, TLSKeyFile string
	// Limits bound connections; zero fields take DefaultLimits'.
	Limits Limits
}

// Server is one exporter over one cluster connection.
type Server struct {
	clients *kube.Clients
	opts    Options
	watcher *kube.Watcher

	ready    atomic.Bool
	analysis atomic.Pointer[analysis]
	restarts *restartCounter // only the analysis loop touches it
	registry *prometheus.Registry
	denied   string // the denials last logged (the analysis loop only)

	auth *apiServerAuth // nil: InsecurePlainHTTP
	cert *servingCert   // nil: InsecurePlainHTTP
}

// analysis is the latest analysis, replaced whole.
type analysis struct {
	report   sweep.Report
	restarts map[RestartKey]float64
}

// New builds a Server over c. Nothing talks to the server until Serve; the
// error is a TLS certificate that does not load, or no API server to check
// requests with.
func New(c *kube.Clients, opts Options) (*Server, error) {
	if opts.AnalyzeEvery <= 0 {
		opts.AnalyzeEvery = DefaultAnalyzeEvery
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.ContextName == "" {
		opts.ContextName = c.Context
		if opts.ContextName == "" {
			opts.ContextName = "in-cluster"
		}
	}
	s := &Server{
		clients:  c,
		opts:     opts,
		restarts: newRestartCounter(),
		watcher: kube.NewWatcher(c, kube.WatcherOptions{
			Namespace:   opts.Namespace,
			PodSelector: opts.PodSelector,
			StuckAfter:  opts.StuckAfter,
			ImageConfig: opts.ImageConfig,
			ReadOnly:    true, // serve never acts
			Demo:        opts.Demo,
		}),
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		NewCollector(s.State),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	s.registry = reg
	if opts.InsecurePlainHTTP {
		return s, nil
	}
	var err error
	if s.cert, err = newServingCert(opts.TLSCertFile, opts.TLSKeyFile); err != nil {
		return nil, err
	}
	if s.auth, err = newAPIServerAuth(c.Kube, opts.Log); err != nil {
		return nil, err
	}
	return s, nil
}

// WaitForSync blocks until the fleet has synced, or ctx ends.
func (s *Server) WaitForSync(ctx context.Context) error { return s.watcher.WaitForSync(ctx) }

// WaitForFirstAnalysis blocks until the first analysis after the sync is
// done, or ctx ends: the end of the start-up's allocations (the analysis of
// a large fleet allocates megabytes of its own).
func (s *Server) WaitForFirstAnalysis(ctx context.Context) error {
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return s.analysis.Load() != nil, nil
	})
}

// State is what a scrape reads now.
func (s *Server) State() State {
	st := State{Snapshot: s.watcher.Fleet().Snapshot(), Watches: s.watcher.Watches(), Now: time.Now()}
	if a := s.analysis.Load(); a != nil {
		st.Report, st.Restarts = &a.report, a.restarts
	}
	return st
}

// Handler serves /metrics and /findings to the users the API server allows
// (to anyone under InsecurePlainHTTP), /healthz and /readyz to anyone.
func (s *Server) Handler() http.Handler {
	protect := func(h http.Handler) http.Handler { return h }
	if s.auth != nil {
		protect = s.auth.protect
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", protect(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})))
	mux.Handle("GET /findings", protect(http.HandlerFunc(s.serveFindings)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "fleet not synced yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// serveFindings writes the latest analysis in the sweep's JSON contract.
func (s *Server) serveFindings(w http.ResponseWriter, _ *http.Request) {
	a := s.analysis.Load()
	if a == nil {
		http.Error(w, "no analysis yet: the fleet is not synced", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := output.WriteSweepJSON(w, &a.report); err != nil {
		fmt.Fprintf(s.opts.Log, "sandscope serve: writing /findings: %v\n", err)
	}
}

// Serve runs the watcher, the analysis loop and the HTTP server on ln until
// ctx ends, then shuts the HTTP server down gracefully. It returns an error
// only when something cannot start or the listener fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	watchErr := make(chan error, 1)
	crash.Go(func() { watchErr <- s.watcher.Run(ctx) })

	var wg sync.WaitGroup
	wg.Add(1)
	crash.Go(func() {
		defer wg.Done()
		s.analyzeLoop(ctx)
	})

	srv, ln := s.httpServer(ln)
	httpErr := make(chan error, 1)
	crash.Go(func() { httpErr <- srv.Serve(ln) })
	s.logListening(ln.Addr())

	var err error
	watcherDone := false
	select {
	case <-ctx.Done():
	case err = <-watchErr:
		watcherDone = true
		if err != nil {
			err = fmt.Errorf("watching the fleet: %w", err)
		}
	case err = <-httpErr:
		err = fmt.Errorf("serving HTTP on %s: %w", ln.Addr(), err)
	}
	cancel()
	if !watcherDone {
		<-watchErr // the informers are down before Serve returns
	}
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if serr := srv.Shutdown(sctx); serr != nil && err == nil && !errors.Is(serr, http.ErrServerClosed) {
		err = fmt.Errorf("shutting down HTTP: %w", serr)
	}
	wg.Wait()
	fmt.Fprintln(s.opts.Log, "sandscope serve: stopped")
	return err
}

// httpServer is the HTTP server with its limits, and ln bounded to
// MaxConnections at once and wrapped in TLS unless InsecurePlainHTTP.
func (s *Server) httpServer(ln net.Listener) (*http.Server, net.Listener) {
	l := s.opts.Limits
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    16 << 10, // a bearer token and a few headers
		// Failed handshakes and cut connections are the client's doing and
		// may be many: one line a minute says they happen.
		ErrorLog: log.New(&sometimesWriter{w: s.opts.Log, every: rate.Sometimes{Interval: time.Minute}}, "sandscope serve: http: ", 0),
	}
	// Accept waits while MaxConnections are open: the next connection stays
	// in the kernel's queue until one closes (at the latest IdleTimeout).
	ln = netutil.LimitListener(ln, l.MaxConnections)
	if s.cert != nil {
		srv.TLSConfig = s.cert.tlsConfig()
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	return srv, ln
}

// sometimesWriter writes what every lets through and drops the rest.
type sometimesWriter struct {
	w     io.Writer
	every rate.Sometimes
}

func (s *sometimesWriter) Write(p []byte) (int, error) {
	s.every.Do(func() { _, _ = s.w.Write(p) })
	return len(p), nil
}

// logListening says how requests are let in; plain HTTP loudly.
func (s *Server) logListening(addr net.Addr) {
	if s.cert == nil {
		fmt.Fprintf(s.opts.Log, "sandscope serve: listening on %s (read-only)\n", addr)
		fmt.Fprintln(s.opts.Log, "sandscope serve: WARNING: --insecure-plain-http: /metrics and /findings are served over plain HTTP "+
			"to ANYONE who can connect, with no authentication: every namespace's sandbox and Pod names, IPs, nodes, images "+
			"and tenant-written text. Use it on a workstation only, never in a cluster.")
		return
	}
	fmt.Fprintf(s.opts.Log, "sandscope serve: listening on %s (read-only, TLS)\n", addr)
	how := "the certificate of " + s.opts.TLSCertFile
	if s.cert.SelfSigned() {
		how = "a self-signed certificate made at start (give --tls-cert-file and --tls-private-key-file to have scrapers verify it)"
	}
	fmt.Fprintf(s.opts.Log, "sandscope serve: TLS with %s; /metrics and /findings need a bearer token whose user the API server allows to get them\n", how)
}

// analyzeLoop waits for the first sync, then analyzes the fleet whenever it
// changed, at most once per AnalyzeEvery.
func (s *Server) analyzeLoop(ctx context.Context) {
	if err := s.waitForSync(ctx); err != nil {
		return
	}
	s.ready.Store(true)
	fmt.Fprintln(s.opts.Log, "sandscope serve: fleet synced")
	changes, unsubscribe := s.watcher.Subscribe()
	defer unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
		}
		s.analyze(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.opts.AnalyzeEvery):
		}
	}
}

// analyze runs the sweep's own analysis on the live snapshot: the same
// findings, forensics, score and JSON as `sandscope sweep -o json`.
func (s *Server) analyze(ctx context.Context) {
	src := &liveSource{Clients: s.clients, watcher: s.watcher}
	target := sweep.Target{Name: s.opts.ContextName, Open: func(context.Context) (sweep.Source, error) { return src, nil }}
	rep := sweep.Sweep(ctx, []sweep.Target{target}, sweep.Options{
		Timeout:      max(s.opts.AnalyzeEvery, sweep.DefaultTimeout),
		MaxForensics: s.opts.MaxForensics,
	})
	if ctx.Err() != nil {
		return // cut short by shutdown: keep the last complete analysis
	}
	for _, c := range rep.Contexts {
		if !c.Reachable {
			fmt.Fprintf(s.opts.Log, "sandscope serve: analysis: %s\n", c.Error)
		}
	}
	if src.snap != nil {
		s.logDenied(src.snap.Status.Forbidden)
	}
	restarts := s.restarts.observe(src.snap, rep.Findings)
	s.analysis.Store(&analysis{report: rep, restarts: restarts})
}

// logDenied says, once per change, which requests the server denies: a
// ServiceAccount missing a verb of deploy/clusterrole.yaml shows here.
func (s *Server) logDenied(forbidden []string) {
	now := strings.Join(forbidden, "; ")
	if now == s.denied {
		return
	}
	s.denied = now
	if now == "" {
		fmt.Fprintln(s.opts.Log, "sandscope serve: every watch is allowed again")
		return
	}
	fmt.Fprintf(s.opts.Log, "sandscope serve: the API server refuses: forbidden: %s\n", now)
}

// liveSource is a sweep.Source over the running watcher: its snapshot is
// the one in memory (no new watch), its lookups the cluster's.
type liveSource struct {
	*kube.Clients
	watcher *kube.Watcher
	snap    *fleet.Snapshot
}

func (l *liveSource) Server() string { return l.Clients.Server }

func (l *liveSource) Snapshot(context.Context, sweep.Options) (*fleet.Snapshot, error) {
	snap := l.watcher.Fleet().Snapshot()
	if !snap.Status.Synced {
		return nil, errors.New("the fleet is not synced")
	}
	if d := snap.Status.DisconnectedSince; d != nil {
		return nil, fmt.Errorf("connection to the API server lost since %s", d.UTC().Format(time.RFC3339))
	}
	l.snap = snap
	return snap, nil
}
