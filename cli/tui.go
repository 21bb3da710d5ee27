package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/term"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/ui"
)

// runTUI connects (or starts the demo fleet) and opens the terminal UI.
func runTUI(ctx context.Context, g *Globals) error {
	// client-go reports watch trouble through klog on stderr, which would
	// scribble over the full-screen UI; the UI's header shows it instead.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	names, err := tuiContexts(g)
	switch {
	case err != nil:
		return err
	case len(names) > 1:
		return runContextsTUI(ctx, g, names)
	case len(names) == 1:
		g.Kube = g.Kube.WithContext(names[0]) // "a," or the one context of --all-contexts
	}
	if g.Demo {
		return runDemoTUI(ctx, g)
	}
	// Connecting takes up to the request timeout: say to what, on a
	// terminal, rather than leave it blank. The UI's screen replaces the line.
	if f, ok := g.Err.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		kctx, server := kube.Target(g.Kube)
		fmt.Fprintf(g.Err, "sandscope: connecting to %s (context %s)…\r", textsafe.Line(orDash(server)), textsafe.Line(orDash(kctx)))
	}
	clients, err := g.Connect(ctx)
	if err != nil {
		return err
	}
	checks, err := g.imageChecks(imageconfig.Options{})
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	s := newSession(ctx, g, imageconfig.New(imageconfig.Options{}))
	s.checks = checks
	s.connect = func(ctx context.Context, name string) (*kube.Clients, error) {
		return kube.Connect(ctx, g.Kube.WithContext(name), kube.ConnectOptions{AllNamespaces: g.AllNamespaces})
	}
	s.contexts = kubeconfigContexts(g)
	s.tuneMemory = true
	ns := clients.Namespace
	if g.AllNamespaces {
		ns = ""
	}
	s.start(clients, ns)
	defer s.stop()
	return ui.Run(ctx, s, s.backend(), ui.Options{ReadOnly: g.ReadOnly, DefaultNamespace: clients.Namespace, Version: Version(), Favorites: g.Favorites})
}

// runDemoTUI opens the UI on the embedded simulated fleet: in-memory
// clients, a simulator playing the engines and the kubelet, and simulated
// exec daemons, so no command ever runs on this machine.
func runDemoTUI(ctx context.Context, g *Globals) error {
	d, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		return err
	}
	s := newSession(ctx, g, d.Images)
	if mode, _ := g.imageCheckMode(); mode == imageChecksOff {
		s.checks = nil // the simulated registry is asked only if checks are on
	}
	s.demo = true
	s.execVia = d.Transports()
	ns := ""
	if g.Kube.Namespace() != "" {
		ns = g.Kube.Namespace()
	}
	s.start(d.Clients, ns)
	defer s.stop()
	return ui.Run(ctx, s, s.backend(), ui.Options{ReadOnly: g.ReadOnly, Demo: true, DefaultNamespace: d.Clients.Namespace, Version: Version(), Favorites: g.Favorites, Images: demo.KnownImages()})
}

// tuiContexts are the contexts the TUI shows: those --context lists (a
// comma list), or with --all-contexts every context of the kubeconfig. None:
// the kubeconfig's current context. A name the kubeconfig does not have is
// a connection error naming it, as with one context.
func tuiContexts(g *Globals) ([]string, error) {
	usage := func(msg string) error { return &ExitError{Code: ExitUsage, Err: errors.New(msg)} }
	var names []string
	for _, name := range splitContexts(g.Kube.Context()) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if g.AllContexts {
		switch {
		case len(names) > 0:
			return nil, usage("--context and --all-contexts cannot be used together")
		case g.Demo:
			return nil, usage("--all-contexts reads the kubeconfig; with --demo, name the simulated contexts: --context a,b")
		}
		all, err := allContexts(g)
		if err == nil && len(all) == 0 {
			err = &kube.ConnectError{Reason: "--all-contexts: the kubeconfig has no context", Local: true}
		}
		return all, err
	}
	if len(names) > 1 && !g.Demo {
		known, err := allContexts(g)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if !slices.Contains(known, name) {
				return nil, &kube.ConnectError{Context: name, Reason: "context not found in kubeconfig", Local: true}
			}
		}
	}
	return names, nil
}

// runContextsTUI opens the UI on several contexts at once (contextSet): it
// opens at once, each context connecting in the background.
func runContextsTUI(ctx context.Context, g *Globals, names []string) error {
	cs, err := openContexts(ctx, g, names)
	if err != nil {
		return err
	}
	defer cs.stop()
	go func() {
		defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
		tuneMemoryForWatch(cs.ctx, cs.waitSynced)
	}()
	opts := ui.Options{ReadOnly: g.ReadOnly, Demo: g.Demo, Version: Version(), Favorites: g.Favorites}
	if g.Demo {
		opts.Images = demo.KnownImages()
	}
	return ui.Run(ctx, cs, cs.backend(), opts)
}

// openContexts starts connecting every context of names (the simulated
// ones with --demo) and returns the set over them.
func openContexts(ctx context.Context, g *Globals, names []string) (*contextSet, error) {
	checks, err := g.imageChecks(imageconfig.Options{})
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: err}
	}
	open := func(ctx context.Context, name string) *member {
		s := newSession(ctx, g, imageconfig.New(imageconfig.Options{}))
		s.checks = checks
		flags := g.Kube.WithContext(name)
		_, server := kube.Target(flags)
		return &member{name: name, server: server, s: s, connect: func(ctx context.Context) (*kube.Clients, error) {
			return kube.Connect(ctx, flags, kube.ConnectOptions{AllNamespaces: g.AllNamespaces})
		}}
	}
	contexts := kubeconfigContexts(g)
	if g.Demo {
		open, contexts = demoContexts(g), func() []string { return names }
	}
	cs := newContextSet(ctx, g, open)
	cs.contexts = contexts
	for _, name := range names {
		cs.add(name)
	}
	return cs, nil
}

// demoContexts opens each context of a multi-context demo (--demo
// --context a,b) as a simulated fleet of its own, each from its own seed.
func demoContexts(g *Globals) func(ctx context.Context, name string) *member {
	seed := int64(0)
	return func(ctx context.Context, name string) *member {
		seed++
		d, err := demo.Start(ctx, demo.Options{Seed: seed})
		if err != nil {
			s := newSession(ctx, g, nil)
			return &member{name: name, s: s, connect: func(context.Context) (*kube.Clients, error) { return nil, err }}
		}
		clients := *d.Clients
		clients.Context = name
		s := newSession(ctx, g, d.Images)
		if mode, _ := g.imageCheckMode(); mode == imageChecksOff {
			s.checks = nil
		}
		s.demo, s.execVia = true, d.Transports()
		return &member{name: name, server: demo.ServerName, s: s, everyNamespace: true,
			connect: func(context.Context) (*kube.Clients, error) { return &clients, nil }}
	}
}
