// Package backend is where a command's fleet lives: the clusters a
// kubeconfig names, or the embedded simulated demo. A command asks it for
// what it needs (a context's clients, a watched fleet, an executor, a
// creator, image-config readers, sweep targets, the TUI's whole backend)
// and never asks which of the two it is talking to: where a command must
// behave differently it asks a capability question (capabilities.go:
// can Pods be port-forwarded? do exec daemons want a token?), answered
// here, once.
//
//	e := backend.New(backend.Options{Kube: flags, StuckAfter: 5 * time.Minute})
//	conn, err := e.Context("").Connect(ctx) // the flags' context, or a demo fleet started now
//	defer conn.Close()
//	w := conn.Watch(ctx, conn.Namespace(), nil)
//	x := conn.Executor(backend.ExecOptions{Fleet: w.Fleet().Snapshot})
//
// It sits between cli (which turns flags into Options and results into
// exit codes) and the packages that act (actions/, kube/, demo/) and the
// UI it builds the backend of (ui/); nothing below it imports it.
package backend

import (
	"context"
	"sync"
	"time"

	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/kube"
)

// Options are what every command shares about where to look and how.
type Options struct {
	// Kube are the kubeconfig and its overrides (--kubeconfig, --context,
	// -n, ...).
	Kube *kube.ConfigFlags
	// AllNamespaces (-A) watches and sweeps every namespace.
	AllNamespaces bool
	// PodSelector picks plain-Pod sandboxes ("" = the model's default).
	PodSelector string
	// StuckAfter: a Pod deleting longer than its grace period plus this is
	// stuck Terminating (0 = the model's default).
	StuckAfter time.Duration
	// ReadOnly refuses every exec, create and delete built here.
	ReadOnly bool
	// Demo, when set, puts every context in a simulated fleet of its own
	// instead of a cluster, started with these options; the first context
	// takes Seed (0: 1), each further one the next seed.
	Demo *demo.Options
	// ImageChecks reads image configs for the background checks
	// (ENTRYPOINT_NOT_RUN); nil turns them off. In the demo only whether it
	// is set counts: the simulation answers instead of a registry.
	ImageChecks kube.ImageConfigReader
}

// Env is one command's environment. Safe for concurrent use.
type Env struct {
	opts Options

	mu     sync.Mutex
	opened int64 // demo contexts opened, for their seeds
}

// New returns the environment opts describe. Nothing is read or connected
// until a Context connects.
func New(opts Options) *Env { return &Env{opts: opts} }

// Demo tells whether the fleet is the simulated one.
func (e *Env) Demo() bool { return e.opts.Demo != nil }

// KnownImages are images worth suggesting in the TUI's create form: those
// the demo's simulated registry serves; none for a cluster, whose
// registries are not listed.
func (e *Env) KnownImages() []string {
	if e.Demo() {
		return demo.KnownImages()
	}
	return nil
}

// Context is one context of the environment: a kubeconfig context ("" the
// flags' own), or in the demo a simulated fleet of its own (by that name;
// "" is the demo's). Connect reaches it.
func (e *Env) Context(name string) *Context {
	c := &Context{env: e, name: name, flags: e.opts.Kube}
	if name != "" && e.opts.Kube != nil {
		c.flags = e.opts.Kube.WithContext(name)
	}
	if e.Demo() {
		e.mu.Lock()
		c.demo = *e.opts.Demo
		c.demo.Seed = max(c.demo.Seed, 1) + e.opened
		e.opened++
		e.mu.Unlock()
	}
	return c
}

// Context is one context, not yet connected.
type Context struct {
	env   *Env
	name  string
	flags *kube.ConfigFlags
	demo  demo.Options // the demo's only
}

// Server is where the context's API server is, for a header to show while
// it connects ("" when the kubeconfig does not say).
func (c *Context) Server() string {
	if c.env.Demo() {
		return demo.ServerName
	}
	_, server := kube.Target(c.flags)
	return server
}

// Connect reaches the context: on a cluster, clients proven to reach its
// API server (a *kube.ConnectError says why not), with the engines'
// discovery started beside the check for what reads the fleet next
// (kube.ConnectOptions.Discover); in the demo, a simulated fleet started
// now, which lives until ctx ends or Close.
func (c *Context) Connect(ctx context.Context) (*Conn, error) {
	e := c.env
	if !e.Demo() {
		clients, err := kube.Connect(ctx, c.flags, kube.ConnectOptions{AllNamespaces: e.opts.AllNamespaces, Discover: true})
		if err != nil {
			return nil, err
		}
		return &Conn{Clients: clients, env: e}, nil
	}
	ctx, stop := context.WithCancel(ctx)
	d, err := demo.Start(ctx, c.demo)
	if err != nil {
		stop()
		return nil, err
	}
	if c.name != "" {
		d.Clients.Context = c.name
	}
	// The namespace is the flags' when they name one, as a cluster's is.
	if ns := e.flagNamespace(); ns != "" {
		d.Clients.Namespace = ns
	}
	return &Conn{Clients: d.Clients, env: e, demo: d, stop: stop}, nil
}

// flagNamespace is -n, or "" when the flags name none.
func (e *Env) flagNamespace() string {
	if e.opts.Kube == nil {
		return ""
	}
	return e.opts.Kube.Namespace()
}

// Conn is a connected context.
type Conn struct {
	// Clients reach the context: a cluster's API server, or the demo's
	// in-memory one.
	Clients *kube.Clients

	env  *Env
	demo *demo.Demo // nil on a cluster
	stop context.CancelFunc
}

// Demo tells whether this is a simulated fleet.
func (c *Conn) Demo() bool { return c.demo != nil }

// Close ends what the connection started: the demo's simulation, waited
// for. A cluster's clients hold nothing that needs closing.
func (c *Conn) Close() {
	if c.demo == nil {
		return
	}
	c.stop()
	<-c.demo.Done()
}

// Namespace is what a view of the whole fleet watches unless told
// otherwise: every namespace ("") with -A, and in the demo without -n (its
// fleet spans several); else the context's own (-n, or its kubeconfig's).
func (c *Conn) Namespace() string {
	if c.env.opts.AllNamespaces || (c.Demo() && c.env.flagNamespace() == "") {
		return ""
	}
	return c.Clients.Namespace
}
