package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/files"
	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/internal/broadcast"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/ui"
)

// connection is everything sandscope holds for one cluster context: its
// environment's connection, the watcher that keeps its fleet live, and the
// actions over it.
type connection struct {
	conn     *Conn
	watcher  *kube.Watcher
	executor *execute.Executor
	creator  *create.Creator
	inspect  *inspect.Service
	reader   *kube.Inspector // timestamped logs, which inspect.Service does not offer
	cancel   context.CancelFunc
}

// session is the TUI's view of "the cluster": it can be re-pointed at
// another namespace or context (":ns", ":ctx") while the UI keeps one
// Source. Notifications of whichever watcher is current are relayed to
// the session's own subscribers.
type session struct {
	env  *Env
	opts TUIOptions
	ctx  context.Context
	// dial connects another context for ":ctx NAME"; nil: the session stays
	// on its context (the demo, or one context of a contextSet).
	dial func(ctx context.Context, name string) (*Conn, error)
	mu   sync.Mutex
	cur  *connection
	// pending is what Snapshot shows while there is no connection: an
	// empty fleet whose status says the context is connecting, or why it
	// is not (contexts.go).
	pending *fleet.Snapshot
	broadcast.Signal
	nsScope  string // "" = all namespaces
	contexts func() []string
	// forwards are the TUI's open port-forwards by local address; they
	// end with the session.
	forwards map[string]*execute.Forward
	// tuneMemory: this process is the TUI, which lives on with the fleet
	// loaded; opts' hooks tune it for that once the watcher synced.
	tuneMemory bool
}

func newSession(ctx context.Context, e *Env, opts TUIOptions) *session {
	return &session{env: e, opts: opts, ctx: ctx}
}

// start watches namespace through conn and makes it current.
func (s *session) start(conn *Conn, namespace string) {
	ctx, cancel := context.WithCancel(s.ctx)
	// The watcher discovers the engines while its Pods' list starts; the
	// inspector and the creator take what it found, so that they agree
	// with it on the agent-sandbox version.
	w := conn.Watch(ctx, namespace, nil)
	sources := w.Sources(ctx)
	var agent *schema.GroupVersionResource
	if sources != nil {
		agent = sources.Agent
	}
	if s.tuneMemory {
		crash.Go(func() {
			s.opts.afterLoad(ctx, w.WaitForSync)
		})
	}
	x := conn.Executor(ExecOptions{Fleet: w.Fleet().Snapshot, Token: s.opts.ExecdToken})
	reader := kube.NewInspector(conn.Clients, agent)
	c := &connection{
		conn: conn, watcher: w, executor: x, cancel: cancel,
		inspect: inspect.New(reader, s.env.opts.ReadOnly), reader: reader,
		// A create probes readiness through this connection's executor (the
		// demo's simulated exec daemons in the demo, where the simulator
		// adopts what the create writes).
		creator: conn.Creator(x, conn.Images(imageconfig.Options{}), sources),
	}
	crash.Go(func() {
		broadcast.Relay(ctx, w.Subscribe, s.Notify)
	})
	s.mu.Lock()
	old := s.cur
	s.cur, s.nsScope = c, namespace
	s.mu.Unlock()
	if old != nil {
		old.cancel()
	}
	s.Notify()
}

func (s *session) current() *connection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Snapshot implements ui.Source.
func (s *session) Snapshot() *fleet.Snapshot {
	s.mu.Lock()
	c, pending := s.cur, s.pending
	s.mu.Unlock()
	switch {
	case c != nil:
		return c.watcher.Fleet().Snapshot()
	case pending != nil:
		return pending
	}
	return &fleet.Snapshot{}
}

