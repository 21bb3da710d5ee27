package sweep_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// A context whose API server went away after it connected: a server that
// refuses connections is not there, and the sweep says so within seconds
// instead of waiting out its timeout; a server that accepts connections and
// does not answer (frozen) may only be slow, and gets the whole timeout.
func TestSweepServerGoneAfterConnect(t *testing.T) {
	f := newFleet(t)
	f.sandbox("alive", "python:3.12-slim", userCommand, nil)
	f.running("alive", "10.3.1.1", "Succeed")
	for _, tc := range []struct {
		name      string
		lose      func(testing.TB)
		timeout   time.Duration
		wantFast  bool
		wantError string
	}{
		{"refusing", f.c.StopAPIServer, 30 * time.Second, true, "refuses connections"},
		{"frozen", f.c.FreezeAPIServer, 4 * time.Second, false, "did not sync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clients, err := kube.NewClients(f.c.Config, f.ns)
			if err != nil {
				t.Fatal(err)
			}
			tc.lose(t)
			start := time.Now()
			rep := sweep.Sweep(context.Background(), []sweep.Target{sweep.ClientsTarget("gone", clients)},
				sweep.Options{Namespace: f.ns, Timeout: tc.timeout})
			took := time.Since(start)
			t.Logf("sweep of a %s server took %s: %+v", tc.name, took.Round(time.Millisecond), rep.Contexts)
			if !rep.Unreachable() || len(rep.Contexts) != 1 {
				t.Fatalf("report: %+v, want the one context unreachable", rep.Contexts)
			}
			if msg := rep.Contexts[0].Error; !strings.Contains(msg, tc.wantError) {
				t.Errorf("error %q does not say %q", msg, tc.wantError)
			}
			if u := findings(rep.Findings, model.CodeContextUnreachable); len(u) != 1 {
				t.Errorf("CONTEXT_UNREACHABLE findings: %+v", u)
			}
			switch {
			case tc.wantFast && took > tc.timeout/3:
				t.Errorf("a refusing server was given up on after %s (timeout %s)", took, tc.timeout)
			case !tc.wantFast && took < tc.timeout:
				t.Errorf("a frozen server was called unreachable after %s, before the %s timeout", took, tc.timeout)
			}
		})
	}
}
