// Package sweep answers "what is wrong with my sandbox fleet right now" for
// cron jobs, CI gates and incident channels: it sweeps one or more cluster
// contexts concurrently, turns every sandbox notice into a finding, explains
// restarts from evidence (restart forensics), and returns a Report, with
// the verdicts (Fails, Unreachable) an exit code is made of. output/ prints
// it, as a table, JSON (a contract) or JUnit.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Defaults of Options.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxForensics     = 200
	DefaultForensicsWorkers = 8
	DefaultProbeTimeout     = 2 * time.Second
	DefaultProbeWorkers     = 16
	DefaultMaxProbes        = 2000
)

// Lookup reads what restart forensics needs beyond the fleet snapshot, one
// object at a time (inspect.Lookup). *kube.Clients satisfies it.
type Lookup = inspect.Lookup

// Source is one context as the sweep reads it: a synced fleet snapshot and
// the lookups for forensics. ClientsSource builds one from kube.Clients; the
// demo provides its own over the simulated fleet.
type Source interface {
	// Snapshot returns the fleet once every informer has synced (and image
	// config reads have settled), or an error when the context cannot be
	// read (unreachable, forbidden, not synced in time).
	Snapshot(ctx context.Context, opts Options) (*fleet.Snapshot, error)
	// Server is the API server URL, for the report. A Source may also have
	// a Notes() []string method saying where its snapshot was partial.
	Server() string
	Lookup
}

// Target is one context to sweep. Open is called inside the context's own
// timeout, concurrently with the other targets'.
type Target struct {
	Name string
	Open func(ctx context.Context) (Source, error)
	// Ping, when set, is the live check of this target's addresses in
	// place of Options.Ping: the demo's exec daemons are answered by its
	// simulation, whose Pod IPs exist nowhere on the network.
	Ping func(ctx context.Context, hostPort string) error
}

// ClientsTarget sweeps an already connected context.
func ClientsTarget(name string, c *kube.Clients) Target {
	return Target{Name: name, Open: func(context.Context) (Source, error) { return ClientsSource(c), nil }}
}

// ConnectTarget connects lazily, within the context's timeout.
func ConnectTarget(name string, connect func(ctx context.Context) (*kube.Clients, error)) Target {
	return Target{Name: name, Open: func(ctx context.Context) (Source, error) {
		c, err := connect(ctx)
		if err != nil {
			return nil, err
		}
		return ClientsSource(c), nil
	}}
}

