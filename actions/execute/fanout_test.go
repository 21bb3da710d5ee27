package execute_test

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
)

// One command over every sandbox a selector picks: each target is checked
// on its own, a refused one does not stop the others, one JSON line each,
// and the exit code says some were refused.
func TestCLIExecFanOut(t *testing.T) {
	e := newEnv(t, nil)
	labelled := func(name string) {
		p := testcluster.SandboxPod(name, "")
		p.Labels["team"] = "rl"
		e.Kubelet.CreatePod(e.NS, p)
		e.Kubelet.Schedule(e.NS, name, e.Node.Name)
	}
	for _, n := range []string{"fan-a", "fan-b"} {
		labelled(n)
		e.startDaemon(e.Kubelet.SetRunning(e.NS, n, testcluster.PodIP()))
	}
	// fan-c died and its address went to a Pod of another team.
	ip := testcluster.PodIP()
	labelled("fan-c")
	e.kill(e.Kubelet.SetRunning(e.NS, "fan-c", ip))
	e.start("stranger", ip)
	// Not selected.
	e.start("fan-other", testcluster.PodIP())

	r := runCLI(t, e, "", "--selector", "team=rl", "--max-parallel", "2", "-o", "jsonl", "--", "sh", "-c", "echo hi")
	if r.Code != 125 {
		t.Fatalf("exit %d, want 125 (one refused); stderr %s", r.Code, r.Stderr)
	}
	got := clitest.JSONLinesBySandbox(t, r.Stdout)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3: %s", len(got), r.Stdout)
	}
	for _, n := range []string{"fan-a", "fan-b"} {
		m := got[n]
		if m == nil || m["executed"] != "yes" || m["exitCode"] != float64(0) || !strings.Contains(m["stdout"].(string), "hi") || m["uid"] == "" {
			t.Errorf("%s: %v", n, m)
		}
	}
	c := got["fan-c"]
	if c == nil || c["executed"] != "no" || c["exitCode"] != nil {
		t.Fatalf("fan-c: %v", c)
	}
	if code := c["error"].(map[string]any)["code"]; code != "IP_TAKEN" && code != "POD_DEAD" {
		t.Errorf("fan-c refused with %v", code)
	}
	if n := e.execRequests("stranger") + int(e.daemon(e.Kubelet.GetPod(e.NS, "stranger")).Requests()); n != 0 {
		t.Errorf("%d requests reached the stranger", n)
	}

	// Usage: a target and a selector together.
	if r := runCLI(t, e, "", "fan-a", "--all-of-pool", "warm", "--", "true"); r.Code != 2 {
		t.Errorf("target with --all-of-pool: exit %d", r.Code)
	}
}
