package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/demo"
)

// exec --demo finds its target as the README says: in any namespace
// without -n, and by the short id the TUI shows; one command over many
// sandboxes runs there too.
func TestDemoExecReachesWhatTheTUIShows(t *testing.T) {
	// Outside the demo's first namespace, so that finding it without -n is the point.
	ns, sandbox, pod := steadyDemoSandboxOutside(t, "sandboxes")
	for _, ref := range []string{sandbox, sandbox[:8]} {
		code, out, errOut := runArgs("sandscope", "--demo", "exec", ref, "--", "hostname")
		if code != 0 || out != pod+"\n" {
			t.Errorf("exec --demo %s (no -n; it is in %s): exit %d, stdout %q, stderr %q; want 0 and %s", ref, ns, code, out, errOut, pod)
		}
	}

	code, out, errOut := runArgs("sandscope", "--demo", "exec", "--selector", osv1.LabelSandboxID+"="+sandbox, "-o", "jsonl", "--", "hostname")
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("fan-out line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if code != 0 || len(lines) != 1 || lines[0]["pod"] != pod || lines[0]["stdout"] != pod+"\n" {
		t.Errorf("exec --demo --selector: exit %d, lines %v, stderr %q; want one line for %s", code, lines, errOut, pod)
	}
}

// explain restart works on the demo's liveness kill, found without -n,
// with the block start its business log gives.
func TestDemoExplainRestart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := d.Clients.Kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ns, pod string
	for _, e := range events.Items {
		// The example of the scenario (an agent Sandbox, never deleted); a
		// churned sandbox's may be gone by the time the command's own demo
		// has started.
		if e.Reason == "Killing" && strings.Contains(e.Message, "liveness") && strings.HasPrefix(e.InvolvedObject.Name, "agent-") {
			ns, pod = e.InvolvedObject.Namespace, e.InvolvedObject.Name
			break
		}
	}
	if pod == "" {
		t.Fatal("no liveness kill in the demo")
	}
	var block time.Time
	lines, _ := d.Sim.PodLog(ns, pod, true)
	for _, l := range lines {
		if strings.Contains(l.Text, "worker blocked") {
			block = l.At
		}
	}
	if block.IsZero() {
		t.Fatalf("the previous log of %s/%s does not say when it blocked: %v", ns, pod, lines)
	}
	code, out, errOut := runArgs("sandscope", "--demo", "explain", "restart", pod, "--block-start", block.UTC().Format(time.RFC3339Nano), "-o", "json")
	var rep struct {
		Namespace, Pod string
		Liveness       *struct{ FailureThreshold int32 }
		Recorded       []struct{ ExitCode int32 }
		Checks         []struct{ Verdict string }
	}
	if code != 0 {
		t.Fatalf("explain restart --demo %s: exit %d, stderr %q", pod, code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Namespace != ns || rep.Pod != pod || rep.Liveness == nil || len(rep.Recorded) == 0 || rep.Recorded[0].ExitCode != 137 ||
		len(rep.Checks) != 1 || rep.Checks[0].Verdict == "" {
		t.Errorf("explain restart --demo %s: %s", pod, out)
	}
}

// entrypoints works on the demo: the table lives in the simulated fleet
// and images resolve through its registry.
func TestDemoEntrypoints(t *testing.T) {
	code, out, errOut := runArgs("sandscope", "--demo", "entrypoints", "set", "registry.demo.local/sandbox/python:3.12", "--", "python3", "-m", "http.server")
	if code != 0 || !strings.Contains(out, "sha256:") || !strings.Contains(out, "→ python3 -m http.server") {
		t.Errorf("entrypoints set --demo: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, errOut := runArgs("sandscope", "--demo", "entrypoints", "ls"); code != 0 {
		t.Errorf("entrypoints ls --demo: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
