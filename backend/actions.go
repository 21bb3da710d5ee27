package backend

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// ImageChecks reads image configs for the background checks: the
// environment's reader on a cluster, the simulation in the demo (held to
// the environment reader's --image-registries, as a registry read is);
// nil when the checks are off.
func (c *Conn) ImageChecks() kube.ImageConfigReader {
	switch {
	case c.env.opts.ImageChecks == nil:
		return nil
	case c.Demo():
		if r, ok := c.env.opts.ImageChecks.(*imageconfig.Reader); ok {
			return r.Restrict(c.demo.Images)
		}
		return c.demo.Images
	}
	return c.env.opts.ImageChecks
}

// Images reads the image configs a create resolves its start command from:
// the registries, read with opts, or the demo's simulated one (which opts
// do not tune).
func (c *Conn) Images(opts imageconfig.Options) kube.ImageConfigReader {
	if c.Demo() {
		return c.demo.Images
	}
	return imageconfig.New(opts)
}

// Watch starts a watcher that keeps the fleet of namespace ("" every one)
// live until ctx ends. sources nil lets it discover the engines itself.
func (c *Conn) Watch(ctx context.Context, namespace string, sources *kube.Sources) *kube.Watcher {
	o := c.env.opts
	w := kube.NewWatcher(c.Clients, kube.WatcherOptions{
		Namespace: namespace, Sources: sources, PodSelector: o.PodSelector, StuckAfter: o.StuckAfter,
		ImageConfig: c.ImageChecks(), ReadOnly: o.ReadOnly, Demo: c.Demo(),
	})
	crash.Go(func() {
		_ = w.Run(ctx)
	})
	return w
}

// ExecOptions tune an executor.
type ExecOptions struct {
	// Fleet is the watched fleet a target's identity is read from; nil:
	// only a sandbox given whole, or a pod/NAME, resolves.
	Fleet func() *fleet.Snapshot
	// Token is the exec daemon's access token ("" none) and Port its port
	// (0 the default). The demo's simulated daemons need neither.
	Token string
	Port  int
}

// Executor runs identity-checked commands (and, on a cluster,
// port-forwards) in the context's sandboxes: through the real transports
// on a cluster, through the simulation in the demo.
func (c *Conn) Executor(o ExecOptions) *execute.Executor { return execute.New(c.execOptions(o)) }

func (c *Conn) execOptions(o ExecOptions) execute.Options {
	x := execute.Options{Cluster: c.Clients, Snapshot: o.Fleet, ReadOnly: c.env.opts.ReadOnly}
	if c.Demo() {
		x.Transports = c.demo.Transports() // the simulated Pods have no port-forward
	} else {
		x.Transports, x.Forwarder = execute.DefaultTransports(c.Clients, o.Token, o.Port), c.Clients
	}
	return x
}

// LookupExecutor is the executor of a command that names its target and
// acts once (sandscope exec), and the namespace that target is looked for
// in. A cluster's target is read by name with what its identity depends on
// (kube.LookupSandbox), so the cost does not grow with the fleet, in -n or
// without it in every namespace. The demo's fleet, small and in-process,
// is watched whole (in -n, else in every namespace, as a cluster's
// target is looked up) and read once synced, within syncTimeout; the watch
// ends with ctx.
func (c *Conn) LookupExecutor(ctx context.Context, o ExecOptions, syncTimeout time.Duration) (*execute.Executor, string, error) {
	if c.Demo() {
		ns := c.Namespace()
		w := c.Watch(ctx, ns, nil)
		sctx, cancel := context.WithTimeout(ctx, syncTimeout)
		defer cancel()
		if err := w.WaitForSync(sctx); err != nil {
			return nil, "", fmt.Errorf("reading the demo fleet: %w", err)
		}
		o.Fleet = w.Fleet().Snapshot
		x := c.execOptions(o)
		if ns != "" {
			// The fleet is watched in -n only: a name not found there is
			// looked for in every namespace, so NOT_FOUND can say where it is.
			x.Elsewhere = func(ctx context.Context, _ string) (*fleet.Snapshot, error) {
				wctx, cancel := context.WithTimeout(ctx, syncTimeout)
				defer cancel()
				all := c.Watch(wctx, "", nil)
				if err := all.WaitForSync(wctx); err != nil {
					return nil, err
				}
				return all.Fleet().Snapshot(), nil
			}
		}
		return execute.New(x), ns, nil
	}
	x := c.execOptions(o)
	lookup := kube.LookupOptions{PodSelector: c.env.opts.PodSelector, StuckAfter: c.env.opts.StuckAfter}
	x.Lookup = func(ctx context.Context, ns, ref string) (*fleet.Snapshot, error) {
		o := lookup
		o.Namespace = ns
		return c.Clients.LookupSandbox(ctx, ref, o)
	}
	return execute.New(x), c.env.flagNamespace(), nil
}

