package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
)

func flags(namespace string) *kube.ConfigFlags {
	f := kube.NewConfigFlags()
	f.Overrides.Context.Namespace = namespace
	return f
}

// What a fleet view watches: -A every namespace; the demo without -n every
// namespace, with -n that one, as a cluster's context does.
func TestConnNamespace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name      string
		opts      Options
		want      string
		clientsNS string
	}{
		{"demo", Options{Kube: flags(""), Demo: &demo.Options{}}, "", "sandboxes"},
		{"demo -n", Options{Kube: flags("eval"), Demo: &demo.Options{}}, "eval", "eval"},
		{"demo -A", Options{Kube: flags("eval"), Demo: &demo.Options{}, AllNamespaces: true}, "", "eval"},
	} {
		conn, err := New(tc.opts).Context("").Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := conn.Namespace(); got != tc.want || conn.Clients.Namespace != tc.clientsNS {
			t.Errorf("%s: Namespace %q, clients' %q; want %q and %q", tc.name, got, conn.Clients.Namespace, tc.want, tc.clientsNS)
		}
		conn.Close()
	}
	// A cluster: its own namespace (-n or the kubeconfig's), all with -A.
	for _, all := range []bool{false, true} {
		conn := &Conn{Clients: &kube.Clients{Namespace: "team"}, env: New(Options{Kube: flags(""), AllNamespaces: all})}
		if got, want := conn.Namespace(), map[bool]string{false: "team", true: ""}[all]; got != want {
			t.Errorf("cluster, -A %v: Namespace %q, want %q", all, got, want)
		}
	}
}

// Each demo context is a fleet of its own, named as asked, from the next
// seed; the image checks are the simulation's when on, none when off.
func TestDemoContexts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := New(Options{Kube: flags(""), Demo: &demo.Options{Seed: 4}, ImageChecks: imageconfig.New(imageconfig.Options{})})
	a, b := e.Context("a"), e.Context("b")
	if a.demo.Seed != 4 || b.demo.Seed != 5 || a.Server() != demo.ServerName {
		t.Errorf("seeds %d, %d (want 4, 5), server %q", a.demo.Seed, b.demo.Seed, a.Server())
	}
	conn, err := b.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if !conn.Demo() || conn.Clients.Context != "b" {
		t.Errorf("demo %v, context %q; want a demo named b", conn.Demo(), conn.Clients.Context)
	}
	if _, simulated := conn.ImageChecks().(*imageconfig.Reader); simulated || conn.ImageChecks() == nil {
		t.Errorf("demo image checks: %T, want the simulation's reader", conn.ImageChecks())
	}
	if _, simulated := conn.Images(imageconfig.Options{}).(*imageconfig.Reader); simulated {
		t.Errorf("a demo create would ask a registry")
	}
	off := New(Options{Kube: flags(""), Demo: &demo.Options{}})
	conn2, err := off.Context("").Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if conn2.ImageChecks() != nil || conn2.Clients.Context != demo.ContextName {
		t.Errorf("checks off: %v, context %q", conn2.ImageChecks(), conn2.Clients.Context)
	}
}

// A one-shot exec in the demo watches the demo's namespace and resolves
// its sandboxes from that fleet.
func TestDemoLookupExecutor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := New(Options{Kube: flags("eval"), Demo: &demo.Options{}}).Context("").Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	x, ns, err := conn.LookupExecutor(ctx, ExecOptions{}, time.Minute)
	if err != nil || x == nil || ns != "eval" {
		t.Fatalf("executor %v, namespace %q, %v; want one in eval", x, ns, err)
	}
}

// sweep's targets: one per context named, each once; none named is the
// kubeconfig's current context. The demo is read in every namespace
// unless -n names one.
func TestSweepTargets(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\ncurrent-context: here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := flags("")
	f.KubeConfig = path
	for _, tc := range []struct {
		contexts []string
		want     []string
	}{
		{nil, []string{"here"}},
		{[]string{"a", "b", "a"}, []string{"a", "b"}},
	} {
		_, targets, err := New(Options{Kube: f}).Sweep(ctx, tc.contexts, time.Minute)
		if got := targetNames(targets); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("contexts %v: targets %v, %v; want %v", tc.contexts, got, err, tc.want)
		}
	}

	for _, ns := range []string{"", "eval"} {
		opts, targets, err := New(Options{Kube: flags(ns), Demo: &demo.Options{}}).Sweep(ctx, nil, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if got := targetNames(targets); !slices.Equal(got, []string{demo.ContextName}) || opts.AllNamespaces != (ns == "") ||
			opts.Namespace != ns || opts.ImageConfig != nil {
			t.Errorf("demo -n %q: targets %v, options %+v", ns, got, opts)
		}
	}
}

func targetNames(targets []sweep.Target) []string {
	var out []string
	for _, t := range targets {
		out = append(out, t.Name)
	}
	return out
}

// sweep --demo --probe: the demo's targets answer the probe from their own
// simulation; the sweep's network ping is never called.
func TestDemoSweepProbeIsSimulated(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts, targets, err := New(Options{Kube: flags(""), Demo: &demo.Options{}}).Sweep(ctx, []string{"a", "b"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	opts.Probe = true
	var dialled atomic.Int32
	opts.Ping = func(context.Context, string) error {
		dialled.Add(1)
		return errors.New("dialled from this machine")
	}
	report := sweep.Sweep(ctx, targets, opts)
	if n := dialled.Load(); n > 0 {
		t.Errorf("sweep --demo --probe dialled %d simulated Pod IPs from this machine", n)
	}
	live := 0
	for _, f := range report.Findings {
		if f.Code == model.CodeNotExecReady && strings.Contains(f.Message, "does not answer") {
			live++
		}
	}
	if live == 0 || live*2 > report.Summary.Sandboxes {
		t.Errorf("%d NOT_EXEC_READY from the probe of %d sandboxes: want the few the simulation runs without execd", live, report.Summary.Sandboxes)
	}
}

// --image-registries holds the demo's simulated registry to the allowlist
// as it holds a real one: an image elsewhere is IMAGE_CONFIG_UNREADABLE
// (not allowed, nothing read), never ENTRYPOINT_NOT_RUN from a read the
// list forbids, nor an attempt at the unreachable registry.
func TestDemoImageRegistries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		registries       []string
		entrypointNotRun bool
		unreadable       int // at least, all of them not allowed
	}{
		{[]string{"other.example"}, false, 2},
		{[]string{"registry.demo.local"}, true, 1},
	} {
		e := New(Options{Kube: flags(""), Demo: &demo.Options{},
			ImageChecks: imageconfig.New(imageconfig.Options{Registries: tc.registries})})
		opts, targets, err := e.Sweep(ctx, nil, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		report := sweep.Sweep(ctx, targets, opts)
		notRun, unreadable := 0, 0
		for _, f := range report.Findings {
			switch f.Code {
			case model.CodeEntrypointNotRun:
				notRun++
			case model.CodeImageConfigUnreadable:
				unreadable++
				if !strings.Contains(f.Message, "is not among the allowed registries (--image-registries)") {
					t.Errorf("registries %v: %s", tc.registries, f.Message)
				}
			}
		}
		if (notRun > 0) != tc.entrypointNotRun || unreadable < tc.unreadable {
			t.Errorf("registries %v: %d ENTRYPOINT_NOT_RUN, %d IMAGE_CONFIG_UNREADABLE; want some: %v, and at least %d not allowed",
				tc.registries, notRun, unreadable, tc.entrypointNotRun, tc.unreadable)
		}
	}
}
