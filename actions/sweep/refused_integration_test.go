package sweep_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// A context whose API server goes away during the sweep, while the fleet
// is listed or while discovery (which runs beside the first list) still
// asks: a server that refuses connections is not there, and the sweep says
// so within seconds instead of waiting out its timeout; a server that
// accepts connections and does not answer (frozen) may only be slow, and
// gets the whole timeout.
func TestSweepServerGoneAfterConnect(t *testing.T) {
	f := newFleet(t)
	f.sandbox("alive", "python:3.12-slim", userCommand, nil)
	f.running("alive", "10.3.1.1", "Succeed")
	for _, tc := range []struct {
		name      string
		held      string // the path whose first request waits for the server to go
		lose      func(testing.TB)
		timeout   time.Duration
		wantFast  bool
		wantError string
		// orSlow: the Pods' list, which runs beside discovery, may have
		// come in before the server froze; the sweep then says it is slow,
		// with what it saw, and not that the server is unreachable.
		orSlow bool
	}{
		{"refusing", "/pods", f.c.StopAPIServer, 30 * time.Second, true, "refuses connections", false},
		{"refusing during discovery", "/apis", f.c.StopAPIServer, 30 * time.Second, true, "refuses connections", false},
		{"frozen", "/pods", f.c.FreezeAPIServer, 4 * time.Second, false, "did not sync", false},
		{"frozen during discovery", "/apis", f.c.FreezeAPIServer, 4 * time.Second, false, "did not sync", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first request for the held path waits until the server is
			// gone, then goes out to it: the sweep has connected, and loses
			// the server while it lists or discovers.
			hold := &holdFirst{suffix: tc.held, reached: make(chan struct{}), release: make(chan struct{})}
			cfg := rest.CopyConfig(f.c.Config)
			cfg.Wrap(hold.wrap)
			clients, err := kube.NewClients(cfg, f.ns)
			if err != nil {
				t.Fatal(err)
			}
			var rep sweep.Report
			var took time.Duration
			done := make(chan struct{})
			go func() {
				defer close(done)
				start := time.Now()
				rep = sweep.Sweep(context.Background(), []sweep.Target{sweep.ClientsTarget("gone", clients)},
					sweep.Options{Namespace: f.ns, Timeout: tc.timeout})
				took = time.Since(start)
			}()
			select {
			case <-hold.reached:
			case <-done:
				t.Fatalf("the sweep ended before asking for %s: %+v", tc.held, rep.Contexts)
			}
			lost := time.Now()
			tc.lose(t)
			close(hold.release)
			<-done
			t.Logf("sweep of a %s server took %s, %s after the server was lost: %+v", tc.name,
				took.Round(time.Millisecond), time.Since(lost).Round(time.Millisecond), rep.Contexts)
			switch {
			case len(rep.Contexts) != 1:
				t.Fatalf("report: %+v, want one context", rep.Contexts)
			case tc.orSlow && rep.Contexts[0].Reachable:
				// It must not read as whole: discovery never answered, so
				// no engine's sandbox was asked for, and the total is unknown.
				if c := rep.Contexts[0]; !c.Partial || !strings.Contains(c.Slow, "so far") ||
					!strings.Contains(c.Slow, "discovery had not answered") || c.Syncing == nil || c.Syncing.Total != 0 {
					t.Errorf("a reachable context not slow, partial and short of discovery: %+v (syncing %+v)", c, c.Syncing)
				}
			default:
				if !rep.Unreachable() {
					t.Fatalf("report: %+v, want the one context unreachable", rep.Contexts)
				}
				if msg := rep.Contexts[0].Error; !strings.Contains(msg, tc.wantError) {
					t.Errorf("error %q does not say %q", msg, tc.wantError)
				}
				if u := findings(rep.Findings, model.CodeContextUnreachable); len(u) != 1 {
					t.Errorf("CONTEXT_UNREACHABLE findings: %+v", u)
				}
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

// holdFirst holds the first request for a path ending in suffix until
// release is closed, and says when it is held.
type holdFirst struct {
	suffix           string
	once             sync.Once
	reached, release chan struct{}
}

func (h *holdFirst) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, h.suffix) {
			first := false
			h.once.Do(func() { first = true })
			if first {
				close(h.reached)
				<-h.release
			}
		}
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
