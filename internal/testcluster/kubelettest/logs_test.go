package kubelettest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

// The log endpoint answers the options pods/log passes on as the kubelet
// does: tail, a window of time, timestamps, and a container it cannot read
// yet as a 400 carrying the reason.
func TestContainerLogs(t *testing.T) {
	now := time.Now()
	lines := []LogLine{{now.Add(-time.Hour), "old"}, {now.Add(-10 * time.Second), "recent"}, {now.Add(-time.Second), "last"}}
	s, err := Start(Config{Logs: func(_ context.Context, req LogRequest) ([]LogLine, error) {
		if req.Container != "main" {
			return nil, errors.New("waiting to start: PodInitializing")
		}
		return lines, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		query, want string
	}{
		{"", "old\nrecent\nlast\n"},
		{"?tailLines=2", "recent\nlast\n"},
		{"?sinceSeconds=60", "recent\nlast\n"},
		{"?sinceSeconds=60&tailLines=1", "last\n"},
		{"?sinceSeconds=5&timestamps=true", lines[2].Time.UTC().Format(time.RFC3339Nano) + " last\n"},
	} {
		if code, body := get("/containerLogs/ns/p/main" + tc.query); code != http.StatusOK || body != tc.want {
			t.Errorf("%q: %d %q, want 200 %q", tc.query, code, body, tc.want)
		}
	}
	if code, body := get("/containerLogs/ns/p/init"); code != http.StatusBadRequest || body != "waiting to start: PodInitializing\n" {
		t.Errorf("a container that cannot be read: %d %q", code, body)
	}
	if code, _ := get("/containerLogs/ns/p/main?sinceSeconds=x"); code != http.StatusBadRequest {
		t.Errorf("a bad sinceSeconds: %d, want 400", code)
	}
}
