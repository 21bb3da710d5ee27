package tmuxtest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/tmuxtest"
)

func TestTypeWaitAndExitStatus(t *testing.T) {
	s := tmuxtest.Start(t, tmuxtest.Options{Width: 80, Height: 24, Env: []string{"GREETING=ready-for-input"}},
		"sh", "-c", `echo "$GREETING"; read line; echo "got:$line"; exit 4`)
	s.WaitFor(`ready-for-input`, 5*time.Second)
	s.Type("hello world")
	s.SendKeys("Enter")
	status, screen := s.WaitExit(5 * time.Second)
	if status != 4 {
		t.Fatalf("exit status = %d, want 4; screen:\n%s", status, screen)
	}
	if !strings.Contains(screen, "got:hello world") {
		t.Fatalf("typed line did not arrive; screen:\n%s", screen)
	}
}

func TestResizeReachesTheProgram(t *testing.T) {
	s := tmuxtest.Start(t, tmuxtest.Options{Width: 80, Height: 24},
		"sh", "-c", `while :; do printf '\rsize=%s ' "$(stty size)"; sleep 0.05; done`)
	s.WaitFor(`size=24 80`, 5*time.Second)
	s.Resize(100, 30)
	s.WaitForGone(`size=24 80`, 5*time.Second)
	s.WaitFor(`size=30 100`, 5*time.Second)
	if w, h := s.Size(); w != 100 || h != 30 {
		t.Fatalf("Size() = %dx%d, want 100x30", w, h)
	}
}

func TestControlKeyAndExitStatus(t *testing.T) {
	s := tmuxtest.Start(t, tmuxtest.Options{}, "sh", "-c", `trap 'exit 130' INT; echo running; while :; do sleep 0.05; done`)
	s.WaitFor(`running`, 5*time.Second)
	if exited, _ := s.Exited(); exited {
		t.Fatal("program reported exited while it runs")
	}
	s.SendKeys("C-c")
	status, _ := s.WaitExit(5 * time.Second)
	if status != 130 {
		t.Fatalf("exit status after C-c = %d, want 130", status)
	}
	s.Close()
	s.Close() // idempotent
}

func TestDeathBySignalReportsShellStatus(t *testing.T) {
	s := tmuxtest.Start(t, tmuxtest.Options{}, "sh", "-c", `echo running; exec sleep 30`)
	s.WaitFor(`running`, 5*time.Second)
	s.SendKeys("C-c")
	if status, _ := s.WaitExit(5 * time.Second); status != 130 {
		t.Fatalf("exit status of a program killed by SIGINT = %d, want 130", status)
	}
}

func TestSessionsArePrivate(t *testing.T) {
	a := tmuxtest.Start(t, tmuxtest.Options{}, "sh", "-c", `echo session-a; sleep 30`)
	b := tmuxtest.Start(t, tmuxtest.Options{}, "sh", "-c", `echo session-b; sleep 30`)
	a.WaitFor(`session-a`, 5*time.Second)
	if screen := b.WaitFor(`session-b`, 5*time.Second); strings.Contains(screen, "session-a") {
		t.Fatalf("session b shows session a's output:\n%s", screen)
	}
}

func TestBuildSandscopeRunsInTmux(t *testing.T) {
	bin := tmuxtest.BuildSandscope(t)
	if again := tmuxtest.BuildSandscope(t); again != bin {
		t.Fatalf("second BuildSandscope = %q, want the cached %q", again, bin)
	}
	s := tmuxtest.Start(t, tmuxtest.Options{Width: 100, Height: 40}, bin, "--help")
	status, screen := s.WaitExit(20 * time.Second)
	if status != 0 || !strings.Contains(screen, "sandscope") || !strings.Contains(screen, "--kubeconfig") {
		t.Fatalf("sandscope --help: status %d, screen:\n%s", status, screen)
	}
}

func TestPIDIsTheProgram(t *testing.T) {
	s := tmuxtest.Start(t, tmuxtest.Options{}, "sh", "-c", `echo "pid=$$"; sleep 30`)
	screen := s.WaitFor(`pid=[0-9]+`, 5*time.Second)
	if want := fmt.Sprintf("pid=%d", s.PID()); !strings.Contains(screen, want) {
		t.Fatalf("PID() = %d, but the program printed:\n%s", s.PID(), screen)
	}
}
