package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/term"
	"k8s.io/klog/v2"

	"github.com/sandscope/sandscope/env"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
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
	e, err := g.env()
	if err != nil {
		return err
	}
	// Connecting takes up to the request timeout: say to what, on a
	// terminal, rather than leave it blank. The UI's screen replaces the line.
	// The line ends in a bare CR, which Err would show: it goes raw, its
	// fields cleaned here.
	if _, stderr := g.rawStreams(); isTerminal(stderr) && !g.Demo {
		kctx, server := kube.Target(g.Kube)
		fmt.Fprintf(stderr, "sandscope: connecting to %s (context %s)…\r", textsafe.Line(textsafe.OrDash(server)), textsafe.Line(textsafe.OrDash(kctx)))
	}
	conn, err := e.Context("").Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	s := newSession(ctx, g)
	if !e.Demo() { // the demo is one simulated fleet: no other context, and too small to tune for
		s.dial = func(ctx context.Context, name string) (*env.Conn, error) { return e.Context(name).Connect(ctx) }
		s.contexts = kubeconfigContexts(g)
		s.tuneMemory = true
	}
	s.start(conn, conn.Namespace())
	defer s.stop()
	return ui.Run(ctx, s, s.backend(), ui.Options{ReadOnly: g.ReadOnly, Demo: e.Demo(), DefaultNamespace: conn.Clients.Namespace,
		Version: Version(), Favorites: g.Favorites, Images: e.KnownImages()})
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
				return nil, &kube.ConnectError{Context: name, Reason: "context not found in kubeconfig", Local: true, Err: kube.ContextsKnown(known)}
			}
		}
	}
	return names, nil
}

// runContextsTUI opens the UI on several contexts at once (contextSet): it
// opens at once, each context connecting in the background.
func runContextsTUI(ctx context.Context, g *Globals, names []string) error {
	cs, e, err := openContexts(ctx, g, names)
	if err != nil {
		return err
	}
	defer cs.stop()
	crash.Go(func() {
		tuneMemoryForWatch(cs.ctx, cs.waitSynced)
	})
	return ui.Run(ctx, cs, cs.backend(), ui.Options{ReadOnly: g.ReadOnly, Demo: e.Demo(), Version: Version(), Favorites: g.Favorites,
		Images: e.KnownImages()})
}

// openContexts starts connecting every context of names (in the demo, each
// a simulated fleet of its own) and returns the set over them.
func openContexts(ctx context.Context, g *Globals, names []string) (*contextSet, *env.Env, error) {
	e, err := g.env()
	if err != nil {
		return nil, nil, err
	}
	cs := newContextSet(ctx, g, func(ctx context.Context, name string) *member {
		c := e.Context(name)
		return &member{name: name, server: c.Server(), s: newSession(ctx, g), connect: c.Connect}
	})
	cs.contexts = kubeconfigContexts(g)
	if e.Demo() {
		cs.contexts = func() []string { return names }
	}
	for _, name := range names {
		cs.add(name)
	}
	return cs, e, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
