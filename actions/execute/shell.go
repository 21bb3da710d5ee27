package execute

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/muesli/cancelreader"
	"golang.org/x/term"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/model"
)

// DefaultShells is tried in order when no shell is configured.
var DefaultShells = []string{"bash", "sh"}

// Shell is an interactive shell in a sandbox's main container through
// pods/exec with a terminal. It implements bubbletea's tea.ExecCommand
// (Run, SetStdin, SetStdout, SetStderr) without importing bubbletea: the UI
// hands it to tea.Exec, which suspends the UI while it runs.
type Shell struct {
	x       *Executor
	ctx     context.Context
	req     Request
	shells  []string
	command []string // instead of shells
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	sizes   TerminalSizeQueue
	result  Result
	resultM sync.Mutex
}

// ShellOptions configure a Shell.
type ShellOptions struct {
	// Shell to run; "" tries bash, then sh. A configured shell that is
	// missing also falls back to sh.
	Shell     string
	Container string
	// Command, when set, runs instead of a shell, with the same terminal
	// handling (`sandscope exec -it -- CMD`), wrapped with the end marker;
	// there is no fallback then.
	Command []string
	// Sizes overrides the terminal size source (tests); by default the size
	// of stdout's terminal, followed on SIGWINCH.
	Sizes TerminalSizeQueue
	// ExpectUID and ExpectIP as Request's.
	ExpectUID, ExpectIP string
}

// Shell prepares an interactive shell into sb; nothing is checked or sent
// until Run. ctx bounds the session.
func (x *Executor) Shell(ctx context.Context, sb *model.Sandbox, opts ShellOptions) *Shell {
	return x.shell(ctx, Request{Sandbox: sb, Container: opts.Container, ExpectUID: opts.ExpectUID, ExpectIP: opts.ExpectIP}, opts)
}

// ShellRef is Shell for a reference (SANDBOX or pod/NAME in namespace).
func (x *Executor) ShellRef(ctx context.Context, namespace, ref string, opts ShellOptions) *Shell {
	return x.shell(ctx, Request{Namespace: namespace, Ref: ref, Container: opts.Container, ExpectUID: opts.ExpectUID, ExpectIP: opts.ExpectIP}, opts)
}

func (x *Executor) shell(ctx context.Context, req Request, opts ShellOptions) *Shell {
	shells := DefaultShells
	if opts.Shell != "" {
		shells = []string{opts.Shell}
		if opts.Shell != "sh" {
			shells = append(shells, "sh")
		}
	}
	req.Via, req.TTY, req.Interactive = ViaKube, true, true
	s := &Shell{x: x, ctx: ctx, req: req, shells: shells, sizes: opts.Sizes,
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	if len(opts.Command) > 0 {
		s.command = opts.Command
	}
	return s
}

// SetStdin sets the terminal's input; tea.Exec calls it before Run.
func (s *Shell) SetStdin(r io.Reader) { s.stdin = r }

// SetStdout sets the terminal's output; tea.Exec calls it before Run.
func (s *Shell) SetStdout(w io.Writer) { s.stdout = w }

// SetStderr sets where errors go; tea.Exec calls it before Run.
func (s *Shell) SetStderr(w io.Writer) { s.stderr = w }

// Result is the last run's result (exit code of the shell).
func (s *Shell) Result() Result {
	s.resultM.Lock()
	defer s.resultM.Unlock()
	return s.result
}

// Run checks the target and opens the shell, putting a real terminal in raw
// mode for the session. A shell that is missing in the container (it
// provably did not start) is replaced by the next one. The error is a
// *refusal.Error for refusals and failures; a shell's own non-zero exit is
// not an error.
func (s *Shell) Run() error {
	if f, ok := s.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fd := int(f.Fd())
		old, err := term.MakeRaw(fd)
		if err == nil {
			restore := func() { _ = term.Restore(fd, old) } // best effort, and idempotent
			defer restore()
			// A panic on any goroutine, or SIGQUIT, ends the process
			// without this defer: they run the crash restorers instead.
			defer crash.OnPanic(restore)()
		}
	}
	sizes := s.sizes
	if sizes == nil {
		if f, ok := s.stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			q := watchTerminalSize(int(f.Fd()))
			defer q.stop()
			sizes = q
		}
	}
	var fan *sizeFanout
	if sizes != nil {
		fan = newSizeFanout(sizes)
	}
	var relay *stdinRelay
	if s.stdin != nil {
		src, cancel, closeSrc := cancelable(s.stdin)
		relay = newStdinRelay(src, closeSrc)
		defer relay.release(cancel, cancel != nil)
	}
	attempts := make([][]string, len(s.shells))
	for i, sh := range s.shells {
		attempts[i] = []string{sh}
	}
	if s.command != nil {
		attempts = [][]string{s.command}
	}
	var lastErr error
	for i, argv := range attempts {
		req := s.req
		req.Command = argv
		// A given command is wrapped with the end marker like any one-shot
		// (only its end proves it ran); a login shell is passed through as is.
		req.Interactive = s.command == nil
		req.Stderr = s.stderr
		endSizes, endStdin := func() {}, func() {}
		if fan != nil {
			req.Sizes, endSizes = fan.attempt()
		}
		if relay != nil {
			req.Stdin, endStdin = relay.attempt()
		}
		probe := &headWriter{w: s.stdout, limit: 512}
		req.Stdout = probe
		res, err := s.x.Run(s.ctx, req)
		endSizes()
		endStdin()
		missing := shellMissing(err, res, probe.head())
		if missing && i < len(attempts)-1 {
			lastErr = err
			continue
		}
		if err != nil {
			return err
		}
		s.resultM.Lock()
		s.result = res
		s.resultM.Unlock()
		return nil
	}
	return lastErr
}

