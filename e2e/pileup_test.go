package e2e_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/tmuxtest"
)

// The demo fleet in a real terminal shows the pile-up of deleted sandboxes' Pods: Pods of
// deleted sandboxes stuck Terminating, counted in the header with how many
// are still in PodInitializing, listed by /STUCK as rows whose engine
// phase is "deleted".
func TestTUIDemoPileUp(t *testing.T) {
	if err := tmuxtest.Available(); err != nil {
		t.Skip(err)
	}
	bin := tmuxtest.BuildSandscope(t)
	s := tmuxtest.Start(t, tmuxtest.Options{Width: 230, Height: 40, Env: []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + t.TempDir()}},
		bin, "--demo")
	s.WaitForRegexp(regexp.MustCompile(`stuck \d+ \(\d+ init\)`), 30*time.Second)
	s.SendKeys("/", "STUCK_TERMINATING", "Enter")
	s.WaitForRegexp(regexp.MustCompile(`(?m)\bdeleted\b.*STUCK_TERMINATING`), 10*time.Second)
}
