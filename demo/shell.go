package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/crash"
)

// lineRunner runs one line typed into the shell in the sandbox and returns
// its status; exited reports that the line ran "exit". An error means the
// Pod can no longer be reached and nothing of the line ran.
type lineRunner func(ctx context.Context, line string, last int, stdout, stderr io.Writer) (code int, exited bool, err error)

// shell is one simulated interactive shell: it reads lines and hands each to
// run, which answers from the simulation. Nothing runs on this machine.
//
// With a terminal (tty), the local terminal is in raw mode for the session
// (execute.Shell puts it there, as a real remote shell needs), so the shell
// does what the remote pty and the shell's line editor would: it prints a
// prompt, echoes what is typed, handles backspace, Ctrl-U, Ctrl-L, Ctrl-C
// (clears the line, or interrupts a running command) and Ctrl-D (ends the
// shell on an empty line), skips escape sequences (arrow keys), and its
// output is already CRLF-translated (stdout; stderr is the same stream).
// Without one it reads a script from in: no prompt, no echo.
type shell struct {
	pod    string
	tty    bool
	in     io.Reader
	stdout io.Writer
	stderr io.Writer
	run    lineRunner

	input   chan inputChunk
	pending []byte
	inErr   error // the input ended (io.EOF or a read error)
}

type inputChunk struct {
	data []byte
	err  error
}

const (
	keyInterrupt = 0x03 // Ctrl-C
	keyEOF       = 0x04 // Ctrl-D
	keyBackspace = 0x08 // Ctrl-H
	keyClear     = 0x0c // Ctrl-L
	keyKill      = 0x15 // Ctrl-U
	keyEscape    = 0x1b
	keyDelete    = 0x7f // what Backspace sends on most terminals
)

// serve runs the session until exit, Ctrl-D or the end of the input and
// returns the last status, or a *refusal.Error when the Pod went away
// (after telling the user on the terminal) or ctx ended.
func (s *shell) serve(ctx context.Context) (int, error) {
	if s.in == nil {
		s.in = bytes.NewReader(nil)
	}
	stop := make(chan struct{})
	defer close(stop)
	s.input = make(chan inputChunk)
	crash.Go(func() { s.read(stop) })

	if s.tty {
		// A shell that looks real must say it is not: nothing typed here
		// reaches this machine or a cluster.
		fmt.Fprintf(s.stdout, "sandscope demo: simulated shell in pod %s; nothing runs on this machine (exit or Ctrl-D returns)\n", s.pod)
	}
	last := 0
	var line []byte
	// submit runs the line; done means the session is over.
	submit := func() (done bool, err error) {
		code, exited, err := s.runLine(ctx, string(line), last)
		line = line[:0]
		if err != nil {
			fmt.Fprintf(s.stderr, "connection closed: pod %s is gone (%v)\n", s.pod, err)
			return true, &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedUnknown, Err: err,
				Message: fmt.Sprintf("simulated shell: connection closed: pod %s is gone (%v)", s.pod, err)}
		}
		last = code
		if !exited {
			s.prompt()
		}
		return exited, nil
	}

	s.prompt()
	esc := 0 // 1: after ESC; 2: inside a CSI/SS3 sequence
	prevCR := false
	for {
		b, ok, err := s.next(ctx)
		if err != nil {
			return last, &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedUnknown, Err: err,
				Message: "simulated shell: the session ended before its shell did: " + err.Error()}
		}
		if !ok { // end of input: sh runs an unterminated last line, then ends
			if !s.tty && len(line) > 0 {
				if _, err := submit(); err != nil {
					return last, err
				}
			}
			return last, nil
		}
		if !s.tty {
			if b != '\n' {
				line = append(line, b)
				continue
			}
			line = bytes.TrimSuffix(line, []byte("\r"))
			if done, err := submit(); done || err != nil {
				return last, err
			}
			continue
		}

		wasCR := prevCR
		prevCR = b == '\r'
		switch {
		case esc == 1:
			esc = 0
			if b == '[' || b == 'O' {
				esc = 2
			}
		case esc == 2:
			if b >= 0x40 && b <= 0x7e {
				esc = 0
			}
		case b == keyEscape:
			esc = 1
		case b == '\n' && wasCR: // "\r\n" is one Enter
		case b == '\r' || b == '\n':
			s.write("\n")
			if done, err := submit(); done || err != nil {
				return last, err
			}
		case b == keyInterrupt:
			s.write("^C\n")
			line, last = line[:0], 130
			s.prompt()
		case b == keyEOF:
			if len(line) == 0 {
				s.write("exit\n")
				return last, nil
			}
		case b == keyBackspace || b == keyDelete:
			if len(line) > 0 {
				_, size := utf8.DecodeLastRune(line)
				line = line[:len(line)-size]
				s.write("\b \b")
			}
		case b == keyKill:
			for n := utf8.RuneCount(line); n > 0; n-- {
				s.write("\b \b")
			}
			line = line[:0]
		case b == keyClear:
			s.write("\x1b[H\x1b[2J")
			s.prompt()
			s.write(string(line))
		case b < 0x20: // Tab and other controls: no completion, no effect
		default:
			line = append(line, b)
			s.stdout.Write([]byte{b}) //nolint:errcheck // the terminal's own echo; a broken terminal ends the input too
		}
	}
}

