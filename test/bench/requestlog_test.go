package bench

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// requestLog records the HTTP/2 requests the relay carries, read from the
// plaintext between its two TLS connections: path, arrival time at the
// server's side, response status, encoding and body bytes as sent (DATA
// frame payloads: compressed when the response is).
type requestLog struct {
	mu    sync.Mutex
	reqs  []*loggedRequest
	conns int // connections seen: each gets the next number
}

type loggedRequest struct {
	method, path, query string
	conn                int       // the connection's number: which requests shared one, which waited for a new one
	dialed              time.Time // when the relay accepted that connection (the client's connect)
	at, end             time.Time // request arrival; the response's END_STREAM (zero while open)
	lastData            time.Time // the response's latest DATA frame
	status, encoding    string
	contentType         string
	bytes               int64 // response DATA payload
}

// reset forgets what was logged and returns the old entries.
func (l *requestLog) reset() []*loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.reqs
	l.reqs = nil
	return old
}

// snapshot copies the entries as they are now.
func (l *requestLog) snapshot() []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]loggedRequest, len(l.reqs))
	for i, r := range l.reqs {
		out[i] = *r
	}
	return out
}

// connSniffer parses one connection's two directions; its writers never
// fail, so a frame it cannot parse never disturbs the relay.
type connSniffer struct {
	log                 *requestLog
	id                  int
	accepted            time.Time
	requests, responses io.Writer
	pipes               []*io.PipeWriter
	wg                  sync.WaitGroup

	mu      sync.Mutex
	streams map[uint32]*loggedRequest
}

func (l *requestLog) conn(h2 bool, accepted time.Time) *connSniffer {
	l.mu.Lock()
	l.conns++
	s := &connSniffer{log: l, id: l.conns, accepted: accepted, streams: map[uint32]*loggedRequest{}}
	l.mu.Unlock()
	if !h2 { // HTTP/1.1 is not parsed: nothing here speaks it
		s.requests, s.responses = io.Discard, io.Discard
		return s
	}
	s.requests = s.parse(func(r io.Reader) error {
		br := bufio.NewReader(r)
		if _, err := io.ReadFull(br, make([]byte, len(http2.ClientPreface))); err != nil {
			return err
		}
		return s.frames(br, true)
	})
	s.responses = s.parse(func(r io.Reader) error { return s.frames(bufio.NewReader(r), false) })
	return s
}

// parse runs fn on a pipe and returns the pipe's never-failing writer.
func (s *connSniffer) parse(fn func(io.Reader) error) io.Writer {
	pr, pw := io.Pipe()
	s.pipes = append(s.pipes, pw)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := fn(pr)
		pr.CloseWithError(err)
		_, _ = io.Copy(io.Discard, pr) // never reached: CloseWithError fails the writes
	}()
	return tolerantWriter{pw}
}

type tolerantWriter struct{ w io.Writer }

func (t tolerantWriter) Write(p []byte) (int, error) {
	_, _ = t.w.Write(p)
	return len(p), nil
}

func (s *connSniffer) close() {
	for _, pw := range s.pipes {
		pw.Close()
	}
	s.wg.Wait()
}

// frames reads one direction's frames: requests' HEADERS from the client,
// responses' HEADERS and DATA from the server.
func (s *connSniffer) frames(r io.Reader, fromClient bool) error {
	fr := http2.NewFramer(nil, r)
	fr.SetMaxReadFrameSize(16 << 20)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = 16 << 20
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		now := time.Now()
		id := f.Header().StreamID
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			if fromClient {
				req := &loggedRequest{method: f.PseudoValue("method"), conn: s.id, dialed: s.accepted, at: now}
				req.path, req.query, _ = strings.Cut(f.PseudoValue("path"), "?")
				s.mu.Lock()
				s.streams[id] = req
				s.mu.Unlock()
				s.log.mu.Lock()
				s.log.reqs = append(s.log.reqs, req)
				s.log.mu.Unlock()
				continue
			}
			s.update(id, func(req *loggedRequest) {
				if req.status == "" {
					req.status = f.PseudoValue("status")
					for _, hf := range f.RegularFields() {
						switch hf.Name {
						case "content-encoding":
							req.encoding = hf.Value
						case "content-type":
							req.contentType = hf.Value
						}
					}
				}
				if f.StreamEnded() {
					req.end = now
				}
			})
		case *http2.DataFrame:
			if fromClient {
				continue
			}
			s.update(id, func(req *loggedRequest) {
				req.bytes += int64(f.Header().Length)
				req.lastData = now
				if f.StreamEnded() {
					req.end = now
				}
			})
		}
	}
}

func (s *connSniffer) update(id uint32, fn func(*loggedRequest)) {
	s.mu.Lock()
	req := s.streams[id]
	s.mu.Unlock()
	if req == nil {
		return
	}
	s.log.mu.Lock()
	fn(req)
	s.log.mu.Unlock()
}

// resource names a request's resource: "pods", "batchsandboxes",
// "events", "discovery" (for /api, /apis and group versions).
func (r loggedRequest) resource() string {
	parts := strings.Split(strings.Trim(r.path, "/"), "/")
	// /api/v1/[namespaces/NS/]RES[/NAME[/SUB]], /apis/G/V/[namespaces/NS/]RES...
	start := 2
	if len(parts) > 0 && parts[0] == "apis" {
		start = 3
	}
	if len(parts) <= start {
		return "discovery"
	}
	rest := parts[start:]
	if rest[0] == "namespaces" && len(rest) >= 3 {
		rest = rest[2:]
	}
	if len(rest) == 3 { // RES/NAME/SUB
		return rest[0] + "/" + rest[2]
	}
	return rest[0]
}

// kind is "list", "watch", "watch-list" (a watch that streams the initial
// list), or the method.
func (r loggedRequest) kind() string {
	q, _ := url.ParseQuery(r.query)
	switch {
	case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
		return "watch-list"
	case q.Get("watch") == "true" || q.Get("watch") == "1":
		return "watch"
	case r.method == "GET" && r.resource() != "discovery" && !strings.Contains(r.resource(), "/"):
		return "list"
	}
	return strings.ToLower(r.method)
}

// printRequests writes the log relative to t0, one line a request.
func printRequests(w io.Writer, reqs []loggedRequest, t0 time.Time) {
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].at.Before(reqs[j].at) })
	for _, r := range reqs {
		end := "open"
		if !r.end.IsZero() {
			end = fmt.Sprintf("%7.3fs", r.end.Sub(t0).Seconds())
		}
		q := r.query
		if len(q) > 90 {
			q = q[:90] + "…"
		}
		conn := fmt.Sprintf("c%d@%.3fs", r.conn, r.dialed.Sub(t0).Seconds())
		fmt.Fprintf(w, "    %7.3fs → %s  %-11s %-4s %-3s %-4s %10d B  %-10s %s?%s\n", r.at.Sub(t0).Seconds(), end, conn, r.method, r.status,
			r.encoding, r.bytes, r.kind(), r.path, q)
	}
}
