package e2e_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/kube/kubetest"
)

// TestTUIManyContexts runs the binary over a kubeconfig holding two test
// clusters' contexts: one table of both fleets with a CONTEXT column and
// each context's state in the header. The second cluster's API server is
// stopped mid-session: its rows turn UNKNOWN and the header says since
// when, while a sandbox added to the first cluster appears. :ctx shows one
// context, :ctx all both again, and the second recovers by itself.
func TestTUIManyContexts(t *testing.T) {
	needTmux(t)
	east := kubetest.Get(t)
	west := kubetest.Start(t, kubetest.Options{})
	ns := east.Namespace(t)
	if _, err := west.Kube.CoreV1().Namespaces().Create(kubetest.Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	east.RunningSandbox(t, ns, "sbx-east", "10.9.1.1")
	west.RunningSandbox(t, ns, "sbx-west", "10.9.1.1")
	kubeconfig := kubetest.Kubeconfig(t, []string{"east", "west"}, east, west)

	s := startSandscope(t, 200, 30, "--kubeconfig", kubeconfig, "--context", "east,west", "-n", ns)
	row := func(ctx, name, identity string) string { // the namespace may be cut short
		return `(?m)^.` + ctx + `\s+\S+\s+` + name + `\s.*\s` + identity + `\s`
	}
	waitOrExplain(t, s, row("west", "sbx-west", "OK"), 60*time.Second, "the table never showed west's sandbox")
	screen := s.WaitFor(row("east", "sbx-east", "OK"), 30*time.Second)
	if !strings.Contains(screen, "east synced · west synced") || !strings.Contains(screen, " CONTEXT ") {
		t.Fatalf("no per-context state or CONTEXT column:\n%s", screen)
	}

	west.StopAPIServer(t)
	screen = s.WaitFor(`west disconnected since \d\d:\d\d:\d\d`, 60*time.Second)
	screen = s.WaitFor(row("west", "sbx-west", "UNKNOWN"), 30*time.Second)
	if !strings.Contains(screen, "identity UNKNOWN in west (disconnected)") {
		t.Errorf("the counts do not say which context is masked:\n%s", screen)
	}
	east.RunningSandbox(t, ns, "sbx-east-2", "10.9.1.2")
	screen = s.WaitFor(row("east", "sbx-east-2", "OK"), 30*time.Second)
	if !regexp.MustCompile(row("west", "sbx-west", "UNKNOWN")).MatchString(screen) || !regexp.MustCompile(row("east", "sbx-east", "OK")).MatchString(screen) {
		t.Fatalf("a context's rows changed with the other's server:\n%s", screen)
	}

	s.SendKeys(":")
	s.Type("ctx east")
	s.SendKeys("Enter")
	screen = s.WaitFor(`ctx:east .*synced`, 10*time.Second)
	if strings.Contains(screen, "CONTEXT") || strings.Contains(screen, "sbx-west") {
		t.Fatalf(":ctx east still shows west:\n%s", screen)
	}
	s.SendKeys(":")
	s.Type("ctx all")
	s.SendKeys("Enter")
	s.WaitFor(`east synced · west disconnected`, 10*time.Second)

	west.StartAPIServer(t)
	s.WaitFor(`east synced · west synced`, 90*time.Second)
	s.WaitFor(row("west", "sbx-west", "OK"), 30*time.Second)

	s.SendKeys("q")
	if status, screen := s.WaitExit(10 * time.Second); status != 0 {
		t.Fatalf("sandscope exited %d:\n%s", status, screen)
	}
}
