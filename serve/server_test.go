package serve

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/kube"
)

// Before the fleet has synced: alive, not ready, no findings, and /metrics
// answers with the process metrics and nothing invented about the fleet.
func TestEndpointsBeforeSync(t *testing.T) {
	t.Parallel()
	s, err := New(&kube.Clients{}, Options{InsecurePlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for path, want := range map[string]int{
		"/healthz": http.StatusOK, "/readyz": http.StatusServiceUnavailable,
		"/findings": http.StatusServiceUnavailable, "/metrics": http.StatusOK,
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
		if path == "/metrics" {
			if !strings.Contains(b.String(), "go_goroutines") || !strings.Contains(b.String(), "process_") {
				t.Error("/metrics lacks the Go or process collector")
			}
			if strings.Contains(b.String(), "sandscope_identity") || strings.Contains(b.String(), "sandscope_fleet_score") {
				t.Error("/metrics reports the fleet before it synced")
			}
		}
	}
	resp, err := http.Post(srv.URL+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", resp.StatusCode)
	}
}

// serve's start-up, after which the load's garbage goes back to the OS,
// ends with the first analysis, not with the sync.
func TestWaitForFirstAnalysis(t *testing.T) {
	t.Parallel()
	s, err := New(&kube.Clients{}, Options{InsecurePlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.WaitForFirstAnalysis(ctx); err == nil {
		t.Fatal("returned before any analysis")
	}
	s.analysis.Store(&analysis{})
	if err := s.WaitForFirstAnalysis(context.Background()); err != nil {
		t.Fatalf("after the first analysis: %v", err)
	}
}
