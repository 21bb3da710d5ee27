package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/ui"
)

// connection is everything sandscope holds for one cluster context: the
// clients, the watcher that keeps its fleet live, and the actions over it.
type connection struct {
	clients  *kube.Clients
	watcher  *kube.Watcher
	executor *execute.Executor
	creator  *create.Creator
	inspect  *inspect.Service
	reader   *kube.Inspector // timestamped logs, which inspect.Service does not offer
	cancel   context.CancelFunc
}

// session is the TUI's view of "the cluster": it can be re-pointed at
// another namespace or context (":ns", ":ctx") while the UI keeps one
// Source. Notifications of whichever watcher is current are forwarded to
// the session's own subscribers.
type session struct {
	g       *Globals
	ctx     context.Context
	images  kube.ImageConfigReader // create's reads (nil: no create)
	checks  kube.ImageConfigReader // background image checks (nil: off)
	connect func(ctx context.Context, kubeContext string) (*kube.Clients, error)
	execVia map[execute.Via]execute.Transport // nil: the real transports
	demo    bool
	sources *kube.Sources // fixed sources (demo); nil = discover
	mu      sync.Mutex
	cur     *connection
	// pending is what Snapshot shows while there is no connection: an
	// empty fleet whose status says the context is connecting, or why it
	// is not (contexts.go).
	pending *model.Snapshot
	subscribers
	nsScope  string // "" = all namespaces
	contexts func() []string
	// forwards are the TUI's open port-forwards by local address; they
	// end with the session.
	forwards map[string]*execute.Forward
	// tuneMemory: this process is the TUI, which lives on with the fleet
	// loaded; tune the GC for that once the watcher synced (see memory.go).
	tuneMemory bool
}

func newSession(ctx context.Context, g *Globals, images kube.ImageConfigReader) *session {
	return &session{g: g, ctx: ctx, images: images, checks: images}
}

// start connects the watcher for clients and makes it current.
func (s *session) start(clients *kube.Clients, namespace string) {
	sources := s.sources
	if sources == nil {
		// Discover once here so the watcher and the inspector agree on the
		// agent-sandbox version; a failure leaves discovery to the watcher,
		// which reports it in the header.
		if found, err := kube.DiscoverSources(s.ctx, clients.Discovery); err == nil {
			sources = &found
		}
	}
	var agent *schema.GroupVersionResource
	if sources != nil {
		agent = sources.Agent
	}
	ctx, cancel := context.WithCancel(s.ctx)
	w := kube.NewWatcher(clients, kube.WatcherOptions{
		Namespace: namespace, Sources: sources, PodSelector: s.g.Selector, StuckAfter: s.g.StuckAfter,
		ImageConfig: s.checks, ReadOnly: s.g.ReadOnly, Demo: s.demo,
	})
	go func() {
		defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
		_ = w.Run(ctx)
	}()
	if s.tuneMemory {
		go func() {
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			writeSyncStatsAfterSync(ctx, w.WaitForSync, s.g.Err)
		}()
		go func() {
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			tuneMemoryForWatch(ctx, w.WaitForSync)
			writeHeapProfileAfterSync(ctx, w.WaitForSync, s.g.Err)
		}()
	}
	transports := s.execVia
	if transports == nil {
		transports = execute.DefaultTransports(clients, execdToken(), 0)
	}
	var forwarder execute.Forwarder
	if s.execVia == nil {
		forwarder = clients // the demo's simulated Pods have no port-forward
	}
	x := execute.New(execute.Options{Cluster: clients, Snapshot: w.Fleet().Snapshot, Transports: transports, ReadOnly: s.g.ReadOnly,
		Forwarder: forwarder})
	reader := kube.NewInspector(clients, agent)
	conn := &connection{
		clients: clients, watcher: w, executor: x, cancel: cancel,
		inspect: inspect.New(reader, s.g.ReadOnly), reader: reader,
	}
	// A create resolves the start command through the image-config reader
	// (a registry, or the demo's simulated one) and probes readiness through
	// this connection's executor (the demo's simulated exec daemons in the
	// demo, where the simulator adopts what the create writes).
	if s.images != nil {
		conn.creator = &create.Creator{Clients: clients, Images: s.images, Prober: &create.ExecProber{Exec: x}, Sources: sources,
			ReadOnly: s.g.ReadOnly}
	}
	changes, unsubscribe := w.Subscribe()
	go func() {
		defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
		defer unsubscribe()
		for {
			select {
			case <-ctx.Done():
				return
			case <-changes:
				s.notify()
			}
		}
	}()
	s.mu.Lock()
	old := s.cur
	s.cur, s.nsScope = conn, namespace
	s.mu.Unlock()
	if old != nil {
		old.cancel()
	}
	s.notify()
}