// setPending shows st, with no sandboxes, until the session connects.
func (s *session) setPending(st model.SourceStatus) {
	snap := fleet.NewSnapshot(0, st, nil, nil, nil)
	s.mu.Lock()
	s.pending = snap
	s.mu.Unlock()
	s.Notify()
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
	crash.Go(func() {
		<-f.Done()
		s.mu.Lock()
		if s.forwards[f.LocalAddr] == f {
			delete(s.forwards, f.LocalAddr)
		}
		s.mu.Unlock()
	})
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

var errNotConnected = errors.New("this context is not connected (yet): its state is in the header")

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
			if !opts.Timestamps && opts.Container == "" && opts.Since == 0 {
				return c.inspect.Logs(ctx, sb, opts.Previous, w)
			}
			// The same read as inspect.Logs (same history bound), with the
			// kubelet's timestamp on each line, another container or a
			// window of time.
			lo := kube.LogOptions{Previous: opts.Previous, Follow: !opts.Previous, Timestamps: opts.Timestamps, Container: opts.Container}
			if tail := c.inspect.LogTail; tail > 0 && opts.Since == 0 {
				lo.TailLines = &tail
			}
			if opts.Since > 0 {
				secs := int64(opts.Since.Seconds())
				lo.SinceSeconds = &secs
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
		Restarts: func(ctx context.Context, sb *model.Sandbox) ([]model.Notice, error) {
			c, err := s.conn()
			if err != nil {
				return nil, err
			}
			// The sweep's verdicts: against the fleet's siblings, with the
			// node and the controls read live.
			notices, _ := inspect.NewForensics(c.watcher.Fleet().Snapshot(), c.conn.Clients).ExplainSandbox(ctx, sb)
			return notices, nil
		},
		Delete: func(ctx context.Context, sb *model.Sandbox) error {
			c, err := s.conn()
			if err != nil {
				return err
			}
			return c.inspect.Delete(ctx, sb)
		},
		ForceDelete: func(ctx context.Context, sb *model.Sandbox) error {
			c, err := s.conn()
			if err != nil {
				return err
			}
			return c.inspect.ForceDelete(ctx, sb)
		},
		Shell: func(sb *model.Sandbox) (tea.ExecCommand, error) {
			c, err := s.conn()
			if err != nil {
				return nil, err
			}
			return c.executor.Shell(s.ctx, sb, execute.ShellOptions{Shell: s.opts.Shell}), nil
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
			ns := req.Namespace
			if ns == "" {
				ns = c.conn.Clients.Namespace
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
			s.start(c.conn, ns)
			return nil
		},
	}
	if s.env.CanForward() {
		be.Forward, be.StopForward = s.forward, s.stopForward
		be.Copy = func(ctx context.Context, sb *model.Sandbox, req ui.CopyRequest) (string, error) {
			c, err := s.conn()
			if err != nil {
				return "", err
			}
			return copyFiles(ctx, &files.Copier{Exec: c.executor, ReadOnly: s.env.opts.ReadOnly}, sb, req)
		}
	}
	if s.dial != nil {
		be.SwitchContext = func(name string) error {
			if name == "" {
				return errOneContext
			}
			conn, err := s.dial(s.ctx, name)
			if err != nil {
				return err
			}
			s.mu.Lock()
			ns := s.nsScope
			s.mu.Unlock()
			if ns != "" {
				ns = conn.Clients.Namespace
			}
			s.start(conn, ns)
			return nil
		}
	}
	if s.contexts != nil {
		be.Contexts = s.contexts
	}
	return be
}

var errOneContext = errors.New("sandscope was started with one context: start it with --context a,b or --all-contexts to see several at once")

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

// copyFiles is the TUI's copy: one download or upload for the sandbox the
// user picked, summed up in a line.
func copyFiles(ctx context.Context, c *files.Copier, sb *model.Sandbox, req ui.CopyRequest) (string, error) {
	target := files.Target{Sandbox: sb}
	var out files.Outcome
	var err error
	if req.Download {
		out, err = c.Download(ctx, files.Download{Target: target, RemotePath: req.Remote, Dest: req.Local})
	} else {
		out, err = c.Upload(ctx, files.Upload{Target: target, Source: req.Local, RemotePath: req.Remote})
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("copied %s → %s: %d bytes, %d entries (pod %s uid %s, checked before and after)",
		out.Source, out.Dest, out.Bytes, out.Entries, out.Target.Pod, out.Target.UID), nil
}
