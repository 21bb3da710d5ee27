// Package tmuxtest drives a program inside a real terminal (tmux) for
// end-to-end tests: start it at a fixed size, type keys, read the screen
// (capture-pane), wait for text, resize, and see how it exited.
//
// Each Session has its own tmux server on a private socket
// (tmux -L <unique> -f /dev/null), so tests never touch a user's tmux and
// can run in parallel. The server is killed when the test ends.
//
//	bin := tmuxtest.BuildSandscope(t)
//	s := tmuxtest.Start(t, tmuxtest.Options{Env: []string{"KUBECONFIG=" + c.Kubeconfig}}, bin, "-n", ns)
//	s.WaitFor(`sbx-1\s+Running`, 10*time.Second)
//	s.SendKeys("j", "Enter")
package tmuxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Options for Start. Zero values mean 120x40, the test's environment, and
// the test's working directory.
type Options struct {
	Width, Height int
	// Env is added to the program's environment (KEY=value). TERM is
	// tmux's own (tmux-256color or screen), as in a real tmux.
	Env []string
	Dir string
}

// Session is one program running in its own tmux server.
type Session struct {
	t      testing.TB
	socket string
	target string
	closed atomic.Bool
}

var serial atomic.Int64

// Available reports whether tmux can be run; Start skips without it
// (fails under CI=true).
func Available() error {
	_, err := exec.LookPath("tmux")
	return err
}

// Start runs argv inside a new detached tmux session of the given size.
// The pane stays after the program exits (remain-on-exit), so its last
// screen and exit status can still be read. Close runs at test cleanup.
func Start(t testing.TB, opts Options, argv ...string) *Session {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmuxtest: CI=true and tmux is missing: %v", err)
		}
		t.Skipf("tmuxtest: tmux not installed: %v", err)
	}
	if len(argv) == 0 {
		t.Fatal("tmuxtest.Start: no program given")
	}
	if opts.Width == 0 {
		opts.Width = 120
	}
	if opts.Height == 0 {
		opts.Height = 40
	}
	s := &Session{
		t:      t,
		socket: fmt.Sprintf("sandscope-test-%d-%d", os.Getpid(), serial.Add(1)),
		target: "main",
	}
	t.Cleanup(s.Close)
	// One invocation: the server starts with remain-on-exit already set,
	// so a program that exits at once still leaves its screen behind.
	args := []string{"set-option", "-g", "remain-on-exit", "on", ";",
		"set-option", "-g", "history-limit", "10000", ";",
		"new-session", "-d", "-s", s.target, "-x", strconv.Itoa(opts.Width), "-y", strconv.Itoa(opts.Height)}
	if opts.Dir != "" {
		args = append(args, "-c", opts.Dir)
	}
	args = append(args, "--")
	args = append(args, argv...)
	cmd := s.command(args...)
	// The server inherits this environment; the program inherits the server's.
	cmd.Env = append(os.Environ(), opts.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmuxtest: starting %q in tmux: %v\n%s", argv, err, out)
	}
	return s
}

func (s *Session) command(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-L", s.socket, "-f", "/dev/null"}, args...)...)
}

