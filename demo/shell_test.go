package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/syncbuf"
)

// fakeLines answers lines the way the simulation would, recording them.
type fakeLines struct {
	mu    sync.Mutex
	lines []string
}

func (f *fakeLines) run(ctx context.Context, line string, last int, stdout, stderr io.Writer) (int, bool, error) {
	f.mu.Lock()
	f.lines = append(f.lines, line)
	f.mu.Unlock()
	switch line {
	case "hostname":
		fmt.Fprintln(stdout, "p-0")
	case "false":
		return 1, false, nil
	case "oops":
		fmt.Fprintln(stderr, "sh: 1: oops: not found")
		return 127, false, nil
	case "exit":
		return last, true, nil
	case "gone":
		return last, false, errors.New(`pods "p-0" not found`)
	case "block":
		<-ctx.Done()
		return 137, false, nil
	}
	return 0, false, nil
}

func (f *fakeLines) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...)
}

func ttyShell(in io.Reader, out io.Writer, f *fakeLines) *shell {
	w := crlfWriter{w: out}
	return &shell{pod: "p-0", tty: true, in: in, stdout: w, stderr: w, run: f.run}
}

const prompt = "root@p-0:/workspace# "

// The line editor of a terminal session, as raw keys arrive: echo,
// backspace over a multi-byte character, an arrow key (skipped), Ctrl-U,
// Ctrl-C at the prompt (status 130), "\r\n" as one Enter, and Ctrl-D on an
// empty line ending the shell with the last status.
func TestShellLineEditing(t *testing.T) {
	t.Parallel()
	f := &fakeLines{}
	var out bytes.Buffer
	keys := "hostnamé\x7fe\x1b[A\r" + // one line: "hostname"
		"junk\x15false\r\n" + // Ctrl-U erased junk; \r\n is one Enter
		"half\x03" + // Ctrl-C: the line is dropped, status 130
		"oops\r" +
		"\x04" // Ctrl-D
	code, err := ttyShell(strings.NewReader(keys), &out, f).serve(context.Background())
	if err != nil || code != 127 {
		t.Fatalf("serve: exit %d, %v; want 127 (the last status) and no error", code, err)
	}
	if want := []string{"hostname", "false", "oops"}; fmt.Sprint(f.got()) != fmt.Sprint(want) {
		t.Errorf("lines run %q, want %q", f.got(), want)
	}
	s := out.String()
	for _, want := range []string{
		"sandscope demo: simulated shell in pod p-0; nothing runs on this machine",
		prompt + "hostnam\xc3\xa9\b \be\r\np-0\r\n" + prompt,
		"junk\b \b\b \b\b \b\b \bfalse\r\n" + prompt,
		"half^C\r\n" + prompt + "oops\r\nsh: 1: oops: not found\r\n" + prompt + "exit\r\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, s)
		}
	}
	if strings.Contains(s, "[A") || strings.Contains(strings.ReplaceAll(s, "\r\n", ""), "\n") {
		t.Errorf("escape sequence echoed or a bare newline on a raw terminal:\n%q", s)
	}

	// Ctrl-C at the prompt sets the status a following exit returns.
	out.Reset()
	code, err = ttyShell(strings.NewReader("\x03exit\r"), &out, &fakeLines{}).serve(context.Background())
	if err != nil || code != 130 {
		t.Errorf("exit after Ctrl-C: %d, %v; want 130", code, err)
	}
}

