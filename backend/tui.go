package backend

import (
	"context"
	"sort"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/ui"
)

// TUIOptions are what the terminal UI's backend needs beyond Options.
type TUIOptions struct {
	// Shell is the shell `s` opens ("" = the executor's default).
	Shell string
	// ExecdToken is execd's access token; never printed or logged.
	ExecdToken string
	// TuneMemory, when set, runs on a goroutine of its own as the fleet
	// starts loading, with a func that returns once it has loaded (or ctx
	// ended): the process lives on with the fleet in memory. The demo's
	// single fleet is too small to tune for.
	TuneMemory func(ctx context.Context, loaded func(context.Context) error)
	// HeapProfile, when set, runs like TuneMemory on a single context.
	HeapProfile func(ctx context.Context, loaded func(context.Context) error)
}

// afterLoad runs the hooks that wait for a single context's fleet to load.
func (o TUIOptions) afterLoad(ctx context.Context, loaded func(context.Context) error) {
	if o.TuneMemory != nil {
		o.TuneMemory(ctx, loaded)
	}
	if o.HeapProfile != nil {
		o.HeapProfile(ctx, loaded)
	}
}

// TUI is what the terminal UI runs on: the fleets it shows and the actions
// it takes, over one context or several. Close ends what it started.
type TUI struct {
	// Source is the fleet (a ui.MultiSource over several contexts).
	Source ui.Source
	// Backend is the UI's actions over Source.
	Backend ui.Backend

	env       *Env
	namespace string // the one context's own namespace; "" over several
	close     func()
}

// OpenTUI connects the contexts of names for the terminal UI. None or one:
// that context (the flags' own for none), connected before it returns (a
// *kube.ConnectError says why not). Several: a set whose contexts connect
// in the background, each on its own (in the demo, each a simulated fleet
// of its own).
func (e *Env) OpenTUI(ctx context.Context, names []string, opts TUIOptions) (*TUI, error) {
	if len(names) > 1 {
		cs := openContexts(ctx, e, opts, names)
		if opts.TuneMemory != nil {
			crash.Go(func() {
				opts.TuneMemory(cs.ctx, cs.waitSynced)
			})
		}
		return &TUI{Source: cs, Backend: cs.backend(), env: e, close: cs.stop}, nil
	}
	name := ""
	if len(names) == 1 {
		name = names[0]
	}
	conn, err := e.Context(name).Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := newSession(ctx, e, opts)
	if e.HasCluster() {
		s.dial = func(ctx context.Context, name string) (*Conn, error) { return e.Context(name).Connect(ctx) }
		s.contexts = e.kubeconfigContexts
		s.tuneMemory = true
	}
	s.start(conn, conn.Namespace())
	return &TUI{Source: s, Backend: s.backend(), env: e, namespace: conn.Clients.Namespace, close: func() {
		s.stop()
		conn.Close()
	}}, nil
}

// UIOptions are the options of the UI that depend on where the fleet is:
// the demo's banner, the create form's suggested images, the namespace
// the UI calls its own.
func (t *TUI) UIOptions() ui.Options {
	return ui.Options{Demo: t.env.Demo(), DefaultNamespace: t.namespace, Images: t.env.KnownImages()}
}

// Close stops the watchers, port-forwards and connections (the demo's
// simulations) the TUI started.
func (t *TUI) Close() { t.close() }

// openContexts starts connecting every context of names (in the demo, each
// a simulated fleet of its own) and returns the set over them.
func openContexts(ctx context.Context, e *Env, opts TUIOptions, names []string) *contextSet {
	cs := newContextSet(ctx, e, opts, func(ctx context.Context, name string) *member {
		c := e.Context(name)
		return &member{name: name, server: c.Server(), s: newSession(ctx, e, opts), connect: c.Connect}
	})
	cs.contexts = e.kubeconfigContexts
	if !e.HasCluster() {
		cs.contexts = func() []string { return names }
	}
	for _, name := range names {
		cs.add(name)
	}
	return cs
}

// KubeconfigContexts lists every context of the kubeconfig, sorted.
func (e *Env) KubeconfigContexts() ([]string, error) {
	raw, err := e.opts.Kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, &kube.ConnectError{Reason: "cannot load kubeconfig", Local: true, Err: err}
	}
	names := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// kubeconfigContexts is KubeconfigContexts for ":ctx", which lists what it can.
func (e *Env) kubeconfigContexts() []string {
	names, _ := e.KubeconfigContexts()
	return names
}