func (s *Session) tmux(args ...string) (string, error) {
	out, err := s.command(args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// SendKeys sends tmux key names or strings: "j", "Enter", "Escape", "C-c",
// "Up", "PageDown", "/". Each argument is one send-keys key.
func (s *Session) SendKeys(keys ...string) {
	s.t.Helper()
	if _, err := s.tmux(append([]string{"send-keys", "-t", s.target}, keys...)...); err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
}

// Type sends text literally (no key-name lookup), as if typed.
func (s *Session) Type(text string) {
	s.t.Helper()
	if _, err := s.tmux("send-keys", "-t", s.target, "-l", text); err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
}

// Capture returns the visible screen as plain text, one line per row,
// trailing spaces trimmed.
func (s *Session) Capture() string {
	s.t.Helper()
	out, err := s.tmux("capture-pane", "-p", "-t", s.target)
	if err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
	return out
}

// CaptureAll is Capture including the scrollback history above the screen.
func (s *Session) CaptureAll() string {
	s.t.Helper()
	out, err := s.tmux("capture-pane", "-p", "-S", "-", "-t", s.target)
	if err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
	return out
}

// WaitFor polls the screen until pattern (a regexp) matches and returns
// that screen, or fails the test with the last screen it saw.
func (s *Session) WaitFor(pattern string, timeout time.Duration) string {
	s.t.Helper()
	return s.WaitForRegexp(s.compile("WaitFor", pattern), timeout)
}

// WaitForRegexp is WaitFor with a compiled regexp.
func (s *Session) WaitForRegexp(re *regexp.Regexp, timeout time.Duration) string {
	s.t.Helper()
	screen, ok := s.poll(timeout, func(screen string) bool { return re.MatchString(screen) })
	if !ok {
		s.t.Fatalf("tmuxtest: %s passed without the screen matching %q; last screen:\n%s", timeout, re, frame(screen))
	}
	return screen
}

// WaitForGone polls until pattern no longer matches the screen.
func (s *Session) WaitForGone(pattern string, timeout time.Duration) string {
	s.t.Helper()
	re := s.compile("WaitForGone", pattern)
	screen, ok := s.poll(timeout, func(screen string) bool { return !re.MatchString(screen) })
	if !ok {
		s.t.Fatalf("tmuxtest: %s passed and the screen still matches %q; last screen:\n%s", timeout, re, frame(screen))
	}
	return screen
}

// compile compiles the pattern given to the method named caller, failing
// the test on a bad one.
func (s *Session) compile(caller, pattern string) *regexp.Regexp {
	s.t.Helper()
	re, err := regexp.Compile(pattern)
	if err != nil {
		s.t.Fatalf("tmuxtest.%s: bad pattern %q: %v", caller, pattern, err)
	}
	return re
}

// poll captures the screen until done holds for it or timeout passes; it
// returns the last screen (or why it could not be captured).
func (s *Session) poll(timeout time.Duration, done func(string) bool) (string, bool) {
	var screen string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		out, err := s.tmux("capture-pane", "-p", "-t", s.target)
		if err != nil {
			screen = err.Error()
			return false, nil
		}
		screen = out
		return done(screen), nil
	})
	return screen, err == nil
}

// Resize changes the terminal size; the program gets SIGWINCH.
func (s *Session) Resize(width, height int) {
	s.t.Helper()
	if _, err := s.tmux("resize-window", "-t", s.target, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height)); err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
}

// Size returns the pane's current width and height.
func (s *Session) Size() (width, height int) {
	s.t.Helper()
	out, err := s.tmux("display-message", "-p", "-t", s.target, "#{pane_width} #{pane_height}")
	if err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
	if _, err := fmt.Sscan(out, &width, &height); err != nil {
		s.t.Fatalf("tmuxtest: reading pane size %q: %v", out, err)
	}
	return width, height
}

// Exited reports whether the program has ended, and its exit status. A
// program killed by a signal reports 128+signal, as a shell would.
//
// tmux marks a pane dead when its terminal closes, and records the status
// only once it has reaped the process. tmux 3.3a sometimes leaves the
// process a zombie for good (seen with programs that exit at once), so a
// dead pane without a status is read from the zombie's /proc entry; until
// the status is known from either place the program does not count as
// exited, so a caller never reads a status that is not there.
func (s *Session) Exited() (exited bool, status int) {
	s.t.Helper()
	out, err := s.tmux("display-message", "-p", "-t", s.target,
		"#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal} pid=#{pane_pid}")
	if err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
	pane := parsePane(out)
	if !pane.dead {
		return false, 0
	}
	if pane.statusKnown {
		return true, pane.status
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pane.pid)); err == nil {
		return zombieStatus(string(stat))
	}
	return false, 0
}

type paneState struct {
	dead        bool
	statusKnown bool
	status      int
	pid         int
}

// parsePane reads "DEAD status=N signal=N pid=N" as printed by Exited.
func parsePane(out string) paneState {
	var p paneState
	fields := strings.Fields(out)
	if len(fields) != 4 || fields[0] != "1" {
		return p
	}
	p.dead = true
	p.pid, _ = strconv.Atoi(strings.TrimPrefix(fields[3], "pid="))
	if n, err := strconv.Atoi(strings.TrimPrefix(fields[1], "status=")); err == nil {
		p.statusKnown, p.status = true, n
	} else if n, err := strconv.Atoi(strings.TrimPrefix(fields[2], "signal=")); err == nil {
		p.statusKnown, p.status = true, 128+n
	}
	return p
}

