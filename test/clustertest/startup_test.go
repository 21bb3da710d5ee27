package clustertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/backend"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

// Over a real network each request the TUI waits for before it asks for
// the fleet costs a round trip. The connection check and discovery go out
// together, in as few rounds one after the other as client-go's
// aggregated discovery takes (/api, then /apis); the Pods, which need no
// discovery, are asked for as soon as the check answered, beside /apis;
// the engines' lists in the round after discovery's last. A front that
// holds every request back for a while before passing it to the real API
// server sorts the requests into rounds: a request is in the round after
// the latest one whose answer it could have waited for.
func TestTUIStartsListingAfterOneRequestRound(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	front := newRoundFront(t, c.Config)
	flags := kube.NewConfigFlags()
	flags.KubeConfig = front.kubeconfig(t, ns)

	ctx, cancel := context.WithCancel(testcluster.Context(t))
	defer cancel()
	tui, err := backend.New(backend.Options{Kube: flags}).OpenTUI(ctx, nil, backend.TUIOptions{})
	if err != nil {
		t.Fatalf("OpenTUI through the front: %v", err)
	}
	defer tui.Close()
	checkRequestRounds(t, front, ns)
}

// The one-shot commands check the connection beside discovery too, as the
// TUI does: get and sweep then list as it does; exec and cp, which read
// their target by name, have their discovery's first request in the first
// round beside the check.
func TestOneShotCommandsDiscoverBesideTheCheck(t *testing.T) {
	f := newFleet(t)
	for _, args := range [][]string{
		{"get", "sandboxes"},
		{"sweep"},
		{"exec", "nosuch", "--", "true"},
		{"cp", "nosuch:/etc/hostname", filepath.Join(t.TempDir(), "hostname")},
	} {
		t.Run(args[0], func(t *testing.T) {
			front := newRoundFront(t, f.c.Config)
			_, errOut, code := runWith(front.kubeconfig(t, f.ns), args...)
			t.Logf("%v: exit %d: %s", args, code, errOut)
			if args[0] == "get" || args[0] == "sweep" {
				checkRequestRounds(t, front, f.ns)
				return
			}
			reqs := front.waitFor(t, "/version", "/api", "/apis")
			rounds := requestRounds(reqs)
			for i, r := range reqs {
				if (r.path == "/version" || r.path == "/api") && rounds[i] != 1 {
					t.Errorf("%s in round %d, want 1 (the check beside discovery):\n%s", r.path, rounds[i], describeRounds(reqs, rounds))
				}
			}
		})
	}
}

// checkRequestRounds waits for the lists of the Pods and the BatchSandboxes
// (whose CRD discovery must find) in ns to reach the front, and checks the
// rounds of what came before them.
func checkRequestRounds(t *testing.T, front *roundFront, ns string) {
	t.Helper()
	podsPath := "/api/v1/namespaces/" + ns + "/pods"
	batchPath := "/apis/sandbox.opensandbox.io/v1alpha1/namespaces/" + ns + "/batchsandboxes"
	reqs := front.waitFor(t, podsPath, batchPath)
	rounds := requestRounds(reqs)
	t.Logf("requests:\n%s", describeRounds(reqs, rounds))
	first := slices.IndexFunc(reqs, func(r frontRequest) bool { return r.list() })
	if before := rounds[first] - 1; before > 1 {
		t.Errorf("%d request rounds before the first list, want at most 1 (the check beside /api):\n%s", before, describeRounds(reqs, rounds))
	}
	if reqs[first].path != podsPath {
		t.Errorf("first list %s, want the Pods':\n%s", reqs[first].path, describeRounds(reqs, rounds))
	}
	lastAsk := 0 // the round of the last request that is not a list: discovery's
	for i, r := range reqs {
		if r.list() {
			continue
		}
		lastAsk = max(lastAsk, rounds[i])
		if rounds[i] > rounds[first] {
			t.Errorf("%s asked for after the lists started: the lists waited for less than they could have:\n%s", r.path, describeRounds(reqs, rounds))
		}
	}
	batch := slices.IndexFunc(reqs, func(r frontRequest) bool { return r.path == batchPath })
	if rounds[batch] > lastAsk+1 {
		t.Errorf("BatchSandboxes asked for in round %d, want the round after discovery's last (%d):\n%s", rounds[batch], lastAsk+1, describeRounds(reqs, rounds))
	}
}

// roundFront is a plain-HTTP front to the API server that holds each
// request back for hold before it passes it on, and records when each
// arrived and when its answer ended.
type roundFront struct {
	srv  *httptest.Server
	hold time.Duration

	mu   sync.Mutex
	reqs []*frontRequest
}

type frontRequest struct {
	path, query string
	arrived     time.Time
	answered    time.Time // zero while the answer streams (a watch)
}

// list reports whether r reads objects rather than discovery or the version.
func (r frontRequest) list() bool {
	parts := strings.Split(strings.Trim(r.path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) > 2
	case "apis":
		return len(parts) > 3
	}
	return false
}

func newRoundFront(t *testing.T, cfg *rest.Config) *roundFront {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	// Long enough that requests a client sends together all arrive before
	// any is answered, on a machine busy with other work.
	f := &roundFront{hold: 300 * time.Millisecond}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
		Transport:     rt,
		FlushInterval: -1, // watches stream
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := &frontRequest{path: r.URL.Path, query: r.URL.RawQuery, arrived: time.Now()}
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		select {
		case <-time.After(f.hold):
		case <-r.Context().Done():
			return
		}
		proxy.ServeHTTP(w, r)
		f.mu.Lock()
		req.answered = time.Now()
		f.mu.Unlock()
	}))
	t.Cleanup(func() {
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
	return f
}

// kubeconfig is a kubeconfig whose context reaches the API server through
// the front, in namespace ns.
func (f *roundFront) kubeconfig(t *testing.T, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: front, cluster: {server: %q}}]\n"+
		"users: [{name: u, user: {}}]\ncontexts: [{name: front, context: {cluster: front, user: u, namespace: %q}}]\ncurrent-context: front\n",
		f.srv.URL, ns)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitFor waits until a request for each path arrived and returns the
// requests as they are then, in arrival order.
func (f *roundFront) waitFor(t *testing.T, paths ...string) []frontRequest {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		f.mu.Lock()
		reqs := make([]frontRequest, len(f.reqs))
		for i, r := range f.reqs {
			reqs[i] = *r
		}
		f.mu.Unlock()
		missing := slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
			return slices.ContainsFunc(reqs, func(r frontRequest) bool { return r.path == p })
		})
		if len(missing) == 0 {
			return reqs
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request for %v within a minute; requests:\n%s", missing, describeRounds(reqs, requestRounds(reqs)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requestRounds numbers each request's round: 1 for one that arrived
// before any answer ended, else one more than the latest round of the
// requests answered before it arrived.
func requestRounds(reqs []frontRequest) []int {
	rounds := make([]int, len(reqs))
	for i, r := range reqs {
		rounds[i] = 1
		for j, q := range reqs[:i] {
			if !q.answered.IsZero() && q.answered.Before(r.arrived) {
				rounds[i] = max(rounds[i], rounds[j]+1)
			}
		}
	}
	return rounds
}

func describeRounds(reqs []frontRequest, rounds []int) string {
	var b strings.Builder
	for i, r := range reqs {
		fmt.Fprintf(&b, "  round %d: %s?%s\n", rounds[i], r.path, r.query)
	}
	return b.String()
}
