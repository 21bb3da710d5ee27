package kube

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
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