// zombieStatus decodes the exit status of a zombie from its /proc/PID/stat
// line: state is field 3 and exit_code (a waitpid status) the last field.
// A process that is not a zombie has not exited.
func zombieStatus(stat string) (exited bool, status int) {
	end := strings.LastIndexByte(stat, ')') // the command name may hold spaces
	if end < 0 {
		return false, 0
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) == 0 || fields[0] != "Z" {
		return false, 0
	}
	ws, err := strconv.Atoi(fields[len(fields)-1])
	if err != nil {
		return false, 0
	}
	if sig := ws & 0x7f; sig != 0 {
		return true, 128 + sig
	}
	return true, (ws >> 8) & 0xff
}

// PID is the process ID of the program in the pane (tmux runs a program
// given as several arguments directly, without a shell), for reading its
// /proc entry while it runs.
func (s *Session) PID() int {
	s.t.Helper()
	out, err := s.tmux("display-message", "-p", "-t", s.target, "#{pane_pid}")
	if err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		s.t.Fatalf("tmuxtest: pane pid %q: %v", out, err)
	}
	return pid
}

// Modes are the terminal modes a full-screen program sets and must undo:
// whether the pane shows the alternate screen, and whether any mouse
// reporting is on. A dead pane keeps the modes its program left.
type Modes struct {
	AlternateScreen bool
	Mouse           bool
}

// Modes reads the pane's modes from tmux.
func (s *Session) Modes() Modes {
	s.t.Helper()
	out, err := s.tmux("display-message", "-p", "-t", s.target, "#{alternate_on} #{mouse_any_flag}")
	if err != nil {
		s.t.Fatalf("tmuxtest: %v", err)
	}
	var alt, mouse int
	if _, err := fmt.Sscan(out, &alt, &mouse); err != nil {
		s.t.Fatalf("tmuxtest: reading pane modes %q: %v", out, err)
	}
	return Modes{AlternateScreen: alt == 1, Mouse: mouse == 1}
}

// WaitExit waits until the program ends and returns its exit status and
// everything it left on the terminal (history included), or fails the
// test with the last screen.
func (s *Session) WaitExit(timeout time.Duration) (status int, screen string) {
	s.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		exited, st := s.Exited()
		status = st
		return exited, nil
	})
	if err != nil {
		s.t.Fatalf("tmuxtest: program still running after %s; last screen:\n%s", timeout, frame(s.Capture()))
	}
	return status, s.CaptureAll()
}

// Close kills the session's tmux server (and with it the program). It runs
// at test cleanup; calling it earlier is fine.
func (s *Session) Close() {
	if s.closed.Swap(true) {
		return
	}
	_ = s.command("kill-server").Run()
}

// frame marks the screen's edges so blank lines stay visible in a log.
func frame(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("|")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

var build struct {
	sync.Mutex
	bins map[string]buildResult // by build tags
}

type buildResult struct {
	path string
	err  error
}

// BuildSandscope builds the sandscope binary once per test binary and set
// of build tags (with `go build [-tags ...] -o <repo>/tmp/sandscope...
// github.com/sandscope/sandscope`) and returns its path. A failed build
// fails every test that asks.
func BuildSandscope(t testing.TB, tags ...string) string {
	t.Helper()
	build.Lock()
	defer build.Unlock()
	key := strings.Join(tags, ",")
	if build.bins == nil {
		build.bins = map[string]buildResult{}
	}
	b, ok := build.bins[key]
	if !ok {
		b.path, b.err = buildSandscope(key)
		build.bins[key] = b
	}
	if b.err != nil {
		t.Fatalf("tmuxtest: %v", b.err)
	}
	return b.path
}

func buildSandscope(tags string) (string, error) {
	repo, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(repo, "tmp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("building sandscope: %w", err)
	}
	// Build under a private name, then rename: test packages build in
	// parallel, and a rename never leaves a half-written binary behind.
	f, err := os.CreateTemp(dir, "sandscope-build-")
	if err != nil {
		return "", fmt.Errorf("building sandscope: %w", err)
	}
	private := f.Name()
	f.Close()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	args := []string{"build", "-o", private}
	name := "sandscope"
	if tags != "" {
		args = append(args, "-tags", tags)
		name += "-" + strings.ReplaceAll(tags, ",", "-")
	}
	cmd := exec.Command(goBin, append(args, "github.com/sandscope/sandscope")...)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(private)
		return "", fmt.Errorf("go %s github.com/sandscope/sandscope: %w\n%s", strings.Join(args, " "), err, out)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(private, final); err != nil {
		os.Remove(private)
		return "", fmt.Errorf("building sandscope: %w", err)
	}
	return final, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/sandscope/sandscope\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("building sandscope: no go.mod of module github.com/sandscope/sandscope above the working directory")
		}
		dir = parent
	}
}