func (s *session) current() *connection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Snapshot implements ui.Source.
func (s *session) Snapshot() *model.Snapshot {
	s.mu.Lock()
	c, pending := s.cur, s.pending
	s.mu.Unlock()
	switch {
	case c != nil:
		return c.watcher.Fleet().Snapshot()
	case pending != nil:
		return pending
	}
	return &model.Snapshot{}
}

// setPending shows st, with no sandboxes, until the session connects.
func (s *session) setPending(st model.SourceStatus) {
	snap := model.NewSnapshot(0, st, nil, nil, nil)
	s.mu.Lock()
	s.pending = snap
	s.mu.Unlock()
	s.notify()
}

// subscribers are the subscriptions to a ui.Source: coalescing, cap-1
// channels, each told when something changed.
type subscribers struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// Subscribe implements ui.Source.
func (b *subscribers) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[chan struct{}]struct{}{}
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}
}

func (b *subscribers) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (s *session) stop() {
	if c := s.current(); c != nil {
		c.cancel()
	}
	s.mu.Lock()
	open := make([]*execute.Forward, 0, len(s.forwards))
	for _, f := range s.forwards {
		open = append(open, f)
	}
	s.mu.Unlock()
	for _, f := range open {
		f.Close()
	}
}

// forward opens an identity-checked port-forward and keeps it until it
// ends or the session stops.
func (s *session) forward(ctx context.Context, sb *model.Sandbox, local, remote int) (ui.ForwardInfo, error) {
	c, err := s.conn()
	if err != nil {
		return ui.ForwardInfo{}, err
	}
	f, err := c.executor.Forward(ctx, execute.ForwardRequest{Sandbox: sb, LocalPort: local, RemotePort: remote})
	if err != nil {
		return ui.ForwardInfo{}, err
	}
	s.mu.Lock()
	if s.forwards == nil {
		s.forwards = map[string]*execute.Forward{}
	}
	s.forwards[f.LocalAddr] = f
	s.mu.Unlock()
	go func() {
		defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
		<-f.Done()
		s.mu.Lock()
		if s.forwards[f.LocalAddr] == f {
			delete(s.forwards, f.LocalAddr)
		}
		s.mu.Unlock()
	}()
	return ui.ForwardInfo{LocalAddr: f.LocalAddr, Namespace: f.Target.Namespace, Sandbox: sb.Name(), Pod: f.Target.Pod,
		UID: f.Target.UID, RemotePort: f.RemotePort, Since: f.Since, Done: f.Done(), Err: f.Err}, nil
}

// stopForward closes the forward on localAddr.
func (s *session) stopForward(localAddr string) error {
	s.mu.Lock()
	f := s.forwards[localAddr]
	s.mu.Unlock()
	if f == nil {
		return fmt.Errorf("no port-forward on %s", localAddr)
	}
	f.Close()
	return nil
}

// conn is the current connection, or why there is none: a context of a
// contextSet may still be connecting, or unreachable.
func (s *session) conn() (*connection, error) {
	if c := s.current(); c != nil {
		return c, nil
	}
	return nil, errNotConnected
}

var errNotConnected = errorString("this context is not connected (yet): its state is in the header")

