package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// Slow is not unreachable. A busy API server that is still streaming 50,000
// Pods after the 30 s timeout used to make the sweep say the context did not
// answer (CONTEXT_UNREACHABLE, exit 2) although it was answering. --timeout
// now bounds silence: each context's clock starts again whenever its initial
// lists make progress, and once more when they are in (so that forensics
// get the whole --timeout), up to --max-time in all. A context whose
// deadline passes while its lists are still arriving, or that stopped
// sending halfway, was read partially (a CONTEXT_PARTIAL finding saying N of
// M so far); only a context that sent nothing is unreachable.

// DefaultMaxTime is --max-time's default: however its lists keep coming,
// a context is given up after this long.
const DefaultMaxTime = 5 * time.Minute

// Progress lines on stderr: the first once syncing has taken progressAfter,
// then every progressEvery.
const (
	progressAfter = 2 * time.Second
	progressEvery = 5 * time.Second
)

// errSilent is the cause of a context's end when nothing arrived for
// --timeout.
var errSilent = errors.New("no progress")

// deadline ends a context's read after idle without progress, or limit in
// all, whichever comes first.
type deadline struct {
	idle  time.Duration
	mu    sync.Mutex
	timer *time.Timer
}

// withDeadline returns ctx ended by d; extend restarts its idle clock.
func withDeadline(parent context.Context, idle, limit time.Duration) (context.Context, *deadline, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	limited, cancelLimit := context.WithTimeout(ctx, max(limit, idle))
	d := &deadline{idle: idle}
	d.timer = time.AfterFunc(idle, func() { cancel(errSilent) })
	return limited, d, func() {
		d.mu.Lock()
		d.timer.Stop()
		d.mu.Unlock()
		cancelLimit()
		cancel(context.Canceled)
	}
}

// WithDeadline is the deadline of one context's read, as a sweep gives it
// (--timeout of silence, --max-time in all): a one-shot read outside Sweep
// (get) calls Source.Snapshot with the returned ctx and options.
func WithDeadline(parent context.Context, opts Options) (context.Context, Options, context.CancelFunc) {
	opts = opts.withDefaults()
	ctx, d, cancel := withDeadline(parent, opts.Timeout, opts.MaxTime)
	opts.deadline = d
	return ctx, opts, cancel
}

// TimedOut reports whether ctx, from WithDeadline, ended by its deadline.
func TimedOut(ctx context.Context) bool { return timedOut(ctx) }

// extend restarts the idle clock: the context made progress.
func (d *deadline) extend() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timer.Reset(d.idle)
}

// timedOut reports whether ctx ended by a deadline: silence or the limit.
func timedOut(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(context.Cause(ctx), errSilent)
}

// SlowError is a context whose deadline passed while its initial lists
// were still arriving (or after they stopped halfway): it answered, slowly.
type SlowError struct {
	Context  string
	Progress []model.ListProgress
	// Silent: nothing arrived for Idle; else the limit Limit passed.
	Silent      bool
	Idle, Limit time.Duration
	// Undiscovered: discovery had not answered, so no engine's sandboxes
	// were asked for, and Progress holds the Pods' list alone.
	Undiscovered bool
}

func (e *SlowError) Error() string {
	why := fmt.Sprintf("still receiving its lists after --max-time %s", e.Limit)
	if e.Silent {
		why = fmt.Sprintf("its lists stopped arriving for --timeout %s", e.Idle)
	}
	received, total := e.totals()
	so := model.Thousands(received) + " objects so far"
	if total > 0 {
		so = model.Thousands(received) + " of " + model.Thousands(total) + " objects so far"
	}
	if e.Undiscovered {
		so += "; discovery had not answered, so no engine's sandboxes were asked for"
	}
	return fmt.Sprintf("slow: %s, %s (%s)", why, so, model.SyncLine(e.Progress))
}

// totals are the objects received and, when known, how many the lists
// hold: unknown while discovery has not said which lists there are.
func (e *SlowError) totals() (received, total int64) {
	received, total = model.SyncTotals(e.Progress)
	if e.Undiscovered {
		total = 0
	}
	return received, total
}

// Syncing is how far a slow context's initial lists came (ContextResult).
type Syncing struct {
	Received int64 `json:"received"`
	// Total is what the server said the lists hold; 0 when it did not say.
	Total     int64                `json:"total,omitempty"`
	Resources []model.ListProgress `json:"resources"`
}

// slowContext is the result of a context that answered too slowly to be
// read whole: reachable, partial, and why.
func slowContext(name, server string, e *SlowError) contextSweep {
	received, total := e.totals()
	unseen := []string{e.Error()}
	return contextSweep{
		result: ContextResult{Name: name, Server: server, Reachable: true, Partial: true, Unseen: unseen,
			Slow: e.Error(), Syncing: &Syncing{Received: received, Total: total, Resources: e.Progress}},
		findings: []model.Finding{partialFinding(name, unseen)},
	}
}

// ProgressReporter writes a context's sync progress to a terminal or a log
// once syncing has taken 2 s, then every 5 s: sweep and get on stderr,
// serve in its log.
type ProgressReporter struct {
	w       io.Writer
	prefix  string
	context string
	next    time.Time
}

// NewProgressReporter reports to w (nil: nowhere), each line prefixed
// ("sandscope: "), for the context named context, from now on.
func NewProgressReporter(w io.Writer, prefix, context string, now time.Time) *ProgressReporter {
	return &ProgressReporter{w: w, prefix: prefix, context: context, next: now.Add(progressAfter)}
}

// Report writes the line when it is due.
func (r *ProgressReporter) Report(now time.Time, progress []model.ListProgress) {
	if r == nil || r.w == nil || now.Before(r.next) || model.SyncLine(progress) == "" {
		return
	}
	r.next = now.Add(progressEvery)
	fmt.Fprintln(r.w, textsafe.Line(r.prefix+ProgressLine(r.context, progress)))
}

// ProgressLine is one line of sync progress, e.g.
// "syncing prod: pods 12,400 of 50,000 · 4,100/s · batchsandboxes 3,000…".
func ProgressLine(context string, progress []model.ListProgress) string {
	name := context
	if name == "" {
		name = "the fleet"
	}
	return textsafe.Line("syncing " + name + ": " + model.SyncLine(progress))
}
