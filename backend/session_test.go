package backend

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/ui"
)

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
func demoSession(t *testing.T) (*session, *Conn) {
	t.Helper()
	ctx := t.Context()
	// Image checks on: in the demo the simulation answers them.
	checks := imageconfig.New(imageconfig.Options{})
	e := New(Options{Kube: kube.NewConfigFlags(), Demo: &demo.Options{Seed: 4}, ImageChecks: checks})
	conn, err := e.Context("").Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(ctx, e, TUIOptions{})
	s.start(conn, "")
	return s, conn
}

// TestDemoSessionShell is the TUI's `s` on the demo: the session's shell
// runs the simulated shell in a running sandbox and refuses an IP_TAKEN one
// before anything starts.
func TestDemoSessionShell(t *testing.T) {
	s, _ := demoSession(t)
	defer s.stop()
	var running, taken *model.Sandbox
	for deadline := time.Now().Add(30 * time.Second); (running == nil || taken == nil) && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, sb := range s.Snapshot().Sandboxes() {
			sl := sb.PrimarySlot()
			switch {
			case sl == nil || sl.Pod == nil:
			case sl.Identity == model.IdentityOK && sb.Engine() == model.EngineBatchSandbox && len(sb.Notices) == 0 && running == nil:
				running = sb
			case sl.Identity == model.IdentityIPTaken && taken == nil:
				taken = sb
			}
		}
	}
	if running == nil || taken == nil {
		t.Fatalf("no OK and IP_TAKEN sandboxes in the demo (ok=%v taken=%v)", running != nil, taken != nil)
	}

	sh, err := s.backend().Shell(running)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sh.SetStdin(strings.NewReader("hostname\nexit\n"))
	sh.SetStdout(&out)
	sh.SetStderr(&out)
	pod := running.PrimarySlot().Pod.Name
	if err := sh.Run(); err != nil || !strings.Contains(out.String(), "root@"+pod+":/workspace# hostname\r\n"+pod+"\r\n") {
		t.Errorf("shell in %s: %v, terminal %q", running.Key, err, out.String())
	}

	sh, err = s.backend().Shell(taken)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	sh.SetStdin(strings.NewReader("hostname\n"))
	sh.SetStdout(&out)
	sh.SetStderr(&out)
	var e *refusal.Error
	if err := sh.Run(); !errors.As(err, &e) || e.Code != execute.CodeIPTaken || e.Executed != refusal.ExecutedNo || out.Len() != 0 {
		t.Errorf("shell into IP_TAKEN %s: %v, terminal %q; want an IP_TAKEN refusal and nothing on the terminal", taken.Key, e, out.String())
	}
}
