package e2e_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/tmuxtest"
)

// `sandscope exec -it` puts the operator's terminal in raw mode for the
// shell and gives it back as it found it however the shell ends: the shell
// exits, Ctrl-D, the target is refused after raw mode was set, or a signal
// ends sandscope mid-session. The terminal's settings are read with stty
// from outside (its tty), during the session and after.
func TestExecITGivesTheTerminalBack(t *testing.T) {
	needTmux(t)
	bin := tmuxtest.BuildSandscope(t)
	running, terminating := demoSandboxes(t, bin)

	for _, tc := range []struct {
		name    string
		sandbox string
		end     func(t *testing.T, s *tmuxtest.Session)
		status  string
		raw     bool // the session reaches the shell, so raw mode must be seen on
	}{
		{"exit", running, func(_ *testing.T, s *tmuxtest.Session) { s.Type("exit"); s.SendKeys("Enter") }, "status=0", true},
		{"ctrl-d", running, func(_ *testing.T, s *tmuxtest.Session) { s.SendKeys("C-d") }, "status=0", true},
		{"SIGTERM", running, func(t *testing.T, s *tmuxtest.Session) { signalSandscope(t, s, syscall.SIGTERM) }, "status=126", true},
		{"refused", terminating, nil, "status=125", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			script := `tty > ` + filepath.Join(dir, "tty") + `; stty -g > ` + filepath.Join(dir, "before") +
				`; "$0" --demo exec -it -n eval "$1"; echo "status=$?"; stty -g > ` + filepath.Join(dir, "after")
			s := tmuxtest.Start(t, tmuxtest.Options{Width: 160, Height: 30, Env: []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + t.TempDir()}},
				"sh", "-c", script, bin, tc.sandbox)
			if tc.raw {
				s.WaitFor(`/workspace#\s*$`, 30*time.Second)
				before, now := readFile(t, dir, "before"), sttyOf(t, strings.TrimSpace(readFile(t, dir, "tty")))
				if now == before {
					t.Fatalf("the shell is open and the terminal is still in its cooked mode %s: this test would check nothing", before)
				}
				tc.end(t, s)
			}
			status, screen := s.WaitExit(30 * time.Second)
			if status != 0 || !strings.Contains(screen, tc.status) {
				t.Fatalf("want %s from sandscope (the script's own status %d):\n%s", tc.status, status, screen)
			}
			if before, after := readFile(t, dir, "before"), readFile(t, dir, "after"); before != after {
				t.Errorf("the terminal's settings after sandscope are\n%s\nbefore they were\n%s", after, before)
			}
		})
	}
}

// demoSandboxes names a Running sandbox the demo shells into and one stuck
// Terminating, which exec refuses. The demo's fleet is seeded, so the
// process that execs has the same sandboxes.
func demoSandboxes(t *testing.T, bin string) (running, terminating string) {
	t.Helper()
	out, err := exec.Command(bin, "--demo", "get", "sandboxes", "-n", "eval").Output()
	if err != nil {
		t.Fatalf("sandscope --demo get sandboxes: %v", err)
	}
	// NAME ENGINE PHASE STATE IDENTITY IP POD NODE RESTARTS AGE NOTICES, one
	// namespace: no NAMESPACE column. A Running one made in the warm-up
	// (an age in whole minutes of ten or more) is one of the pinned
	// examples, which never end.
	row := regexp.MustCompile(`(?m)^(\S+)\s+\S+\s+\S+\s+(Running|Terminating)\s+(\S+)\s.*\s(\d+)m\s+\S+\s*$`)
	for _, m := range row.FindAllStringSubmatch(string(out), -1) {
		minutes, _ := strconv.Atoi(m[4])
		switch {
		case m[2] == "Running" && m[3] == "OK" && minutes >= 10 && running == "":
			running = m[1]
		case m[2] == "Terminating" && terminating == "":
			terminating = m[1]
		}
	}
	if running == "" || terminating == "" {
		t.Fatalf("the demo's eval namespace has no Running or no Terminating sandbox:\n%s", out)
	}
	return running, terminating
}

func sttyOf(t *testing.T, tty string) string {
	t.Helper()
	f, err := os.Open(tty)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("stty", "-g")
	cmd.Stdin = f
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stty -g < %s: %v", tty, err)
	}
	return string(out)
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimRight(b, "\x00"))
}

// signalSandscope signals the sandscope the session's shell started: the
// pane's one child.
func signalSandscope(t *testing.T, s *tmuxtest.Session, sig syscall.Signal) {
	t.Helper()
	out, err := exec.Command("pgrep", "-P", strconv.Itoa(s.PID())).Output()
	if err != nil {
		t.Fatalf("finding sandscope's process under the shell %d: %v", s.PID(), err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the shell %d has children %q, want one", s.PID(), out)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
}
