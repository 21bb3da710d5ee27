package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"

	"github.com/sandscope/sandscope/backend"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/ui"
)

// runTUI connects (or starts the demo fleet) and opens the terminal UI.
func runTUI(ctx context.Context, g *Globals) error {
	// client-go's watch trouble would scribble over the full-screen UI; the
	// UI's header shows it instead.
	quietClientGo()
	e, err := g.env()
	if err != nil {
		return err
	}
	names, err := tuiContexts(g, e)
	if err != nil {
		return err
	}
	if len(names) == 1 {
		g.Kube = g.Kube.WithContext(names[0]) // "a," or the one context of --all-contexts
		if e, err = g.env(); err != nil {
			return err
		}
		names = nil
	}
	// Connecting takes up to the request timeout: say to what, on a
	// terminal, rather than leave it blank. The UI's screen replaces the line.
	// The line ends in a bare CR, which Err would show: it goes raw, its
	// fields cleaned here. Several contexts connect behind the UI's header.
	// The demo's simulator plays its fleet's first minutes before the UI
	// opens (a few hundred milliseconds of CPU): that is said too. The line
	// stays on the main screen under the UI's, so it is erased when the UI
	// is done (or never came), before any error is printed where it stood
	// and before the shell's prompt comes back over it.
	if _, stderr := g.rawStreams(); isTerminal(stderr) {
		var line string
		switch {
		case !e.HasCluster():
			line = "sandscope: starting the demo fleet…"
		case len(names) == 0:
			kctx, server := kube.Target(g.Kube)
			line = fmt.Sprintf("sandscope: connecting to %s (context %s)…", textsafe.Line(textsafe.OrDash(server)), textsafe.Line(textsafe.OrDash(kctx)))
		}
		if line != "" {
			fmt.Fprint(stderr, line+"\r")
			defer fmt.Fprint(stderr, ansi.EraseEntireLine)
		}
	}
	t, err := e.OpenTUI(ctx, names, backend.TUIOptions{
		Shell:      g.Shell,
		ExecdToken: os.Getenv("SANDSCOPE_EXECD_TOKEN"),
		TuneMemory: tuneMemoryForWatch,
		HeapProfile: func(ctx context.Context, loaded func(context.Context) error) {
			writeHeapProfileAfterSync(ctx, loaded, g.Err)
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while starting (ctrl+c): as quitting, not a failure
		}
		return err
	}
	defer t.Close()
	opts := t.UIOptions()
	opts.ReadOnly, opts.Version, opts.Favorites = g.ReadOnly, Version(), g.Favorites
	return ui.Run(ctx, t.Source, t.Backend, opts)
}

// tuiContexts are the contexts the TUI shows: those --context lists (a
// comma list), or with --all-contexts every context of the kubeconfig. None:
// the kubeconfig's current context. A name the kubeconfig does not have is
// a connection error naming it, as with one context.
func tuiContexts(g *Globals, e *backend.Env) ([]string, error) {
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
		case !e.HasCluster():
			return nil, usage("--all-contexts reads the kubeconfig; with --demo, name the simulated contexts: --context a,b")
		}
		all, err := e.KubeconfigContexts()
		if err == nil && len(all) == 0 {
			err = &kube.ConnectError{Reason: "--all-contexts: the kubeconfig has no context", Local: true}
		}
		return all, err
	}
	if len(names) > 1 && e.HasCluster() {
		known, err := e.KubeconfigContexts()
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

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
