// Package e2e runs the real sandscope binary in a real terminal (tmux)
// against a real kube-apiserver (testcluster), the way an operator would.
package e2e_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/kube"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

const sharedIP = "10.244.1.17"

// needTmux skips a test where tmux cannot run, before the test builds a
// cluster it would not use.
func needTmux(t *testing.T) {
	t.Helper()
	if err := tmuxtest.Available(); err != nil {
		t.Skip(err)
	}
}

// startSandscope runs the built binary with args in a tmux terminal of the
// given size, the way an operator would: no colour (so the screen is plain
// text to match) and a config home of its own (no operator's settings).
func startSandscope(t *testing.T, width, height int, args ...string) *tmuxtest.Session {
	t.Helper()
	bin := tmuxtest.BuildSandscope(t)
	return tmuxtest.Start(t, tmuxtest.Options{Width: width, Height: height, Env: []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + t.TempDir()}},
		append([]string{bin}, args...)...)
}

// sandboxWithPod creates BatchSandbox name recording sharedIP and its Pod
// name-0, Running at sharedIP, linked the way OpenSandbox links them.
func sandboxWithPod(t *testing.T, c *testcluster.Cluster, ns, name string) {
	t.Helper()
	ctl, kl := c.Controller(t), c.Kubelet(t)
	obj := ctl.Create(kube.BatchSandboxGVR, ns, testcluster.BatchSandbox(name, nil))
	ctl.SetBatchSandboxStatus(ns, name, map[string]any{"phase": "Succeed", "replicas": int64(1), "allocated": int64(1), "ready": int64(1)})
	ctl.SetEndpoints(ns, name, sharedIP)
	kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(testcluster.SandboxPod(name+"-0", ""), obj, 0))
	kl.SetRunning(ns, name+"-0", sharedIP)
}

// TestTUIIncident002 replays a dead sandbox whose IP a new Pod took under the TUI: sandbox A dies and
// B's Pod gets A's IP. The screen must say so, the filter and detail must
// work, and losing the API server must show "disconnected" and recover.
func TestTUIIncident002(t *testing.T) {
	needTmux(t)
	c, ns := testcluster.GetWithNamespace(t)
	sandboxWithPod(t, c, ns, "sbx-a")

	s := startSandscope(t, 160, 40, "--kubeconfig", c.Kubeconfig, "-n", ns)
	waitOrExplain(t, s, `sbx-a\s+bsbx`, 30*time.Second,
		"the sandscope binary never showed sandbox sbx-a in its sandboxes view. If the screen shows a plain "+
			"\"connected to\" line, cli/tui.go is not yet wired to ui.Run (see ui/api.go)")

	// A's main container dies (exit 137, restartPolicy Never → Failed); within
	// seconds the IPAM hands its IP to B's new Pod on the same node.
	kl := c.Kubelet(t)
	kl.Terminate(ns, "sbx-a-0", osv1.ContainerSandbox, 137, "Error")
	kl.SetPhase(ns, "sbx-a-0", corev1.PodFailed, "", "")
	sandboxWithPod(t, c, ns, "sbx-b")

	s.WaitFor(`sbx-a\s.*IP_TAKEN→sbx-b-0`, 30*time.Second)
	// B's Pod may be on screen, as A's IP's holder, before B's BatchSandbox
	// has arrived: B's own row comes on its own time.
	s.WaitFor(`sbx-b\s.*\sOK\s`, 30*time.Second)

	// "/" + part of A's name narrows the table to A.
	s.SendKeys("/")
	s.Type("bx-a")
	s.SendKeys("Enter")
	screen := s.WaitFor(`Sandboxes \[1/2\]`, 10*time.Second)
	if strings.Contains(screen, "sbx-b  ") || !strings.Contains(screen, "sbx-a") {
		t.Errorf("filter did not narrow to sbx-a:\n%s", screen)
	}

	// d shows the identity evidence with the IP's history: A then B.
	s.SendKeys("d")
	screen = s.WaitFor(`IP history of `+regexp.QuoteMeta(sharedIP), 10*time.Second)
	if !regexp.MustCompile(`(?s)sbx-a-0.*→.*sbx-b-0\s+uid`).MatchString(screen) {
		t.Errorf("IP history does not show A then B:\n%s", screen)
	}

	// :pods switches view. The detail view must be gone before ":" is typed:
	// an Escape and a ":" that reach the terminal together read as alt+:.
	s.SendKeys("Escape")
	s.WaitForGone(`IP history of `, 10*time.Second)
	s.SendKeys(":")
	s.Type("pods")
	s.SendKeys("Enter")
	s.WaitFor(`Pods \[2/2\]`, 10*time.Second)

	// The API server goes away: the header says so, the UI stays responsive,
	// and it recovers by itself when the server is back.
	c.StopAPIServer(t)
	s.WaitFor(`disconnected since \d\d:\d\d:\d\d`, 90*time.Second)
	s.SendKeys("Escape") // back to sandboxes: still answers keys while disconnected
	screen = s.WaitFor(`Sandboxes \[`, 10*time.Second)
	if strings.Contains(screen, "IP_TAKEN→") {
		t.Errorf("a verdict is still shown while disconnected:\n%s", screen)
	}
	c.StartAPIServer(t)
	s.WaitForGone(`disconnected since`, 90*time.Second)
	s.WaitFor(`synced`, 30*time.Second)

	s.SendKeys("q")
	if status, screen := s.WaitExit(10 * time.Second); status != 0 {
		t.Errorf("sandscope exited %d on q:\n%s", status, screen)
	}
}

