package kubelettest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// LogLine is one line of a container's log as the runtime keeps it: the
// time it was written and its text, without the newline.
type LogLine struct {
	Time time.Time
	Text string
}

// LogRequest is one read of a container's log that reached the node.
type LogRequest struct {
	Namespace, Pod, UID, Container string
	Previous                       bool
}

// LogFunc returns a container's log lines, oldest first. An error is
// answered as the kubelet answers a container it cannot read yet: 400 with
// the error's text (e.g. "container "sandbox" in pod "p" is waiting to
// start: PodInitializing").
type LogFunc func(ctx context.Context, req LogRequest) ([]LogLine, error)

// NoLogs is the default LogFunc: every container's log is empty.
func NoLogs(context.Context, LogRequest) ([]LogLine, error) { return nil, nil }

// serveLogs answers GET /containerLogs/{ns}/{pod}/{container} as the
// kubelet's getContainerLogs does, for the options the API server passes
// on from pods/log: tailLines, sinceSeconds or sinceTime, timestamps
// (each line prefixed with its RFC3339Nano time), previous, and follow,
// which keeps the response open after the lines until the reader leaves.
// limitBytes and the stream selection are not played.
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since time.Time
	if v := q.Get("sinceSeconds"); v != "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs < 1 {
			http.Error(w, fmt.Sprintf("sinceSeconds %q: must be a positive integer", v), http.StatusBadRequest)
			return
		}
		since = time.Now().Add(-time.Duration(secs) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			http.Error(w, fmt.Sprintf("sinceTime %q: %v", v, err), http.StatusBadRequest)
			return
		}
		since = t
	}
	tail := int64(-1)
	if v := q.Get("tailLines"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			http.Error(w, fmt.Sprintf("tailLines %q: must be a non-negative integer", v), http.StatusBadRequest)
			return
		}
		tail = n
	}
	ns, pod, uid, ok := s.lookup(w, r)
	if !ok {
		return
	}
	lines, err := s.cfg.Logs(r.Context(), LogRequest{Namespace: ns, Pod: pod, UID: uid,
		Container: r.PathValue("container"), Previous: q.Get("previous") == "true"})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if tail >= 0 && int64(len(lines)) > tail {
		lines = lines[int64(len(lines))-tail:]
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	for _, l := range lines {
		if l.Time.Before(since) {
			continue
		}
		if q.Get("timestamps") == "true" {
			fmt.Fprintf(w, "%s %s\n", l.Time.UTC().Format(time.RFC3339Nano), l.Text)
		} else {
			fmt.Fprintf(w, "%s\n", l.Text)
		}
	}
	if q.Get("follow") == "true" {
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
}