// Ctrl-C while a command runs interrupts it (status 130) and drops what was
// typed ahead; the shell goes on.
func TestShellInterruptsACommand(t *testing.T) {
	t.Parallel()
	f := &fakeLines{}
	inR, inW := io.Pipe()
	defer inW.Close()
	var out syncbuf.Buffer
	done := make(chan error, 1)
	var code int
	go func() {
		var err error
		code, err = ttyShell(inR, &out, f).serve(context.Background())
		done <- err
	}()
	_, _ = io.WriteString(inW, "block\r")
	waitFor(t, func() bool { return len(f.got()) == 1 }, "the command to start")
	_, _ = io.WriteString(inW, "typed-ahead\x03exit\r")
	select {
	case err := <-done:
		if err != nil || code != 130 {
			t.Fatalf("exit %d, %v; want 130", code, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Ctrl-C did not interrupt the command; output %q", out.String())
	}
	if got := f.got(); len(got) != 2 || got[1] != "exit" {
		t.Errorf("lines %q; want block, then exit (the typed-ahead text dropped)", got)
	}
	if !strings.Contains(out.String(), "block\r\n^C\r\n"+prompt+"exit") {
		t.Errorf("output %q", out.String())
	}
}

// Without a terminal the shell reads a script: no prompt, no echo, an
// unterminated last line still runs. When the Pod goes away, the session
// ends with "connection closed" and an outcome-unknown error.
func TestShellWithoutTerminalAndPodGone(t *testing.T) {
	t.Parallel()
	f := &fakeLines{}
	var out, errOut bytes.Buffer
	sh := &shell{pod: "p-0", in: strings.NewReader("hostname\r\nfalse"), stdout: &out, stderr: &errOut, run: f.run}
	code, err := sh.serve(context.Background())
	if err != nil || code != 1 || out.String() != "p-0\n" || errOut.Len() != 0 {
		t.Fatalf("exit %d, %v, stdout %q, stderr %q; want 1, p-0 and nothing else", code, err, out.String(), errOut.String())
	}
	if want := []string{"hostname", "false"}; fmt.Sprint(f.got()) != fmt.Sprint(want) {
		t.Errorf("lines run %q, want %q", f.got(), want)
	}

	out.Reset()
	_, err = ttyShell(strings.NewReader("hostname\rgone\rhostname\r"), &out, &fakeLines{}).serve(context.Background())
	e := refusalOf(err)
	if e == nil || e.Executed != refusal.ExecutedUnknown || !strings.Contains(e.Message, "connection closed: pod p-0 is gone") {
		t.Fatalf("error %v; want connection closed, executed unknown", err)
	}
	if s := out.String(); !strings.HasSuffix(s, "gone\r\nconnection closed: pod p-0 is gone (pods \"p-0\" not found)\r\n") {
		t.Errorf("output %q; want it to end with the connection closed line", s)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestShellInTheDemo is the TUI's `s` on the demo fleet: the executor's
// identity-checked shell over the demo transports. A running sandbox gets
// the simulated shell of its own Pod; an IP_TAKEN one is refused before
// anything starts; a Pod re-created under the session ends it.
func TestShellInTheDemo(t *testing.T) {
	ctx := t.Context()
	d, w := startWatched(t, 9)
	running, taken := runningAndTaken(t, w, true)
	x := execute.New(execute.Options{Cluster: d.Clients, Snapshot: w.Fleet().Snapshot, Transports: d.Transports()})
	pod := running.PrimarySlot().Pod.Name

	t.Run("running", func(t *testing.T) {
		// zsh is not in the simulated image: the shell falls back to sh.
		sh := x.Shell(ctx, running, execute.ShellOptions{Shell: "zsh"})
		var out bytes.Buffer
		sh.SetStdin(strings.NewReader("hostname\necho hi $?\nfalse\nexit\n"))
		sh.SetStdout(&out)
		sh.SetStderr(&out)
		if err := sh.Run(); err != nil {
			t.Fatalf("shell in %s: %v\n%s", pod, err, out.String())
		}
		p := "root@" + pod + ":/workspace# "
		want := p + "hostname\r\n" + pod + "\r\n" + p + "echo hi $?\r\nhi 0\r\n" + p + "false\r\n" + p + "exit\r\n"
		if s := out.String(); !strings.HasSuffix(s, want) || !strings.Contains(s, "sandscope demo: simulated shell in pod "+pod) {
			t.Errorf("terminal output\n%q\nwant it to end with\n%q", s, want)
		}
		if res := sh.Result(); res.ExitCode != 1 || res.Target.Pod != pod {
			t.Errorf("result %+v; want exit 1 (false, then a bare exit) in %s", res, pod)
		}
	})

	t.Run("IP_TAKEN refused before the shell starts", func(t *testing.T) {
		sh := x.Shell(ctx, taken, execute.ShellOptions{})
		var out bytes.Buffer
		sh.SetStdin(strings.NewReader("hostname\nexit\n"))
		sh.SetStdout(&out)
		sh.SetStderr(&out)
		e := refusalOf(sh.Run())
		if e == nil || e.Code != execute.CodeIPTaken || e.Executed != refusal.ExecutedNo {
			t.Fatalf("shell into %s: %v; want an IP_TAKEN refusal, executed no", taken.Key, e)
		}
		if out.Len() != 0 {
			t.Errorf("a refused shell wrote %q", out.String())
		}
	})

	t.Run("pod re-created under the session", func(t *testing.T) {
		sl := running.PrimarySlot()
		var out bytes.Buffer
		_, err := d.Transports()[execute.ViaKube].Exec(ctx, execute.Dispatch{Namespace: sl.Pod.Namespace, Pod: pod,
			UID: "uid-of-the-pod-the-session-started-in", Command: []string{"sh"}, TTY: true, Interactive: true,
			Stdin: strings.NewReader("hostname\n"), Stdout: &out})
		if e := refusalOf(err); e == nil || e.Executed != refusal.ExecutedUnknown {
			t.Fatalf("error %v; want the connection closed, executed unknown", err)
		}
		if s := out.String(); strings.Contains(s, "\r\n"+pod+"\r\n") || !strings.Contains(s, "connection closed: pod "+pod+" is gone") {
			t.Errorf("output %q; want no answer from the new Pod and the connection closed", s)
		}
	})
}

// refusalOf is err's refusal, or nil.
func refusalOf(err error) *refusal.Error {
	var r *refusal.Error
	errors.As(err, &r)
	return r
}
