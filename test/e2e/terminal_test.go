package e2e_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/tmuxtest"
)

// However the TUI ends (a panic on a background goroutine, or any signal
// that ends a process), the terminal it leaves is the one it found: the
// main screen, no mouse reporting. The binary is the crashtest build, in
// which SIGUSR1 panics on a goroutine started through crash.Go. Before
// SIGHUP and SIGQUIT were handled, both left the alternate screen and the
// mouse on.
func TestTUIGivesTerminalBackOnEveryEnd(t *testing.T) {
	needTmux(t)
	bin := tmuxtest.BuildSandscope(t, "crashtest")
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		status int    // exit status
		says   string // on the terminal after the end
	}{
		{"panic", syscall.SIGUSR1, 70, "sandscope: internal error: injected by the crashtest build"},
		{"SIGHUP", syscall.SIGHUP, 0, ""},
		{"SIGQUIT", syscall.SIGQUIT, 2, "goroutine "}, // the runtime's stack dump, after the terminal is back
		{"SIGTERM", syscall.SIGTERM, 0, ""},
		{"SIGINT", syscall.SIGINT, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tmuxtest.Start(t, tmuxtest.Options{Width: 160, Height: 30, Env: []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + t.TempDir()}},
				bin, "--demo")
			s.WaitFor(`synced`, 30*time.Second)
			if m := s.Modes(); !m.AlternateScreen || !m.Mouse {
				t.Fatalf("the running UI's modes are %+v; want the alternate screen and the mouse on, or this test checks nothing", m)
			}
			if err := syscall.Kill(s.PID(), tc.sig); err != nil {
				t.Fatal(err)
			}
			status, screen := s.WaitExit(15 * time.Second)
			if m := s.Modes(); m.AlternateScreen || m.Mouse {
				t.Errorf("after %s the terminal is left with %+v; want the main screen and the mouse off", tc.name, m)
			}
			if status != tc.status {
				t.Errorf("exit status %d, want %d", status, tc.status)
			}
			if !strings.Contains(screen, tc.says) {
				t.Errorf("the terminal does not say %q:\n%s", tc.says, screen)
			}
		})
	}
}