// backend exposes the session's actions to the UI. Every call resolves the
// current connection at call time, so ":ctx" and ":ns" take effect at once.
func (s *session) backend() ui.Backend {
	be := ui.Backend{
		YAML: func(ctx context.Context, sb *model.Sandbox) (string, error) {
			c, err := s.conn()
			if err != nil {
				return "", err
			}
			return c.inspect.YAML(ctx, sb)
		},
		Logs: func(ctx context.Context, sb *model.Sandbox, opts ui.LogOptions, w io.Writer) error {
			c, err := s.conn()
			if err != nil {
				return err
			}
			if !opts.Timestamps {
				return c.inspect.Logs(ctx, sb, opts.Previous, w)
			}
			// The same read as inspect.Logs (same history bound), with the
			// kubelet's timestamp on each line.
			lo := kube.LogOptions{Previous: opts.Previous, Follow: !opts.Previous, Timestamps: true}
			if tail := c.inspect.LogTail; tail > 0 {
				lo.TailLines = &tail
			}
			return c.reader.Logs(ctx, sb, lo, w)
		},
		Events: func(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error) {
			c, err := s.conn()
			if err != nil {
				return nil, err
			}
			return c.inspect.Events(ctx, sb)
		},
		Delete: func(ctx context.Context, sb *model.Sandbox) error {
			c, err := s.conn()
			if err != nil {
				return err
			}
			return c.inspect.Delete(ctx, sb)
		},
		Shell: func(sb *model.Sandbox) (tea.ExecCommand, error) {
			c, err := s.conn()
			if err != nil {
				return nil, err
			}
			return c.executor.Shell(s.ctx, sb, execute.ShellOptions{Shell: s.g.Shell}), nil
		},
		Exec: func(ctx context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (int, error) {
			c, err := s.conn()
			if err != nil {
				return 0, err
			}
			res, err := c.executor.Run(ctx, execute.Request{Sandbox: sb, Command: cmd, Stdout: out, Stderr: out})
			return res.ExitCode, err
		},
		Create: func(ctx context.Context, req ui.CreateRequest, stage func(ui.CreateStage)) (string, error) {
			c, err := s.conn()
			if err != nil {
				return "", err
			}
			if c.creator == nil {
				return "", errNoCreate
			}
			ns := req.Namespace
			if ns == "" {
				ns = c.clients.Namespace
			}
			// A *create.Error of its own: a nil one in err would read as a failure.
			res, failed := c.creator.Run(ctx, create.Request{
				Namespace: ns, Image: req.Image, Entrypoint: req.Command, Pool: req.Pool, Env: req.Env,
				Lifetime: req.Lifetime, CPU: req.CPU, Memory: req.Memory,
			}, func(u create.StageUpdate) {
				stage(ui.CreateStage{Line: stageLine(u), Failed: u.Stage == create.StageFailed})
			})
			if failed != nil {
				return "", failed
			}
			return string(res.Engine) + "/" + res.Namespace + "/" + res.Sandbox, nil
		},
		SwitchNamespace: func(ns string) error {
			if ns == "all" || ns == "*" {
				ns = ""
			}
			c, err := s.conn()
			if err != nil {
				return err
			}
			s.start(c.clients, ns)
			return nil
		},
	}
	if s.execVia == nil {
		be.Forward, be.StopForward = s.forward, s.stopForward
	}
	if s.connect != nil {
		be.SwitchContext = func(name string) error {
			if name == "" {
				return errOneContext
			}
			clients, err := s.connect(s.ctx, name)
			if err != nil {
				return err
			}
			s.mu.Lock()
			ns := s.nsScope
			s.mu.Unlock()
			if ns != "" {
				ns = clients.Namespace
			}
			s.start(clients, ns)
			return nil
		}
	}
	if s.contexts != nil {
		be.Contexts = s.contexts
	}
	return be
}

var errOneContext = errorString("sandscope was started with one context: start it with --context a,b or --all-contexts to see several at once")

// kubeconfigContexts lists the contexts of the kubeconfig the flags name.
func kubeconfigContexts(g *Globals) func() []string {
	return func() []string {
		names, _ := allContexts(g)
		return names
	}
}

var errNoCreate = errorString("create is not available here (no image-config reader to resolve the start command)")

// stageLine is one create stage as the TUI's live stage line shows it.
func stageLine(u create.StageUpdate) string {
	line := fmt.Sprintf("%s %s", u.Sandbox, u.Stage)
	if u.Elapsed > 0 {
		line += fmt.Sprintf(" (+%s)", u.Elapsed.Round(time.Millisecond))
	}
	if u.Detail != "" {
		line += ": " + u.Detail
	}
	if u.Stage == create.StageFailed && u.Retryable != nil {
		// What the error object says, so the line and the error agree.
		line += fmt.Sprintf(" (retryable: %v, executed: %s)", *u.Retryable, u.Executed)
	}
	return line
}

// execdToken is execd's access token from the environment; it is never
// printed or logged.
func execdToken() string { return os.Getenv("SANDSCOPE_EXECD_TOKEN") }