// Creator creates sandboxes in the context: the start command resolved
// through images (Images), readiness probed through x, the engines those
// sources found (nil: discovered at the create). In the demo the
// simulator adopts what it writes, as an engine's controller would.
func (c *Conn) Creator(x *execute.Executor, images kube.ImageConfigReader, sources *kube.Sources) *create.Creator {
	return &create.Creator{Clients: c.Clients, Images: images, Prober: &create.ExecProber{Exec: x}, Sources: sources,
		ReadOnly: c.env.opts.ReadOnly}
}

// ManyExecutor is the executor of a command that acts on every sandbox sel
// picks (exec --selector, --all-of-pool) and those sandboxes' keys. A
// cluster's are listed by the API server, each target then read by name
// as LookupExecutor's; the demo's are picked from its fleet, watched in
// sel.Namespace and read once synced within syncTimeout.
func (c *Conn) ManyExecutor(ctx context.Context, o ExecOptions, sel kube.SelectOptions, syncTimeout time.Duration) (*execute.Executor, []string, error) {
	if !c.Demo() {
		keys, err := c.Clients.SelectSandboxes(ctx, sel)
		if err != nil {
			return nil, nil, err
		}
		x, _, err := c.LookupExecutor(ctx, o, syncTimeout)
		return x, keys, err
	}
	selector, err := labels.Parse(sel.Selector)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid selector %q: %w", sel.Selector, err)
	}
	w := c.Watch(ctx, sel.Namespace, nil)
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if err := w.WaitForSync(sctx); err != nil {
		return nil, nil, fmt.Errorf("reading the demo fleet: %w", err)
	}
	snap := w.Fleet().Snapshot()
	// A warm pool's Sandboxes are its free members and, once claimed, the
	// claims' (owned by the claim, no longer by the pool), as
	// kube.Clients.SelectSandboxes picks them on a cluster.
	claims := map[string]bool{}
	for _, cl := range snap.Claims {
		if sel.Pool != "" && cl != nil && cl.WarmPool == sel.Pool {
			claims[cl.Namespace+"/"+cl.Name] = true
		}
	}
	var keys []string
	for _, sb := range snap.Sandboxes() {
		switch {
		case sb == nil:
		case sel.Pool != "":
			switch sb.Engine() {
			case model.EngineBatchSandbox, model.EngineAgent:
				if sb.Pool == sel.Pool || claims[sb.Namespace()+"/"+sb.Claim()] {
					keys = append(keys, sb.Key)
				}
			}
		case selector.Matches(sb.Labels()):
			keys = append(keys, sb.Key)
		}
	}
	o.Fleet = w.Fleet().Snapshot
	return c.Executor(o), keys, nil
}

// Locate finds where the sandbox or Pod a user named lives, for a command
// that reads it by name (explain restart): its namespace and whole name.
// In the demo the fleet is read (in -n, else in every namespace, within
// syncTimeout) and ref may be a sandbox's name, key or the short id the TUI
// shows, or a Pod's name; ref names several is an error that lists them.
// On a cluster nothing is read: the context's namespace and ref as given.
func (c *Conn) Locate(ctx context.Context, ref string, syncTimeout time.Duration) (namespace, name string, err error) {
	if !c.Demo() {
		return c.Clients.Namespace, ref, nil
	}
	w := c.Watch(ctx, c.Namespace(), nil)
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if err := w.WaitForSync(sctx); err != nil {
		return "", "", fmt.Errorf("reading the demo fleet: %w", err)
	}
	snap := w.Fleet().Snapshot()
	exact := snap.Named("", ref) // the demo's watch is of c.Namespace() already
	switch len(exact) {
	case 1:
		return exact[0].Namespace(), exact[0].Name(), nil
	case 0:
	default:
		keys := make([]string, len(exact))
		for i, sb := range exact {
			keys[i] = sb.Key
		}
		return "", "", fmt.Errorf("%q names several sandboxes: %s; give -n NAMESPACE or the whole name", ref, strings.Join(keys, ", "))
	}
	var pods []*model.Pod
	for _, p := range snap.Pods() {
		if p != nil && p.Name == ref {
			pods = append(pods, p)
		}
	}
	if len(pods) == 1 {
		return pods[0].Namespace, pods[0].Name, nil
	}
	if len(pods) > 1 {
		return "", "", fmt.Errorf("%q names Pods in several namespaces; give -n NAMESPACE", ref)
	}
	if c.Namespace() == "" {
		// Every namespace was read: naming the default one in the answer
		// would say only that one was.
		return "", "", fmt.Errorf("no Pod or sandbox %q in any namespace", ref)
	}
	return c.Clients.Namespace, ref, nil // not in the fleet: read as given, which says it is not found
}
