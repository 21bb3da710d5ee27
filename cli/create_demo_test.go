package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/backend"
	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/ui"
)

// createDemo runs `sandscope --demo create ... -o json` through the real
// entry point and returns its exit code and JSON lines.
func createDemo(t *testing.T, args ...string) (int, []map[string]any, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"--demo", "create", "-o", "json", "--wait-timeout", "1m"}, args...), strings.NewReader(""), &out, &errOut)
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	return code, lines, errOut.String()
}

func TestCreateDemoCommand(t *testing.T) {
	t.Run("ready", func(t *testing.T) {
		code, lines, stderr := createDemo(t, "--image", sim.ImageScorer)
		if code != 0 || len(lines) < 2 {
			t.Fatalf("exit %d, %d JSON lines, stderr %q; want 0 and the stages then the result", code, len(lines), stderr)
		}
		if first := lines[0]; first["stage"] != "Queued" {
			t.Errorf("first line %v, want the Queued stage", first)
		}
		res := lines[len(lines)-1]
		ep, _ := res["entrypoint"].(map[string]any)
		if res["stage"] != "Ready" || ep["source"] != "registry" || res["sandbox"] == "" || res["stages"] == nil {
			t.Errorf("result %v; want stage Ready with the entrypoint from the registry", res)
		}
	})
	t.Run("refused", func(t *testing.T) {
		code, lines, stderr := createDemo(t, "--image", sim.ImageUnreachable)
		if code != 2 || len(lines) != 1 {
			t.Fatalf("exit %d, lines %v, stderr %q; want 2 and one error object", code, lines, stderr)
		}
		e, _ := lines[0]["error"].(map[string]any)
		if e["code"] != "ENTRYPOINT_UNRESOLVED" || e["executed"] != "no" || e["retryable"] != true {
			t.Errorf("error object %v", e)
		}
	})
	t.Run("namespace outside the demo fleet", func(t *testing.T) {
		code, lines, _ := createDemo(t, "-n", "not-in-the-demo", "--image", sim.ImageScorer)
		if e, _ := lines[0]["error"].(map[string]any); code != 2 || e["code"] != "NOT_FOUND" || e["executed"] != "no" {
			t.Errorf("exit %d, lines %v; want 2 and NOT_FOUND, executed no", code, lines)
		}
	})
}

// TestDemoSessionCreates is the TUI's `c` form on the demo: the session
// offers a create backed by the simulated registry and exec daemons.
func TestDemoSessionCreates(t *testing.T) {
	ctx := t.Context()
	s, d := demoSession(t)
	defer s.stop()
	var stages []string
	key, err := s.backend().Create(ctx, ui.CreateRequest{Image: sim.ImageTrainer}, func(s ui.CreateStage) { stages = append(stages, s.Line) })
	if err != nil {
		t.Fatalf("create from the demo TUI: %v (stages %q)", err, stages)
	}
	if !strings.HasPrefix(key, "bsbx/"+d.Clients.Namespace+"/") || len(stages) == 0 || !strings.Contains(stages[len(stages)-1], "Ready") {
		t.Errorf("key %q, stages %q; want a BatchSandbox key and a last stage Ready", key, stages)
	}
}

// demoSession is the TUI's session on the demo fleet (seed 4), started and
// connected; the fleet ends with the test, the session with stop.
func demoSession(t *testing.T) (*session, *backend.Conn) {
	t.Helper()
	ctx := t.Context()
	g := &Globals{Kube: kube.NewConfigFlags(), Demo: true}
	// Image checks on: in the demo the simulation answers them.
	checks := imageconfig.New(imageconfig.Options{})
	conn, err := backend.New(backend.Options{Kube: g.Kube, Demo: &demo.Options{Seed: 4}, ImageChecks: checks}).Context("").Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(ctx, g)
	s.start(conn, "")
	return s, conn
}
