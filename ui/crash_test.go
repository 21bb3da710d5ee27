package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/ui/screen"
)

// crashEnv names the panic the child process of TestPanicGivesTerminalBack
// provokes.
const crashEnv = "SANDSCOPE_TEST_CRASH"

// boomWriter panics when asked to write a frame holding "BOOM": a panic in
// the screen's flush timer. entered is closed once the UI's modes are
// written (with the first frame).
type boomWriter struct {
	w       io.Writer
	entered chan struct{}
	once    *sync.Once
}

func (b boomWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("BOOM")) {
		panic("flush saw BOOM")
	}
	n, err := b.w.Write(p)
	if bytes.Contains(p, []byte(screen.EnterFullScreen)) {
		b.once.Do(func() { close(b.entered) })
	}
	return n, err
}

// crashChild runs the UI full screen on stdout, as Run does, and panics
// where crashEnv says.
func crashChild(mode string) {
	defer crash.Install(os.Stderr, os.Exit)()
	// What cli.Main does with a panic on its own goroutine (the model's).
	defer func() {
		if r := recover(); r != nil {
			crash.Restore()
			fmt.Fprintf(os.Stderr, "sandscope: internal error: %v\n\n%s", r, debug.Stack())
			os.Exit(crash.ExitCode)
		}
	}()
	snap := incidentSnapshot()
	be := Backend{
		YAML:  func(ctx context.Context, sb *model.Sandbox) (string, error) { panic("yaml command panicked") },
		Shell: func(sb *model.Sandbox) (tea.ExecCommand, error) { panic("update panicked") },
	}
	out := boomWriter{w: os.Stdout, entered: make(chan struct{}), once: &sync.Once{}}
	scr := screen.New(out, screen.Options{FullScreen: true})
	app := New(&fakeSource{snap: snap}, be, Options{Now: fixedNow}, DefaultKeyMap())
	started := func(p *tea.Program) func() {
		go func() {
			p.Send(tea.WindowSizeMsg{Width: 120, Height: 30})
			<-out.entered // the panics come once the terminal is in the UI's modes
			switch mode {
			case "command":
				p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'y'}})
			case "update": // Shell is asked for in Update, on the program's goroutine
				p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'s'}})
			case "flush":
				p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'/'}})
				for _, r := range "BOOM" {
					p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
				}
			}
		}()
		return func() {}
	}
	err := runOn(context.Background(), app, scr, started, tea.WithInput(nil), tea.WithoutSignalHandler())
	os.Stderr.WriteString("program ended without a panic: " + errString(err))
	os.Exit(3)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A panic in a command's goroutine, in the screen's flush timer or in the
// model (reaching the program's goroutine, as in cli.Main) leaves
// the terminal usable: the UI's modes are undone (mouse off, main screen)
// before the panic and its stack are printed, and the exit code is 70.
func TestPanicGivesTerminalBack(t *testing.T) {
	if mode := os.Getenv(crashEnv); mode != "" {
		crashChild(mode)
		return
	}
	for _, tc := range []struct{ mode, msg string }{
		{"command", "yaml command panicked"},
		{"flush", "flush saw BOOM"},
		{"update", "update panicked"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPanicGivesTerminalBack$")
			cmd.Env = append(os.Environ(), crashEnv+"="+tc.mode)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out // one stream: the order is what the terminal sees
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != crash.ExitCode {
				t.Fatalf("exit: %v, want code %d; output:\n%q", err, crash.ExitCode, out.String())
			}
			s := out.String()
			enter, leave := strings.Index(s, screen.EnterFullScreen), strings.LastIndex(s, screen.LeaveFullScreen)
			report := strings.Index(s, "sandscope: internal error: "+tc.msg)
			if enter < 0 || leave < enter || report < leave {
				t.Fatalf("want enter (%d) < leave (%d) < report (%d); output:\n%q", enter, leave, report, s)
			}
			if !strings.Contains(s[report:], "goroutine ") {
				t.Errorf("no stack after the report:\n%s", s[report:])
			}
		})
	}
}
