package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandscope/sandscope/internal/broadcast"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/ui"
)

// A context whose server does not answer is tried again, first after
// firstRetry, then twice as long each time up to maxRetry.
const (
	firstRetry = 2 * time.Second
	maxRetry   = 30 * time.Second
)

// gatherChanges is how long a context's change waits for the others' before
// the UI hears of them: the watchers publish what their freshness probes
// proved at the same instants of the clock (kube: runTicker), a few
// milliseconds apart, and each signal the UI hears alone is a whole frame
// drawn. Well under a frame at the rate the UI draws a large fleet.
const gatherChanges = 20 * time.Millisecond

// contextSet is the TUI over several kubeconfig contexts at once
// (--context a,b, --all-contexts): one session per context, each with its
// own clients, watcher, fleet and actions, so a context costs the memory of
// the single-context TUI. Contexts connect concurrently and each retries on
// its own: a context whose server does not answer delays no other, at
// start-up or later, and shows its state in the header instead. The set is
// the UI's ui.MultiSource; its backend hands the UI each context's own
// backend, so that an action reaches the cluster its sandbox was read from.
type contextSet struct {
	env      *Env
	opts     TUIOptions
	ctx      context.Context // ends with stop: connections, retries and their watchers
	cancel   context.CancelFunc
	open     func(ctx context.Context, name string) *member // a member for a context, not yet connected, living as long as ctx
	contexts func() []string                                // every context ":ctx NAME" may add

	mu               sync.Mutex
	all              []*member // in the order given
	inView           *member   // ":ctx NAME"; nil: every member
	ns               string    // ":ns", for every context once nsSet
	nsSet            bool
	broadcast.Signal                             // told when any context's fleet changed, or the contexts in view did
	gathering        atomic.Bool                 // a member's change waits gatherChanges for the others'
	after            func(time.Duration, func()) // runs a func after a while: time.AfterFunc's
}

// notifySoon tells the UI of a member's change together with those of the
// other members within gatherChanges.
func (cs *contextSet) notifySoon() {
	if cs.gathering.CompareAndSwap(false, true) {
		cs.after(gatherChanges, func() {
			cs.gathering.Store(false)
			cs.Notify()
		})
	}
}

// member is one context of a set: its session, and how it connects.
type member struct {
	name    string
	server  string // the API server the kubeconfig names, for the header while connecting
	s       *session
	be      ui.Backend
	connect func(ctx context.Context) (*Conn, error)
	settled chan struct{} // closed once connected, or given up on
}

func newContextSet(ctx context.Context, e *Env, opts TUIOptions, open func(ctx context.Context, name string) *member) *contextSet {
	ctx, cancel := context.WithCancel(ctx)
	after := func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	return &contextSet{env: e, opts: opts, ctx: ctx, cancel: cancel, open: open, after: after}
}

// add makes context name a member and starts connecting it.
func (cs *contextSet) add(name string) *member {
	m := cs.open(cs.ctx, name)
	m.be, m.settled = m.s.backend(), make(chan struct{})
	m.s.setPending(model.SourceStatus{Context: name, Server: m.server, Notes: []string{"connecting…"}})
	cs.mu.Lock()
	cs.all = append(cs.all, m)
	cs.mu.Unlock()
	crash.Go(func() {
		broadcast.Relay(cs.ctx, m.s.Subscribe, cs.notifySoon)
	})
	crash.Go(func() {
		defer close(m.settled)
		cs.connect(m)
	})
	cs.Notify()
	return m
}

// connect connects m, trying again while its server cannot be reached. A
// kubeconfig that does not say how to reach it, or a server that refuses
// the credentials, is not tried again: nothing would change.
func (cs *contextSet) connect(m *member) {
	wait := firstRetry
	var since time.Time
	for {
		conn, err := m.connect(cs.ctx)
		if err == nil {
			m.s.start(conn, cs.namespace(conn))
			return
		}
		if cs.ctx.Err() != nil {
			return
		}
		st := model.SourceStatus{Context: m.name, Server: m.server}
		var ce *kube.ConnectError
		final := errors.As(err, &ce) && (ce.Local || ce.Denied)
		if final && ce.Denied {
			st.Forbidden = []string{err.Error()}
		} else {
			if since.IsZero() {
				since = time.Now()
			}
			st.DisconnectedSince, st.Notes = &since, []string{err.Error()}
			if !final {
				st.Notes[0] += fmt.Sprintf(" (trying again in %s)", wait)
			}
		}
		m.s.setPending(st)
		if final {
			return
		}
		select {
		case <-cs.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxRetry)
	}
}