// waitOrExplain is WaitFor with a sentence that says what is probably wrong.
func waitOrExplain(t *testing.T, s *tmuxtest.Session, pattern string, timeout time.Duration, why string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var screen string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		screen = s.Capture()
		if exited, status := s.Exited(); exited && !re.MatchString(screen) {
			t.Fatalf("%s.\nsandscope exited with status %d; last screen:\n%s", why, status, screen)
		}
		return re.MatchString(screen), nil
	})
	if err != nil {
		t.Fatalf("%s.\nlast screen:\n%s", why, screen)
	}
}

// TestTUIPodRecreated: the controller re-created a sandbox's Pod under the
// same name before sandscope started, so no UID change was ever seen; the
// detail view reads the sandbox's Events and shows the re-creation the two
// SuccessfulCreate Events claim.
func TestTUIPodRecreated(t *testing.T) {
	needTmux(t)
	c, ns := testcluster.GetWithNamespace(t)
	ctl, kl := c.Controller(t), c.Kubelet(t)
	sandboxWithPod(t, c, ns, "again")
	bsbx := ctl.Get(kube.BatchSandboxGVR, ns, "again")
	ctl.RecordPodCreated(ns, bsbx, "again-0")
	old := kl.GetPod(ns, "again-0")
	kl.ForceDelete(ns, "again-0")
	p := old.DeepCopy()
	p.ResourceVersion, p.UID, p.CreationTimestamp, p.Status = "", "", metav1.Time{}, corev1.PodStatus{}
	kl.CreatePod(ns, p)
	ctl.RecordPodCreated(ns, bsbx, "again-0")
	kl.SetRunning(ns, "again-0", sharedIP)

	s := startSandscope(t, 200, 50, "--kubeconfig", c.Kubeconfig, "-n", ns)
	waitOrExplain(t, s, `again\s+bsbx`, 30*time.Second, "the sandbox never showed")
	s.SendKeys("d")
	screen := s.WaitFor(`RE-CREATION`, 20*time.Second)
	t.Logf("detail view:\n%s", screen)
	if !strings.Contains(screen, "POD_RECREATED") || !strings.Contains(screen, "created 2 times under the same name (claimed by SuccessfulCreate Events)") {
		t.Errorf("detail lacks the re-creation:\n%s", screen)
	}
	s.SendKeys("q")
}

// TestTUIManyContexts runs the binary over a kubeconfig holding two test
// clusters' contexts: one table of both fleets with a CONTEXT column and
// each context's state in the header. The second cluster's API server is
// stopped mid-session: its rows turn UNKNOWN and the header says since
// when, while a sandbox added to the first cluster appears. :ctx shows one
// context, :ctx all both again, and the second recovers by itself.
func TestTUIManyContexts(t *testing.T) {
	needTmux(t)
	east := testcluster.Get(t)
	west := testcluster.Start(t, testcluster.Options{})
	ns := east.Namespace(t)
	if _, err := west.Kube.CoreV1().Namespaces().Create(testcluster.Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	east.RunningSandbox(t, ns, "sbx-east", "10.9.1.1")
	west.RunningSandbox(t, ns, "sbx-west", "10.9.1.1")
	kubeconfig := testcluster.Kubeconfig(t, []string{"east", "west"}, east, west)

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
	s.WaitFor(`west disconnected since \d\d:\d\d:\d\d`, 60*time.Second)
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