// cancelable wraps a terminal (an *os.File) so that the relay's pending
// read can be called off when the session ends. Otherwise that read
// outlives the session and swallows the first key typed into the UI after
// it. cancel calls the read off; closeSrc frees the reader and may only run
// once no read is in progress (the relay sees to that). Other readers
// (tests, pipes handed in by callers) are used as they are.
func cancelable(r io.Reader) (src io.Reader, cancel, closeSrc func()) {
	nop := func() {}
	f, ok := r.(*os.File)
	if !ok {
		return r, nil, nop
	}
	cr, err := cancelreader.NewReader(f)
	if err != nil {
		return r, nil, nop
	}
	return cr, func() { cr.Cancel() }, func() { _ = cr.Close() }
}

// shellMissing: the runtime could not start the shell binary. Container
// runtimes report it either as an exec error or as exit code 126/127 with
// "executable file not found" on the stream; in both cases nothing ran.
func shellMissing(err error, res Result, head string) bool {
	var e *refusal.Error
	if errors.As(err, &e) {
		return e.Executed == refusal.ExecutedNo && strings.Contains(e.Message, "not found") && strings.Contains(e.Message, "exec")
	}
	if err == nil && (res.ExitCode == 126 || res.ExitCode == 127) {
		return strings.Contains(head, "executable file not found") || strings.Contains(head, "no such file or directory")
	}
	return false
}

// headWriter passes everything through and remembers the first bytes.
type headWriter struct {
	mu    sync.Mutex
	w     io.Writer
	limit int
	buf   bytes.Buffer
}

func (h *headWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	if room := h.limit - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	h.mu.Unlock()
	return h.w.Write(p)
}

func (h *headWriter) head() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}

// terminalSize is the local terminal's size now, or nil when fd is no
// terminal (any more).
func terminalSize(fd int) *TerminalSize {
	w, h, err := term.GetSize(fd)
	if err != nil {
		return nil
	}
	return &TerminalSize{Width: uint16(w), Height: uint16(h)}
}

// sizeFanout reads one TerminalSizeQueue and serves it to successive shell
// attempts: each attempt starts with the last size seen, and an attempt
// that ended stops taking sizes (client-go's resize loop outlives its stream).
type sizeFanout struct {
	mu   sync.Mutex
	last *TerminalSize
	cur  chan TerminalSize
}

