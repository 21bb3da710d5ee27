package execute_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/syncbuf"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
)

// sizeQueue is a TerminalSizeQueue fed by the test.
type sizeQueue struct{ ch chan execute.TerminalSize }

func (q *sizeQueue) Next() *execute.TerminalSize {
	s, ok := <-q.ch
	if !ok {
		return nil
	}
	return &s
}

// A TTY shell through pods/exec: bash is missing in the container (the
// runtime says so and exits 126), so the shell falls back to sh; resizes
// reach the node in order; typed input comes back; Ctrl-D ends it.
func TestExecShellTTYWithResizeAndFallback(t *testing.T) {
	var mu sync.Mutex
	var tried []string
	e := newEnv(t, func(ctx context.Context, req kubelettest.ExecRequest) error {
		mu.Lock()
		tried = append(tried, fmt.Sprintf("%s tty=%t", strings.Join(req.Command, " "), req.TTY))
		mu.Unlock()
		switch req.Command[0] {
		case "bash":
			fmt.Fprint(req.Stdout, "OCI runtime exec failed: exec failed: unable to start container process: exec: \"bash\": executable file not found in $PATH: unknown\r\n")
			return kubelettest.ExitCode(126)
		case "sh":
			req.Command = []string{"tty"} // FakeExec's terminal: prints sizes, echoes input
			return kubelettest.FakeExec(ctx, req)
		}
		return kubelettest.ExitCode(127)
	})
	p := e.running("shell")
	x := e.executor(execute.Options{})

	sizes := &sizeQueue{ch: make(chan execute.TerminalSize, 4)}
	sizes.ch <- execute.TerminalSize{Width: 80, Height: 24}
	stdinR, stdinW := io.Pipe()
	var out syncbuf.Buffer
	sh := x.Shell(ctxT(t), e.fleet.Snapshot().Sandbox("pod/"+e.NS+"/shell"), execute.ShellOptions{Sizes: sizes})
	sh.SetStdin(stdinR)
	sh.SetStdout(&out)
	sh.SetStderr(&out)
	done := make(chan error, 1)
	go func() { done <- sh.Run() }()

	waitOutput(t, &out, "size=80x24")
	sizes.ch <- execute.TerminalSize{Width: 120, Height: 40}
	waitOutput(t, &out, "size=120x40")
	_, _ = io.WriteString(stdinW, "hello")
	waitOutput(t, &out, "hello")
	endShell(t, stdinW, done)
	close(sizes.ch)
	stdinW.Close()
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(tried, ",") != "bash tty=true,sh tty=true" {
		t.Errorf("commands tried: %v", tried)
	}
	if !strings.Contains(out.String(), "tty=true") || strings.Index(out.String(), "size=80x24") > strings.Index(out.String(), "size=120x40") {
		t.Errorf("output %q", out.String())
	}
	if sh.Result().ExitCode != 0 || sh.Result().Target.UID != string(p.UID) {
		t.Errorf("result %+v", sh.Result())
	}
}

// A shell into a sandbox whose IP was taken is refused like any exec.
func TestExecShellIsChecked(t *testing.T) {
	e := newEnv(t, nil)
	e.ipTaken("shell-a", "shell-b")
	x := e.executor(execute.Options{})
	err := x.ShellRef(ctxT(t), e.NS, "shell-a", execute.ShellOptions{Sizes: &sizeQueue{ch: make(chan execute.TerminalSize)}}).Run()
	ee := asExecError(t, err)
	if ee.Code != execute.CodeIPTaken || ee.Executed != refusal.ExecutedNo {
		t.Fatalf("got %s", ee.JSON())
	}
	if e.execRequests("shell-a")+e.execRequests("shell-b") != 0 {
		t.Fatal("the kubelet got a request")
	}
}

// `exec -it -- CMD`: a command with a terminal still carries the end marker,
// so its exit code is proven and the marker never shows.
func TestExecTTYCommandUsesEndMarker(t *testing.T) {
	e := newEnv(t, nil)
	e.running("ttycmd")
	x := e.executor(execute.Options{})
	var out syncbuf.Buffer
	sh := x.ShellRef(ctxT(t), e.NS, "ttycmd", execute.ShellOptions{Command: []string{"sh", "-c", "echo hi; exit 5"},
		Sizes: &sizeQueue{ch: make(chan execute.TerminalSize)}})
	sh.SetStdin(strings.NewReader(""))
	sh.SetStdout(&out)
	sh.SetStderr(&out)
	if err := sh.Run(); err != nil {
		t.Fatal(err)
	}
	if sh.Result().ExitCode != 5 || !strings.HasSuffix(out.String(), "hi\r\n") {
		t.Fatalf("exit %d output %q", sh.Result().ExitCode, out.String())
	}
	if _, rest, _ := strings.Cut(out.String(), "\n"); strings.Contains(rest, "__sandscope_end_") {
		t.Fatalf("marker shown: %q", out.String())
	}
}

// A shell reading a terminal (an *os.File) stops reading it when the
// session ends: the first key typed afterwards belongs to the UI, not to a
// reader left behind by the session.
func TestExecShellLeavesStdinAlone(t *testing.T) {
	e := newEnv(t, func(ctx context.Context, req kubelettest.ExecRequest) error {
		req.Command = []string{"tty"} // echoes input until Ctrl-D
		return kubelettest.FakeExec(ctx, req)
	})
	e.running("shell-stdin")
	x := e.executor(execute.Options{})
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	defer stdinW.Close()
	var out syncbuf.Buffer
	sh := x.Shell(ctxT(t), e.fleet.Snapshot().Sandbox("pod/"+e.NS+"/shell-stdin"), execute.ShellOptions{Shell: "sh"})
	sh.SetStdin(stdinR)
	sh.SetStdout(&out)
	sh.SetStderr(&out)
	done := make(chan error, 1)
	go func() { done <- sh.Run() }()
	_, _ = io.WriteString(stdinW, "typed-in-shell")
	waitOutput(t, &out, "typed-in-shell")
	endShell(t, stdinW, done)

	// The next key is the UI's.
	_, _ = io.WriteString(stdinW, "k")
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 8)
		n, _ := stdinR.Read(buf)
		got <- string(buf[:n])
	}()
	select {
	case s := <-got:
		if s != "k" {
			t.Fatalf("read %q after the session, want the key k", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the key typed after the session was swallowed by the session's stdin reader")
	}
}

// waitOutput polls a shell's output until it holds s.
func waitOutput(t *testing.T, out *syncbuf.Buffer, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", s, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// endShell types Ctrl-D and waits for the shell, whose Run reports on done,
// to end without an error.
func endShell(t *testing.T, stdin io.Writer, done <-chan error) {
	t.Helper()
	_, _ = io.WriteString(stdin, "\x04")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shell: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("shell did not end after Ctrl-D")
	}
}