// namespace is what a newly connected context watches: the one ":ns" set,
// else what the single-context TUI would (Conn.Namespace).
func (cs *contextSet) namespace(conn *Conn) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.nsSet {
		return cs.ns
	}
	return conn.Namespace()
}

func (cs *contextSet) members() []*member {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return slices.Clone(cs.all)
}

func (cs *contextSet) member(name string) *member {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, m := range cs.all {
		if m.name == name {
			return m
		}
	}
	return nil
}

// Fleets implements ui.MultiSource: the contexts in view, in the order given.
func (cs *contextSet) Fleets() []ui.Fleet {
	cs.mu.Lock()
	view := slices.Clone(cs.all)
	if cs.inView != nil {
		view = []*member{cs.inView}
	}
	cs.mu.Unlock()
	out := make([]ui.Fleet, len(view))
	for i, m := range view {
		out[i] = ui.Fleet{Context: m.name, Snap: m.s.Snapshot()}
	}
	return out
}

// Snapshot implements ui.Source; the UI reads Fleets instead.
func (cs *contextSet) Snapshot() *fleet.Snapshot {
	if fleets := cs.Fleets(); len(fleets) > 0 {
		return fleets[0].Snap
	}
	return &fleet.Snapshot{}
}

func (cs *contextSet) stop() {
	for _, m := range cs.members() {
		m.s.stop()
	}
	cs.cancel()
}

// waitSynced returns once every context has synced or was given up on (a
// context still trying to reach its server keeps it waiting), or ctx ends.
func (cs *contextSet) waitSynced(ctx context.Context) error {
	for _, m := range cs.members() {
		select {
		case <-m.settled:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c := m.s.current(); c != nil {
			if err := c.watcher.WaitForSync(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// show puts one context in view, or every one (m nil).
func (cs *contextSet) show(m *member) {
	cs.mu.Lock()
	cs.inView = m
	cs.mu.Unlock()
	cs.Notify()
}

// backend is the UI's backend over the set: each context's own for the
// actions (ForContext), and what concerns them all (":ns", ":ctx", the
// port-forwards, which quitting closes wherever they are).
func (cs *contextSet) backend() ui.Backend {
	first := cs.members()[0].be
	be := ui.Backend{
		ForContext: func(name string) ui.Backend {
			if m := cs.member(name); m != nil {
				return m.be
			}
			// Never asked for: the UI names only contexts it was given. A
			// session with no connection refuses every action.
			return newSession(cs.ctx, cs.env, cs.opts).backend()
		},
		SwitchNamespace: func(ns string) error {
			if ns == "all" || ns == "*" {
				ns = ""
			}
			cs.mu.Lock()
			cs.ns, cs.nsSet = ns, true
			cs.mu.Unlock()
			for _, m := range cs.members() {
				if c := m.s.current(); c != nil {
					m.s.start(c.conn, ns)
				}
			}
			return nil
		},
		SwitchContext: func(name string) error {
			if name == "" {
				cs.show(nil)
				return nil
			}
			m := cs.member(name)
			if m == nil {
				if cs.contexts == nil || !slices.Contains(cs.contexts(), name) {
					return fmt.Errorf("no context %q in the kubeconfig", name)
				}
				m = cs.add(name)
			}
			cs.show(m)
			return nil
		},
		Contexts: cs.contexts,
	}
	if first.StopForward != nil {
		be.StopForward = func(localAddr string) error {
			for _, m := range cs.members() {
				if m.s.stopForward(localAddr) == nil {
					return nil
				}
			}
			return fmt.Errorf("no port-forward on %s", localAddr)
		}
	}
	return be
}