func newSizeFanout(parent TerminalSizeQueue) *sizeFanout {
	f := &sizeFanout{}
	crash.Go(func() {
		for s := parent.Next(); s != nil; s = parent.Next() {
			f.mu.Lock()
			v := *s
			f.last = &v
			if f.cur != nil {
				select {
				case f.cur <- v:
				default: // the attempt is behind; it will get a later size
				}
			}
			f.mu.Unlock()
		}
	})
	return f
}

// attempt returns the queue for one attempt and the func that ends it.
func (f *sizeFanout) attempt() (TerminalSizeQueue, func()) {
	ch := make(chan TerminalSize, 8)
	done := make(chan struct{})
	f.mu.Lock()
	if f.last != nil {
		ch <- *f.last
	}
	f.cur = ch
	f.mu.Unlock()
	var once sync.Once
	return &attemptSizes{ch: ch, done: done}, func() {
		once.Do(func() {
			f.mu.Lock()
			if f.cur == ch {
				f.cur = nil
			}
			f.mu.Unlock()
			close(done)
		})
	}
}

type attemptSizes struct {
	ch   chan TerminalSize
	done chan struct{}
}

func (a *attemptSizes) Next() *TerminalSize {
	select {
	case s := <-a.ch:
		return &s
	case <-a.done:
		return nil
	}
}

// stdinRelay reads the session's stdin in one goroutine and hands each
// chunk to the attempt running now: an attempt that ended (a missing shell)
// must not swallow the first keys meant for the next one.
type stdinRelay struct {
	once     sync.Once
	started  bool // the reading goroutine runs (set inside once)
	src      io.Reader
	closeSrc func()
	data     chan []byte
	err      chan error
	quit     chan struct{}
	stopped  chan struct{} // closed when the reading goroutine ends
}

func newStdinRelay(src io.Reader, closeSrc func()) *stdinRelay {
	return &stdinRelay{src: src, closeSrc: closeSrc, data: make(chan []byte), err: make(chan error, 1), quit: make(chan struct{}), stopped: make(chan struct{})}
}

func (r *stdinRelay) start() {
	r.once.Do(func() {
		r.started = true
		crash.Go(func() {
			// The goroutine owns the reader: it frees it after its last read.
			defer close(r.stopped)
			defer r.closeSrc()
			buf := make([]byte, 32<<10)
			for {
				n, err := r.src.Read(buf)
				if n > 0 {
					select {
					case r.data <- append([]byte(nil), buf[:n]...):
					case <-r.quit:
						return
					}
				}
				if err != nil {
					r.err <- err
					close(r.data)
					return
				}
			}
		})
	})
}

// release ends the relay when the session is over: cancel calls off a
// pending read, and the reader is freed by the goroutine after that read
// returns, or here if reading never started (start cannot begin after).
// When the read was called off, release waits for the goroutine, so the
// terminal is the caller's again when Run returns. A reader that cannot be
// called off (cancel nil: a pipe) is left to end with its input.
func (r *stdinRelay) release(cancel func(), wait bool) {
	close(r.quit)
	if cancel != nil {
		cancel()
	}
	r.once.Do(func() {})
	if !r.started {
		r.closeSrc()
		return
	}
	if wait {
		<-r.stopped
	}
}

// attempt returns the reader for one attempt and the func that ends it.
func (r *stdinRelay) attempt() (io.Reader, func()) {
	a := &attemptStdin{r: r, done: make(chan struct{})}
	var once sync.Once
	return a, func() { once.Do(func() { close(a.done) }) }
}

type attemptStdin struct {
	r    *stdinRelay
	done chan struct{}
	left []byte
}

func (a *attemptStdin) Read(p []byte) (int, error) {
	if len(a.left) == 0 {
		a.r.start()
		select {
		case b, ok := <-a.r.data:
			if !ok {
				return 0, io.EOF
			}
			a.left = b
		case <-a.done:
			return 0, io.EOF
		}
	}
	n := copy(p, a.left)
	a.left = a.left[n:]
	return n, nil
}
