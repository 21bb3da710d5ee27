// Package execdtest is a real HTTP server speaking execd's protocol, for
// tests: bind one per Pod IP (any 127.0.0.0/8 address on Linux) so that
// requests for an address travel a real network path and a test can count
// what each "Pod" received. Commands are interpreted by the toy shell of
// internal/testcluster/kubelettest; no host command is ever run.
package execdtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/kube/execd"
)

// Config of one daemon.
type Config struct {
	// Addr to listen on, e.g. "127.77.0.5:44772".
	Addr string
	// Identity names the Pod this daemon lives in; every command first prints
	// "execd <Identity>" on stdout so a test can see who answered.
	Identity string
	// Token, when set, must arrive in X-EXECD-ACCESS-TOKEN.
	Token string
}

// Server is a running fake execd.
type Server struct {
	cfg  Config
	ln   net.Listener
	http *http.Server
	// Addr is the bound host:port.
	Addr string

	requests atomic.Int64 // every request, /ping included
	commands atomic.Int64 // POST /command accepted (token ok)
	uploads  atomic.Int64 // POST /files/upload accepted
	mu       sync.Mutex
	seen     []string
	files    map[string][]byte // /files/*: path → content
}

// Start binds cfg.Addr and serves until Close.
func Start(cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("execdtest: listen on %s: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, ln: ln, Addr: ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(w, r) {
			w.WriteHeader(http.StatusOK)
		}
	})
	mux.HandleFunc("POST /command", s.command)
	mux.HandleFunc("POST /files/upload", s.upload)
	mux.HandleFunc("GET /files/download", s.download)
	s.http = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			mux.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	crash.Go(func() { _ = s.http.Serve(ln) }) // ErrServerClosed on Close
	return s, nil
}

// URL is http://Addr.
func (s *Server) URL() string { return "http://" + s.Addr }

// Requests counts every request that reached this daemon.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Commands counts accepted POST /command requests.
func (s *Server) Commands() int64 { return s.commands.Load() }

// Seen lists the command strings received.
func (s *Server) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// Close stops the daemon and drops open streams, as when the Pod dies.
func (s *Server) Close() error {
	err := s.http.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Token == "" || r.Header.Get(execd.TokenHeader) == s.cfg.Token {
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, `{"error":"Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN"}`) //nolint:errcheck
	return false
}

// command runs the body's command with the toy shell. Special words for
// tests: `vanish` ends the stream without an end frame (a daemon or node
// dying mid-command); `runtimeerror` answers an error frame that is not an
// exit code.
func (s *Server) command(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var req execd.CommandRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Command == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"code":"INVALID_REQUEST_BODY","message":"command is required"}`) //nolint:errcheck
		return
	}
	s.commands.Add(1)
	s.mu.Lock()
	s.seen = append(s.seen, req.Command)
	s.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fw := &frameWriter{w: w}
	fw.frame(execd.Frame{Type: execd.FrameInit, Text: fmt.Sprintf("cmd-%d", s.commands.Load())})
	fw.frame(execd.Frame{Type: execd.FrameStdout, Text: "execd " + s.cfg.Identity})
	words := strings.Fields(req.Command)
	switch {
	case contains(words, "vanish"):
		fw.frame(execd.Frame{Type: execd.FrameStdout, Text: "partial"})
		panic(http.ErrAbortHandler) // drop the connection without an end frame
	case contains(words, "runtimeerror"):
		fw.frame(execd.Frame{Type: execd.FrameFailed, Error: &execd.FrameError{Name: "RuntimeError", Value: "bash: not found"}})
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sh := &kubelettest.FakeShell{Stdout: &lineWriter{fw: fw, typ: execd.FrameStdout}, Stderr: &lineWriter{fw: fw, typ: execd.FrameStderr}}
	rc := sh.Run(ctx, req.Command)
	if rc == 0 {
		fw.frame(execd.Frame{Type: execd.FrameComplete})
		return
	}
	fw.frame(execd.Frame{Type: execd.FrameFailed, Error: &execd.FrameError{Name: "CommandExecError", Value: fmt.Sprint(rc)}})
}

func contains(words []string, w string) bool {
	for _, x := range words {
		if strings.Trim(x, "'\"") == w {
			return true
		}
	}
	return false
}

// frameWriter writes raw JSON objects each followed by a blank line, the
// framing execd uses (no "data:" prefix).
type frameWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

func (f *frameWriter) frame(fr execd.Frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := json.Marshal(fr)
	f.w.Write(append(b, '\n', '\n')) //nolint:errcheck
	http.NewResponseController(f.w).Flush()
}

// lineWriter turns shell output into one frame per line, without the newline,
// as execd sends lines.
type lineWriter struct {
	fw  *frameWriter
	typ string
}

func (l *lineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line == "" {
			continue
		}
		l.fw.frame(execd.Frame{Type: l.typ, Text: strings.TrimSuffix(line, "\n")})
	}
	return len(p), nil
}