// Options of a sweep. The zero value sweeps each context's own namespace
// with the defaults above.
type Options struct {
	// Namespace to sweep; "" means the context's namespace unless AllNamespaces.
	Namespace     string
	AllNamespaces bool
	// PodSelector picks plain-Pod sandboxes ("" = label opensandbox.io/id).
	PodSelector string
	// StuckAfter: deleting longer than grace + this is STUCK_TERMINATING.
	StuckAfter time.Duration
	// Timeout bounds each context's silence: connect, then the initial
	// lists (the clock starts again whenever they make progress), then the
	// rest (forensics, probes) from when they are in (slow.go).
	Timeout time.Duration
	// MaxTime bounds each context in all, however its lists keep coming.
	// Default DefaultMaxTime; never less than Timeout.
	MaxTime time.Duration
	// Progress (nil: nowhere) hears how far each context's initial lists
	// have come, once they take longer than 2 s, every few seconds.
	Progress io.Writer
	// ImageConfig reads image configs for ENTRYPOINT_NOT_RUN; nil = no checks.
	ImageConfig kube.ImageConfigReader
	// Probe enables the live execd check (GET /ping) for NOT_EXEC_READY.
	Probe bool
	// Ping is the live check of one address (host:port); default execd's
	// /ping over a direct HTTP connection.
	Ping         func(ctx context.Context, hostPort string) error
	ProbeTimeout time.Duration
	MaxProbes    int
	// MaxForensics bounds how many Pods get Events fetched; the rest keep
	// their RESTARTED notice and the report says so.
	MaxForensics int
	// Now is the clock of the report. Default time.Now.
	Now func() time.Time

	// deadline is the context's own, which a source extends while its
	// lists make progress (set by sweepContext; nil: none).
	deadline *deadline
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTime <= 0 {
		o.MaxTime = DefaultMaxTime
	}
	if o.MaxForensics <= 0 {
		o.MaxForensics = DefaultMaxForensics
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.MaxProbes <= 0 {
		o.MaxProbes = DefaultMaxProbes
	}
	if o.Ping == nil {
		o.Ping = execdPing
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Report is the result of a sweep. Its JSON form is a contract: keep the
// field names stable.
type Report struct {
	GeneratedAt time.Time       `json:"generatedAt"`
	Contexts    []ContextResult `json:"contexts"`
	Summary     Summary         `json:"summary"`
	Findings    []model.Finding `json:"findings"`
	// Notes say where the sweep was partial (forensics capped, probes
	// capped, CRDs missing); shown in the table, not part of the JSON.
	Notes []string `json:"-"`
	// Swept lists every sandbox swept, for JUnit's one case per sandbox.
	Swept []SandboxID `json:"-"`
}

// ContextResult says whether one context could be swept, and whether
// fully: Partial when the read could not see everything (Unseen says what).
type ContextResult struct {
	Name      string   `json:"name"`
	Server    string   `json:"server"`
	Reachable bool     `json:"reachable"`
	Partial   bool     `json:"partial"`
	Unseen    []string `json:"unseen,omitempty"`
	Error     string   `json:"error"`
	// Slow says why a context that answered was read partially: its
	// initial lists were still arriving when its deadline passed, and
	// Syncing how far they came.
	Slow    string   `json:"slow,omitempty"`
	Syncing *Syncing `json:"syncing,omitempty"`
}

// Summary counts what was swept and found.
type Summary struct {
	Sandboxes int    `json:"sandboxes"`
	Pods      int    `json:"pods"`
	Findings  Counts `json:"findings"`
	Score     int    `json:"score"`
	// Stuck sums up the Pods stuck Terminating over every context swept
	// (the Pods of deleted sandboxes included): they hold quota, and image
	// pull slots per node while they are still in PodInitializing.
	Stuck fleet.StuckSummary `json:"stuck"`
}

// Counts of findings per severity.
type Counts struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// contextSweep is what one context contributed.
type contextSweep struct {
	result    ContextResult
	findings  []model.Finding
	sandboxes int
	pods      int
	stuck     []fleet.StuckPod
	stuckObjs int
	notes     []string
	swept     []SandboxID
}

// Sweep sweeps every target concurrently, each within opts.Timeout. A target
// that cannot be read becomes a CONTEXT_UNREACHABLE finding; it never holds
// up or aborts the others.
func Sweep(ctx context.Context, targets []Target, opts Options) Report {
	opts = opts.withDefaults()
	results := make([]contextSweep, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		crash.Go(func() {
			defer wg.Done()
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			results[i] = sweepContext(ctx, t, opts)
		})
	}
	wg.Wait()

	r := Report{GeneratedAt: opts.Now().UTC(), Contexts: make([]ContextResult, 0, len(targets)), Findings: []model.Finding{}}
	sandboxes := 0
	var stuck []fleet.StuckPod
	stuckObjs := 0
	for _, cs := range results {
		stuck = append(stuck, cs.stuck...)
		stuckObjs += cs.stuckObjs
		r.Contexts = append(r.Contexts, cs.result)
		r.Findings = append(r.Findings, cs.findings...)
		r.Notes = append(r.Notes, cs.notes...)
		r.Swept = append(r.Swept, cs.swept...)
		sandboxes += cs.sandboxes
		r.Summary.Pods += cs.pods
	}
	model.SortFindings(r.Findings)
	r.Summary.Sandboxes = sandboxes
	r.Summary.Findings.Error, r.Summary.Findings.Warning, r.Summary.Findings.Info = model.CountBySeverity(r.Findings)
	r.Summary.Score = model.Score(r.Findings, sandboxes)
	r.Summary.Stuck = fleet.SummarizeStuck(stuck, opts.Now())
	r.Summary.Stuck.Objects = stuckObjs
	return r
}

// sweepContext sweeps one target within its own timeout. Whatever goes wrong
// (including a panic in a source) ends as a CONTEXT_UNREACHABLE finding.
func sweepContext(parent context.Context, t Target, opts Options) (cs contextSweep) {
	cs.result = ContextResult{Name: t.Name}
	if t.Ping != nil {
		opts.Ping = t.Ping
	}
	ctx, opts, cancel := WithDeadline(parent, opts)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			cs = unreachable(t.Name, cs.result.Server, fmt.Errorf("internal error: %v", r))
		}
	}()
	if t.Open == nil {
		return unreachable(t.Name, "", errors.New("no way to connect"))
	}
	src, err := t.Open(ctx)
	if err != nil {
		return unreachable(t.Name, serverOf(err), timeoutWrap(ctx, opts.Timeout, err))
	}
	cs.result.Server = src.Server()
	snap, err := src.Snapshot(ctx, opts)
	var slow *SlowError
	if errors.As(err, &slow) {
		return slowContext(t.Name, cs.result.Server, slow)
	}
	if err != nil {
		return unreachable(t.Name, cs.result.Server, timeoutWrap(ctx, opts.Timeout, err))
	}
	cs.result.Reachable = true
	cs.sandboxes, cs.pods = snap.NumSandboxes(), snap.NumPods()
	cs.stuck, cs.stuckObjs = fleet.StuckPodsOf(snap), fleet.StuckObjectsOf(snap)
	cs.swept = make([]SandboxID, snap.NumSandboxes())
	for i, sb := range snap.Sandboxes() {
		cs.swept[i] = SandboxID{Context: t.Name, Namespace: sb.Namespace(), Name: sb.Name()}
	}
	cs.findings, cs.notes = Analyze(ctx, t.Name, snap, src, opts)
	if m, ok := src.(interface{ MissingNamespace() string }); ok && m.MissingNamespace() != "" {
		ns := m.MissingNamespace()
		cs.findings = append(cs.findings, model.Finding{Code: model.CodeNamespaceNotFound, Severity: model.SeverityError,
			Context: t.Name, Namespace: ns, Message: fmt.Sprintf("namespace %s does not exist: nothing was swept", ns),
			Evidence: []model.Evidence{{Kind: model.Observed, Text: "API server: namespaces/" + ns + " not found"}}})
	}
	cs.notes = append(cs.notes, ReadNotes(t.Name, src, snap)...)
	if unseen := Unseen(src, snap); len(unseen) > 0 {
		cs.result.Partial, cs.result.Unseen = true, unseen
		cs.findings = append(cs.findings, partialFinding(t.Name, unseen))
	}
	return cs
}

// ReadNotes says where the read of context name was partial: what src
// could not do (image checks still running, holders not looked up), what
// the watch noted (a CRD not installed) and what the server denied.
func ReadNotes(name string, src Source, snap *fleet.Snapshot) []string {
	var notes []string
	if n, ok := src.(interface{ Notes() []string }); ok {
		notes = prefixed(name, n.Notes())
	}
	for _, n := range snap.Status.Notes {
		notes = append(notes, name+": "+n)
	}
	for _, f := range snap.Status.Forbidden {
		notes = append(notes, name+": forbidden: "+f)
	}
	return notes
}

func unreachable(name, server string, err error) contextSweep {
	msg := err.Error()
	return contextSweep{
		result: ContextResult{Name: name, Server: server, Reachable: false, Error: msg},
		findings: []model.Finding{model.NewFinding(name, nil, model.Notice{
			Code: model.CodeContextUnreachable, Severity: model.SeverityError,
			Message:  fmt.Sprintf("context %s could not be swept: %s", name, msg),
			Evidence: []model.Evidence{{Kind: model.Observed, Text: msg}},
		})},
	}
}

func serverOf(err error) string {
	var ce *kube.ConnectError
	if errors.As(err, &ce) {
		return ce.Server
	}
	return ""
}

// timeoutWrap names the sweep timeout when it is what ended the attempt.
func timeoutWrap(ctx context.Context, d time.Duration, err error) error {
	if !timedOut(ctx) {
		return err
	}
	var ce *kube.ConnectError
	if errors.As(err, &ce) {
		// Say which timeout ended it: the sweep's, not the request timeout.
		return &kube.ConnectError{Context: ce.Context, Server: ce.Server,
			Reason: fmt.Sprintf("cluster did not answer within the sweep timeout %s", d)}
	}
	return fmt.Errorf("no answer within the sweep timeout %s: %w", d, err)
}
