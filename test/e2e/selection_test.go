package e2e_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/kube"
)

// filteredLookalike runs two BatchSandboxes whose generated names share a
// prefix and digits, and sandscope over their namespace, filtered to
// code-runner-80e0aa11 (a prefix code-runner-8efd263d matches fuzzily).
func filteredLookalike(t *testing.T) (*testcluster.Cluster, string, *tmuxtest.Session) {
	t.Helper()
	needTmux(t)
	c, ns := testcluster.GetWithNamespace(t)
	c.RunningSandbox(t, ns, "code-runner-80e0aa11", "10.244.8.10")
	c.RunningSandbox(t, ns, "code-runner-8efd263d", "10.244.0.80")
	s := startSandscope(t, 200, 30, "--kubeconfig", c.Kubeconfig, "-n", ns)
	waitOrExplain(t, s, `Sandboxes \[2/2\]`, 30*time.Second, "the two sandboxes never showed")
	s.SendKeys("/")
	s.Type("code-runner-80e0")
	s.SendKeys("Enter")
	s.WaitFor(`Sandboxes \[1/2\]`, 10*time.Second)
	return c, ns, s
}

// gone removes a sandbox as the engine and the garbage collector would:
// the object, then its Pod.
func gone(t *testing.T, c *testcluster.Cluster, ns, name string) {
	t.Helper()
	c.Controller(t).Delete(kube.BatchSandboxGVR, ns, name)
	c.Kubelet(t).ForceDelete(ns, name+"-0")
}

// Filtered to one sandbox; it goes: the filter keeps its meaning (no fuzzy
// match of the look-alike), the cursor is on nothing, and ctrl+d asks
// about no other sandbox (it asked to delete the look-alike before).
func TestTUIDeletedRowNeverMovesTheHand(t *testing.T) {
	c, ns, s := filteredLookalike(t)
	gone(t, c, ns, "code-runner-80e0aa11")
	screen := s.WaitFor(`code-runner-80e0aa11 left the view`, 30*time.Second)
	if strings.Contains(screen, "fuzzy") || strings.Contains(screen, "code-runner-8efd263d") {
		t.Fatalf("the filter changed its meaning when its sandbox went:\n%s", screen)
	}
	s.SendKeys("C-d")
	screen = s.WaitFor(`no sandbox under the cursor`, 10*time.Second)
	if strings.Contains(screen, "[y/N] Delete") {
		t.Fatalf("ctrl+d asked to delete another sandbox:\n%s", screen)
	}
}

// x on a filtered sandbox; it goes before the command is entered: the
// exec is refused, saying so, and the next x opens no prompt on the
// look-alike.
func TestTUIExecNeverMovesTheHand(t *testing.T) {
	c, ns, s := filteredLookalike(t)
	s.SendKeys("x")
	s.WaitFor(`exec \S+/code-runner-80e0aa11>`, 10*time.Second)
	s.Type("hostname")

	gone(t, c, ns, "code-runner-80e0aa11")
	s.WaitFor(`Sandboxes \[0/1\]`, 30*time.Second)
	s.SendKeys("Enter")
	s.WaitFor(`exec refused: \S+/code-runner-80e0aa11 is gone since you asked`, 10*time.Second)
	s.SendKeys("x")
	screen := s.WaitFor(`no sandbox under the cursor`, 10*time.Second)
	if regexp.MustCompile(`exec \S+/code-runner-8efd263d>`).MatchString(screen) {
		t.Fatalf("x opened a prompt on another sandbox:\n%s", screen)
	}
}
