package e2e_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/tmuxtest"
)

// TestTUIDemoShell opens `sandscope --demo` in a real terminal, opens the
// shell (`s`) of a running sandbox and drives the simulated shell the way a
// person would: the prompt names the sandbox's Pod, hostname answers it,
// exit brings the table back. It needs no cluster.
func TestTUIDemoShell(t *testing.T) {
	needTmux(t)
	s := startSandscope(t, 230, 30, "--demo")
	s.WaitFor(`synced`, 30*time.Second)

	// Oldest first: the demo's first sandboxes are pinned examples that keep
	// running (a newer one may be deleted or re-created at any moment).
	s.SendKeys("A")
	s.WaitFor(`sort:age\s`, 10*time.Second)
	s.SendKeys("A")
	s.WaitFor(`sort:age \(reversed\)`, 10*time.Second)
	s.SendKeys("g")
	// The cursor mark (NO_COLOR) on the row under the column titles.
	top := s.WaitFor(`(?m)SANDBOX .*\n›`, 10*time.Second)
	// ENGINE is shown only when the terminal has room for it beside the rest.
	// CLAIM, when shown, follows SANDBOX.
	row := regexp.MustCompile(`^[ ›]?\S+\s+(\S+)\s+(?:\S+\s+)??(?:(?:bsbx|agent|pod)\s+)?\S+\s+Running\s+OK\s+\S+\s+(\S+)`)
	// The oldest that is Running and OK: an old one may be between Pods.
	lines := strings.Split(top, "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "›") })
	var m []string
	for i := first; i >= 0 && i < len(lines) && m == nil; i++ {
		if m = row.FindStringSubmatch(lines[i]); m == nil {
			s.SendKeys("j")
		}
	}
	if m == nil {
		t.Fatalf("no sandbox on screen is Running and OK:\n%s", top)
	}
	sandbox, podCol := m[1], strings.TrimSuffix(m[2], "…")
	s.WaitFor(`(?m)^›\S+\s+`+regexp.QuoteMeta(sandbox)+`\s`, 10*time.Second)

	s.SendKeys("s")
	screen := s.WaitFor(`root@\S+:/workspace#\s*$`, 15*time.Second)
	pod := regexp.MustCompile(`root@(\S+):/workspace#`).FindStringSubmatch(screen)[1]
	if !strings.HasPrefix(pod, podCol) || !strings.Contains(screen, "simulated shell in pod "+pod) {
		t.Fatalf("shell of %s opened in pod %q; the table shows pod %q:\n%s", sandbox, pod, podCol, screen)
	}
	s.Type("hostname")
	s.SendKeys("Enter")
	s.WaitFor(`(?m)# hostname\n`+regexp.QuoteMeta(pod)+`\n.*#\s*$`, 10*time.Second)

	s.Type("exit")
	s.SendKeys("Enter")
	// The table is back, saying the shell ended: the message that says so
	// follows the terminal's return, so it may come a frame after the table.
	s.WaitFor(`(?s)Sandboxes \[\d+/\d+\].*shell ended`, 10*time.Second)
	if exited, status := s.Exited(); exited {
		t.Fatalf("sandscope exited (%d) after the shell", status)
	}
}

// The demo fleet in a real terminal shows the pile-up of deleted sandboxes' Pods: Pods of
// deleted sandboxes stuck Terminating, counted in the header with how many
// are still in PodInitializing, listed by /STUCK as rows whose engine
// phase is "deleted".
func TestTUIDemoPileUp(t *testing.T) {
	needTmux(t)
	s := startSandscope(t, 230, 40, "--demo")
	s.WaitForRegexp(regexp.MustCompile(`stuck \d+ \(\d+ init\)`), 30*time.Second)
	s.SendKeys("/", "STUCK_TERMINATING", "Enter")
	s.WaitForRegexp(regexp.MustCompile(`(?m)\bdeleted\b.*STUCK_TERMINATING`), 10*time.Second)
}

// The line that stands while the demo starts ("starting the demo fleet…",
// as "connecting to …" does for a cluster) is gone once the UI has quit: the
// shell's prompt comes back on a clean line, not over its leftovers.
func TestTUIStartLineGoneAfterQuit(t *testing.T) {
	needTmux(t)
	bin := tmuxtest.BuildSandscope(t)
	s := tmuxtest.Start(t, tmuxtest.Options{Width: 120, Height: 20, Env: []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + t.TempDir()}},
		"sh", "-c", bin+" --demo; echo quit-status=$?; sleep 60") // alive: a dead pane's screen is tmux's, not the program's
	s.WaitFor(`synced`, 30*time.Second)
	s.SendKeys("q")
	screen := s.WaitFor(`quit-status=0`, 10*time.Second)
	if strings.Contains(screen, "demo fleet") {
		t.Fatalf("the start line was left on the terminal after quitting:\n%s", screen)
	}
}

// sweep's table on a terminal fits its width, each cut cell given whole
// under it: the width was asked of the text-safe writer wrapping the
// terminal, which is no terminal, so every row ran long and wrapped.
func TestSweepTableFitsTheTerminal(t *testing.T) {
	needTmux(t)
	bin := tmuxtest.BuildSandscope(t)
	const width = 100
	s := tmuxtest.Start(t, tmuxtest.Options{Width: width, Height: 50, Env: []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + t.TempDir()}},
		"sh", "-c", bin+" sweep --demo -n eval; echo sweep-status=$?; sleep 60")
	s.WaitFor(`sweep-status=\d`, 60*time.Second)
	all := s.CaptureAll()
	start := strings.Index(all, "#   SEVERITY")
	if start < 0 {
		t.Fatalf("no table header:\n%s", all)
	}
	rows := 0
	for _, line := range strings.Split(all[start:], "\n") {
		if !regexp.MustCompile(`^(#|\d+)\s`).MatchString(line) {
			break // the table ends where the evidence begins
		}
		rows++
	}
	// A row that wrapped leaves a line that is no row: the table ends there.
	if rows < 10 || !strings.Contains(all[start:], "…") {
		t.Fatalf("want the header and rows, one line each, with cut cells; got %d lines:\n%s", rows, all[start:])
	}
}
