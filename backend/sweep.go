package backend

import (
	"context"
	"slices"
	"time"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube"
)

// Sweep is how a one-time read of the fleet (sweep, get) reads it: the
// options of the read (namespaces, selector, image checks, timeout) and a
// target for each context of names (none: the kubeconfig's current one).
// A cluster's context connects lazily, inside its own timeout; the demo's
// fleet starts now, lives as long as ctx, and is read in every namespace
// unless -n names one.
func (e *Env) Sweep(ctx context.Context, names []string, timeout time.Duration) (sweep.Options, []sweep.Target, error) {
	o := e.opts
	opts := sweep.Options{AllNamespaces: o.AllNamespaces, PodSelector: o.PodSelector, StuckAfter: o.StuckAfter,
		Timeout: timeout, ImageConfig: o.ImageChecks}
	if e.Demo() {
		// Each name is a simulated fleet of its own, as in the TUI's
		// --demo --context a,b; none is the demo's one context.
		if len(names) == 0 {
			names = []string{""}
		}
		if ns := e.flagNamespace(); ns != "" {
			opts.Namespace = ns
		} else {
			opts.AllNamespaces = true
		}
		var targets []sweep.Target
		for i, name := range names {
			if slices.Contains(names[:i], name) {
				continue
			}
			conn, err := e.Context(name).Connect(ctx)
			if err != nil {
				return opts, nil, err
			}
			opts.ImageConfig = conn.ImageChecks() // the same simulated catalog in every demo fleet
			// Its fleet's probes (--probe) are answered by its simulation:
			// the simulated Pod IPs are not to be dialled from this machine.
			targets = append(targets, conn.demo.SweepTarget())
		}
		return opts, targets, nil
	}
	if len(names) == 0 {
		// The report names the context the kubeconfig chose.
		name := "(default)"
		if raw, err := o.Kube.ToRawKubeConfigLoader().RawConfig(); err == nil && raw.CurrentContext != "" {
			name = raw.CurrentContext
		}
		return opts, []sweep.Target{e.sweepTarget(name, e.Context(""))}, nil
	}
	var targets []sweep.Target
	for i, name := range names {
		if slices.Contains(names[:i], name) {
			continue
		}
		targets = append(targets, e.sweepTarget(name, e.Context(name)))
	}
	return opts, targets, nil
}

// sweepTarget connects c when the sweep opens it, inside its timeout.
func (e *Env) sweepTarget(name string, c *Context) sweep.Target {
	return sweep.ConnectTarget(name, func(ctx context.Context) (*kube.Clients, error) {
		conn, err := c.Connect(ctx)
		if err != nil {
			return nil, err
		}
		return conn.Clients, nil
	})
}
