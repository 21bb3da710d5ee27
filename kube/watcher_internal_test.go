package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
)

type fakeReader func(ctx context.Context, ref string) (model.ImageConfig, error)

func (f fakeReader) Read(ctx context.Context, ref string) (model.ImageConfig, error) {
	return f(ctx, ref)
}

func TestWatcherReadImageConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		cfg     model.ImageConfig
		err     error
		wantErr string // substring of the recorded Err; "" = a successful read
		wantEP  []string
	}{
		{name: "entrypoint", cfg: model.ImageConfig{Digest: "sha256:1", Entrypoint: []string{"/srv"}}, wantEP: []string{"/srv"}},
		{name: "no entrypoint is an answer, not a failure",
			cfg: model.ImageConfig{Digest: "sha256:2", Err: "image has neither ENTRYPOINT nor CMD"},
			err: &imageconfig.Error{Kind: imageconfig.NoEntrypoint, Ref: "r"}},
		{name: "unreachable", err: &imageconfig.Error{Kind: imageconfig.Unreachable, Host: "reg:5000", Err: errors.New("connection refused")},
			wantErr: "registry reg:5000 unreachable: connection refused"},
		{name: "any other error", err: errors.New("boom"), wantErr: "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fakeReader(func(context.Context, string) (model.ImageConfig, error) { return tc.cfg, tc.err })
			res := readImageConfig(context.Background(), r, "reg:5000/img:v1")
			if res.canceled || res.cfg.Ref != "reg:5000/img:v1" {
				t.Fatalf("result %+v: want the ref it was asked for, not canceled", res)
			}
			if tc.wantErr == "" && res.cfg.Err != "" || tc.wantErr != "" && !strings.Contains(res.cfg.Err, tc.wantErr) {
				t.Errorf("Err = %q, want %q", res.cfg.Err, tc.wantErr)
			}
			if strings.Join(res.cfg.Entrypoint, " ") != strings.Join(tc.wantEP, " ") {
				t.Errorf("Entrypoint = %v, want %v", res.cfg.Entrypoint, tc.wantEP)
			}
		})
	}
}

func TestWatcherReadImageConfigCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r := fakeReader(func(ctx context.Context, _ string) (model.ImageConfig, error) {
		cancel()
		return model.ImageConfig{}, &imageconfig.Error{Kind: imageconfig.Canceled}
	})
	if res := readImageConfig(ctx, r, "img"); !res.canceled {
		t.Errorf("a read cut by the watcher stopping must not be recorded: %+v", res)
	}
}

func TestWatcherHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 17, 24, 44, 0, time.UTC)
	changes := 0
	h := newAPIHealth(func() time.Time { return now }, func() { changes++ })

	h.answered("pods", 200, false)
	if st := h.state(); st.disconnectedSince != nil || !st.lastContact.Equal(now) {
		t.Fatalf("state after an answer = %+v", st)
	}
	lost := now.Add(time.Second)
	now = lost
	h.fail("pods")
	now = now.Add(time.Second)
	h.fail("batchsandboxes")
	if st := h.state(); st.disconnectedSince == nil || !st.disconnectedSince.Equal(lost) || changes != 1 {
		t.Fatalf("after two failures: since %v (want %v), %d change signals (want 1)", st.disconnectedSince, lost, changes)
	}
	h.answered("version", 200, false) // the server answers a probe...
	h.answered("pods", 200, false)    // ...and the Pod informer is back...
	if h.connected() {
		t.Fatalf("connected while the batchsandboxes informer has not come back")
	}
	h.answered("batchsandboxes", http.StatusServiceUnavailable, false) // a proxy's 503 is no answer
	if h.connected() {
		t.Fatalf("a 503 counted as the server being back")
	}
	h.answered("batchsandboxes", http.StatusInternalServerError, false) // the server, without its storage
	if h.connected() {
		t.Fatalf("a 500 counted as the informer being back")
	}
	h.answered("batchsandboxes", 200, false)
	if !h.connected() || changes != 2 {
		t.Fatalf("connected=%v after every informer answered, %d change signals (want 2)", h.connected(), changes)
	}

	h.answered("batchsandboxes", 403, false)
	h.deny("batchsandboxes", denial{message: "list batchsandboxes: forbidden", forbidden: true})
	h.deny("sandboxes", denial{message: "list sandboxes: not served (CRD removed?)"})
	st := h.state()
	if len(st.forbidden) != 1 || len(st.unavailable) != 1 || !h.isDenied("batchsandboxes") {
		t.Fatalf("denials = %+v", st)
	}
	h.answered("batchsandboxes", 403, false) // still denied
	if !h.isDenied("batchsandboxes") {
		t.Fatalf("a 403 cleared the denial")
	}
	h.answered("batchsandboxes", 200, false) // access granted later
	if h.isDenied("batchsandboxes") {
		t.Fatalf("a 200 did not clear the denial")
	}

	// Listing allowed, watching not: the informer's lists between its
	// forbidden watches succeed, and must not make the denial come and go.
	h.deny("pools", denial{message: "watch pools.sandbox.opensandbox.io in all namespaces", forbidden: true, watchOnly: true})
	h.answered("pools", 200, false)
	if !h.isDenied("pools") {
		t.Fatalf("a list's 200 cleared a denied watch")
	}
	h.answered("pools", 200, true)
	if h.isDenied("pools") {
		t.Fatalf("an answered watch did not clear the denied watch")
	}
}

// A watch stream the informer stops itself (closing the body) is not a lost
// connection; one the server breaks is.
func TestWatcherHealthWatchBody(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(200)
		rw.(http.Flusher).Flush()
		if r.URL.Query().Get("break") == "1" {
			// Hijack and drop the connection mid-stream.
			conn, _, _ := rw.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		_, _ = rw.Write([]byte("{}\n"))
		rw.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)

	var changed atomic.Int32
	h := newAPIHealth(time.Now, func() { changed.Add(1) })
	client := &http.Client{Transport: h.wrap(http.DefaultTransport)}

	resp, err := client.Get(srv.URL + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	// Close once the stream flows: the reader is then in (or about to start)
	// a Read that the close ends with an error.
	reading, done := make(chan struct{}), make(chan struct{})
	go func() {
		first := make([]byte, 1)
		if _, err := resp.Body.Read(first); err != nil {
			t.Errorf("reading the watch stream: %v", err)
		}
		close(reading)
		_, _ = io.Copy(io.Discard, resp.Body)
		close(done)
	}()
	<-reading
	resp.Body.Close()
	<-done
	if !h.connected() {
		t.Fatalf("closing a watch ourselves marked the connection lost")
	}

	resp, err = client.Get(srv.URL + "/api/v1/pods?watch=true&break=1")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if h.connected() {
		t.Fatalf("a watch stream broken by the server did not mark the connection lost")
	}
}
