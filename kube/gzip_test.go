package kube

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// The watcher's transport asks for gzip and hands back the body decoded,
// as net/http does when it asks itself; a caller that chose an encoding
// gets the body as sent.
func TestGzipTransport(t *testing.T) {
	t.Parallel()
	const body = `{"type":"ADDED","object":{"metadata":{"name":"sbx-a"}}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			_, _ = io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, body)
		_ = zw.Close()
	}))
	defer srv.Close()
	// net/http's own gzip off, so that a body it would decode shows.
	client := &http.Client{Transport: gzipTransport{next: &http.Transport{DisableCompression: true}}}

	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != body || !resp.Uncompressed || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("body %q, uncompressed %v, Content-Encoding %q; want the decoded body, marked uncompressed",
			got, resp.Uncompressed, resp.Header.Get("Content-Encoding"))
	}

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, err := gzip.NewReader(bytes.NewReader(raw)); err != nil || resp.Uncompressed {
		t.Errorf("a caller that asked for gzip got %q (uncompressed %v); want the gzipped bytes", raw, resp.Uncompressed)
	}
	if req.Header.Get("Accept-Encoding") != "gzip" || len(req.Header) != 1 {
		t.Errorf("the caller's request was changed: %v", req.Header)
	}
}

// A watch through the transport, over HTTP/2 as the API server speaks it:
// each event is readable as soon as it arrives, the decoder never waiting
// for bytes the server has not sent (the second event is sent only once the
// first was read: a decoder that read ahead would wait forever).
func TestGzipTransportStreamsAWatch(t *testing.T) {
	t.Parallel()
	const first, second = `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n", `{"type":"DELETED","object":{"metadata":{"name":"a"}}}` + "\n"
	firstRead := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			http.Error(w, "gzip was not asked for", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, first)
		_ = zw.Flush()
		w.(http.Flusher).Flush()
		select {
		case <-firstRead:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(zw, second)
		_ = zw.Close()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := &http.Client{Transport: gzipTransport{next: srv.Client().Transport}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang, not a timing
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", resp.Proto)
	}
	r := bufio.NewReader(resp.Body)
	got, err := r.ReadString('\n')
	if err != nil || got != first {
		t.Fatalf("first event %q, %v; want %q", got, err, first)
	}
	close(firstRead)
	got, err = r.ReadString('\n')
	if err != nil || got != second {
		t.Fatalf("second event %q, %v; want %q", got, err, second)
	}
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("after the last event: %q, %v", rest, err)
	}
}

// An error response is decoded like any other body and keeps its status;
// a body the server did not gzip is handed on as it came.
func TestGzipTransportErrorAndPlainBodies(t *testing.T) {
	t.Parallel()
	const status = `{"kind":"Status","status":"Failure","reason":"Expired","code":410}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/plain" {
			w.Header().Set("Content-Length", strconv.Itoa(len(status)))
			_, _ = io.WriteString(w, status)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusGone)
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, status)
		_ = zw.Close()
	}))
	defer srv.Close()
	client := &http.Client{Transport: gzipTransport{next: &http.Transport{DisableCompression: true}}}
	for path, want := range map[string]int{"/gone": http.StatusGone, "/plain": http.StatusOK} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != status || resp.StatusCode != want {
			t.Errorf("%s: %d %q (%v); want %d %q", path, resp.StatusCode, body, err, want, status)
		}
		if path == "/plain" && (resp.Uncompressed || resp.ContentLength != int64(len(status))) {
			t.Errorf("%s: uncompressed %v, length %d; want the response as sent", path, resp.Uncompressed, resp.ContentLength)
		}
	}
}
