package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
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