func (s *shell) prompt() {
	if s.tty {
		s.write("root@" + s.pod + ":/workspace# ")
	}
}

func (s *shell) write(text string) {
	io.WriteString(s.stdout, text) //nolint:errcheck // see the echo above
}

// read hands the input to the session in chunks until it ends or stop.
func (s *shell) read(stop <-chan struct{}) {
	buf := make([]byte, 4096)
	for {
		n, err := s.in.Read(buf)
		if n == 0 && err == nil {
			continue
		}
		select {
		case s.input <- inputChunk{data: bytes.Clone(buf[:n]), err: err}:
		case <-stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// next returns the next input byte; ok is false once the input has ended.
func (s *shell) next(ctx context.Context) (b byte, ok bool, err error) {
	for len(s.pending) == 0 {
		if s.inErr != nil {
			return 0, false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case c := <-s.input:
			s.pending, s.inErr = c.data, c.err
		}
	}
	b, s.pending = s.pending[0], s.pending[1:]
	return b, true, nil
}

// runLine runs one line while still reading the terminal: what is typed
// meanwhile is kept for the next prompt, and a Ctrl-C interrupts the command
// (status 130) and, like a terminal's interrupt, drops what was typed ahead.
func (s *shell) runLine(ctx context.Context, line string, last int) (code int, exited bool, err error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		code   int
		exited bool
		err    error
	}
	done := make(chan result, 1)
	crash.Go(func() {
		code, exited, err := s.run(lctx, line, last, s.stdout, s.stderr)
		done <- result{code, exited, err}
	})
	interrupted := false
	for {
		input := s.input
		if s.inErr != nil {
			input = nil // the input has ended: nothing more to read
		}
		select {
		case r := <-done:
			if interrupted && r.err == nil && !r.exited {
				s.write("^C\n")
				r.code = 130
			}
			return r.code, r.exited, r.err
		case c := <-input:
			s.inErr = c.err
			// Only a Ctrl-C typed while the command runs interrupts it: one
			// already waiting (a paste, a script) belongs to a later prompt.
			if i := bytes.IndexByte(c.data, keyInterrupt); s.tty && i >= 0 && !interrupted {
				interrupted, s.pending = true, c.data[i+1:]
				cancel()
				continue
			}
			s.pending = append(s.pending, c.data...)
		}
	}
}

// crlfWriter is a terminal's output processing (ONLCR): the remote pty of a
// real shell turns each "\n" into "\r\n", and the local terminal, in raw
// mode for the session, does not.
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
