package execute

import (
	"bytes"
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/model"
)

// Line is the outcome of one target of a fan-out, one JSON line each.
type Line struct {
	Sandbox    string           `json:"sandbox"`
	Pod        string           `json:"pod,omitempty"`
	UID        string           `json:"uid,omitempty"`
	IP         string           `json:"ip,omitempty"`
	ExitCode   *int             `json:"exitCode,omitempty"` // set when the command ran to its end
	Error      *refusal.Error   `json:"error,omitempty"`    // the refusal or failure otherwise
	Executed   refusal.Executed `json:"executed"`
	DurationMs int64            `json:"durationMs"`
	// Evidence the caller should see even though the command ran (a Pod
	// that is most likely a same-name re-creation).
	Evidence []model.Evidence `json:"evidence,omitempty"`
	Stdout   string           `json:"stdout"`
	Stderr   string           `json:"stderr"`
	// Truncated: the output was longer than FanOutOutputLimit and was cut.
	Truncated bool `json:"truncated,omitempty"`
}

// lineError is err as a line's error: a copy of its refusal.Error whose
// evidence is a list even when empty, as Error.JSON writes it for one target.
func lineError(err error) *refusal.Error {
	e := *asError(err)
	if e.Evidence == nil {
		e.Evidence = []model.Evidence{}
	}
	return &e
}

// FanOutOutputLimit bounds the output kept per target and stream: a fleet
// operation's lines must stay lines, whatever a sandbox prints.
const FanOutOutputLimit = 64 << 10

// RunMany runs req's command on every target (sandbox keys), each one
// identity-checked on its own, at most parallel at a time, and calls emit
// once per target (from several goroutines; emit must be safe for that).
// A refused target never stops the others and nothing is retried. It
// returns how the targets ended.
func (x *Executor) RunMany(ctx context.Context, targets []string, req Request, parallel int, emit func(Line)) Tally {
	if parallel < 1 {
		parallel = 1
	}
	var mu sync.Mutex
	var tally Tally
	g := new(errgroup.Group)
	g.SetLimit(parallel)
	for _, key := range targets {
		g.Go(func() error {
			r := req
			r.Ref, r.Sandbox, r.Stdin, r.TTY = key, nil, nil, false
			var out, errOut capped
			r.Stdout, r.Stderr = &out, &errOut
			start := time.Now()
			res, err := x.Run(ctx, r)
			line := Line{Sandbox: key, DurationMs: time.Since(start).Milliseconds(),
				Stdout: out.String(), Stderr: errOut.String(), Truncated: out.cut || errOut.cut}
			if err != nil {
				e := lineError(err)
				line.Error, line.Executed = e, e.Executed
				if line.Executed == "" {
					line.Executed = refusal.ExecutedUnknown
				}
			} else {
				code := res.ExitCode
				line.ExitCode, line.Executed = &code, refusal.ExecutedYes
				line.Pod, line.UID, line.IP = res.Target.Pod, res.Target.UID, res.Target.IP
				for _, ev := range res.Evidence {
					if ev.Kind == model.Inferred {
						line.Evidence = append(line.Evidence, ev)
					}
				}
			}
			mu.Lock()
			switch line.Executed {
			case refusal.ExecutedNo:
				tally.NotRun++
			case refusal.ExecutedUnknown:
				tally.Unknown++
			default:
				tally.Ran++
			}
			mu.Unlock()
			emit(line)
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through emit, never an error
	return tally
}

// Tally counts how the targets of a fan-out ended.
type Tally struct {
	Ran     int // the command ran to its end (whatever its exit status)
	NotRun  int // refused, or failed before anything ran
	Unknown int // the command may have run
}

// capped keeps the first FanOutOutputLimit bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := FanOutOutputLimit - c.buf.Len()
	if len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
