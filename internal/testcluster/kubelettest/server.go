// Package kubelettest plays the kubelet's streaming endpoints for integration
// tests that run against a real kube-apiserver but no real kubelet.
//
// The server is a measured recipe (a test kubelet for a real API server);
// what sandscope adds is the toy shell its commands run in (FakeExec,
// FakeShell), so that the command wrappers of exec and cp meet a shell.
//
// The API server forwards pods/exec, pods/attach and pods/portforward to the
// Pod's node: it reads the Node object (status.addresses picked by
// --kubelet-preferred-address-types, status.daemonEndpoints.kubeletEndpoint.Port)
// and dials https://<address>:<port>/exec/<namespace>/<pod>/<container>?command=...
// This package serves exactly those paths on loopback over TLS. The stream
// protocols (SPDY v1-v4 and the pre-v5 WebSocket channel protocols) are handled
// by k8s.io/cri-streaming/pkg/streaming/{remotecommand,portforward}, the same
// code that container runtimes use behind the real kubelet. No host command is
// ever run: exec calls an ExecFunc (the toy shell FakeExec by default) and
// port-forward calls a PortForwardFunc (an echo server by default). pods/log
// reaches /containerLogs/<namespace>/<pod>/<container>, answered from a
// LogFunc (logs.go, sandscope's addition too).
package kubelettest

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/sandscope/sandscope/internal/crash"
)

// PodLookup resolves a Pod the way the kubelet's pod manager would. found=false
// makes the server answer 404 "pod does not exist", as the real kubelet does.
type PodLookup func(ctx context.Context, namespace, name string) (uid string, found bool, err error)

// ExecRequest is one exec (or attach, with Command == nil) that reached the node.
type ExecRequest struct {
	Namespace, Pod, UID, Container string
	Command                        []string
	// On the SPDY leg (the only one the API server uses unless the Node declares
	// ExtendWebSocketsToKubelet) Stdin, Stdout and Stderr are nil unless the
	// client asked for them; with TTY, Stderr is always nil.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            bool
	// Resize delivers terminal sizes when TTY is set (nil otherwise).
	Resize <-chan remotecommand.TerminalSize
}

// ExecFunc runs a fake command. Return nil for exit code 0 and ExitCode(n) for
// any other exit code; any other error is reported to the client as an
// internal error. ctx is the upgraded (hijacked) HTTP request's context, which
// net/http rarely cancels when the API server drops the stream: a command that
// blocks learns that the client left when a write to Stdout fails.
type ExecFunc func(ctx context.Context, req ExecRequest) error

// PortForwardFunc serves one forwarded connection to port on the Pod.
type PortForwardFunc func(ctx context.Context, namespace, pod, uid string, port int32, conn io.ReadWriteCloser) error

// Config configures a Server. The zero value is usable.
type Config struct {
	// Addr to listen on; default "127.0.0.1:0". Any 127.0.0.0/8 address works on Linux.
	Addr string
	// Certificate to serve. Default: a throwaway self-signed one for the listen
	// IP, which the API server accepts only without --kubelet-certificate-authority.
	Certificate *tls.Certificate
	// ClientCAs, if set, makes the server require and verify a client
	// certificate (the API server's --kubelet-client-certificate).
	ClientCAs *x509.CertPool
	// LookupPod; default: every Pod exists, with an empty UID.
	LookupPod PodLookup
	// Exec; default FakeExec.
	Exec ExecFunc
	// PortForward; default EchoPortForward.
	PortForward PortForwardFunc
	// Logs serves /containerLogs (pods/log); default NoLogs.
	Logs LogFunc
	// StreamCreationTimeout bounds how long SPDY clients get to open their
	// streams; default 30 s (the kubelet's default).
	StreamCreationTimeout time.Duration
}

// RequestRecord is what the API server sent on the kubelet leg.
type RequestRecord struct {
	Method, Path, RawQuery string
	// Upgrade, the SPDY sub-protocols offered (X-Stream-Protocol-Version) and
	// the WebSocket sub-protocols offered (Sec-WebSocket-Protocol).
	Upgrade, StreamProtocols, WebSocketProtocols string
	// NegotiatedProtocol is the SPDY sub-protocol this server picked.
	NegotiatedProtocol string
	// ClientCertSubject is the verified TLS client certificate's subject, if any.
	ClientCertSubject string
	// Status is the first HTTP status written: 101 for a SPDY upgrade, 4xx/5xx
	// for a refusal, 0 for a WebSocket request (the WebSocket library hijacks
	// the connection before answering, so the status is not visible here).
	Status int
}

// Server is a running test kubelet.
type Server struct {
	cfg  Config
	tcp  *trackingListener // below TLS, so net/http still sees *tls.Conn
	http *http.Server
	// Host and Port to put into the Node's status.
	Host string
	Port int32

	mu       sync.Mutex
	requests []RequestRecord
}

// Start listens and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Exec == nil {
		cfg.Exec = FakeExec
	}
	if cfg.PortForward == nil {
		cfg.PortForward = EchoPortForward
	}
	if cfg.Logs == nil {
		cfg.Logs = NoLogs
	}
	if cfg.StreamCreationTimeout == 0 {
		cfg.StreamCreationTimeout = remotecommand.DefaultStreamCreationTimeout
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("test kubelet: listen on %s: %w", cfg.Addr, err)
	}
	tcpAddr := ln.Addr().(*net.TCPAddr)
	cert := cfg.Certificate
	if cert == nil {
		ca, err := NewCA("test-kubelet-self-signed")
		if err != nil {
			ln.Close()
			return nil, err
		}
		leaf, err := ca.ServingCert(tcpAddr.IP)
		if err != nil {
			ln.Close()
			return nil, err
		}
		cert = &leaf.TLS
	}
	tlsCfg := &tls.Config{
		Certificates: []tls.Certificate{*cert},
		MinVersion:   tls.VersionTLS12,
		// SPDY and WebSocket upgrades are HTTP/1.1 only; the API server's
		// kubelet transport speaks HTTP/1.1 for upgrades anyway.
		NextProtos: []string{"http/1.1"},
	}
	if cfg.ClientCAs != nil {
		tlsCfg.ClientCAs = cfg.ClientCAs
		tlsCfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	s := &Server{cfg: cfg, tcp: &trackingListener{Listener: ln, conns: map[net.Conn]struct{}{}},
		Host: tcpAddr.IP.String(), Port: int32(tcpAddr.Port)}

	mux := http.NewServeMux()
	// The same routes as k8s.io/kubernetes/pkg/kubelet/server (GET and POST).
	for _, p := range []string{"/exec/{ns}/{pod}/{container}", "/exec/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, forPod(s, remotecommand.NewOptions, s.serveExec))
	}
	for _, p := range []string{"/attach/{ns}/{pod}/{container}", "/attach/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, forPod(s, remotecommand.NewOptions, s.serveAttach))
	}
	for _, p := range []string{"/portForward/{ns}/{pod}", "/portForward/{ns}/{pod}/{uid}"} {
		mux.HandleFunc(p, forPod(s, portforward.NewV4Options, s.servePortForward))
	}
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", s.serveLogs)
	s.http = &http.Server{Handler: s.record(mux), ReadHeaderTimeout: 10 * time.Second}
	crash.Go(func() { _ = s.http.Serve(tls.NewListener(s.tcp, tlsCfg)) }) // returns http.ErrServerClosed on Close
	return s, nil
}

// URL is the base URL the API server will dial.
func (s *Server) URL() string {
	return "https://" + net.JoinHostPort(s.Host, strconv.Itoa(int(s.Port)))
}

// Close stops listening and drops every connection, including upgraded
// (hijacked) ones that http.Server.Close leaves open: a running exec or
// port-forward ends as if the node had died.
func (s *Server) Close() error {
	err := s.http.Close()
	s.tcp.closeAll()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Requests returns a copy of everything the API server asked for so far.
func (s *Server) Requests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestRecord(nil), s.requests...)
}

func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := RequestRecord{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Upgrade:            r.Header.Get("Upgrade"),
			StreamProtocols:    joinHeader(r.Header.Values("X-Stream-Protocol-Version")),
			WebSocketProtocols: joinHeader(r.Header.Values("Sec-WebSocket-Protocol")),
		}
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			rec.ClientCertSubject = r.TLS.PeerCertificates[0].Subject.String()
		}
		// Record on arrival: a streaming handler returns only when the stream ends.
		s.mu.Lock()
		i := len(s.requests)
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w}
		sw.onHeader = func(status int, protocol string) {
			s.mu.Lock()
			s.requests[i].Status, s.requests[i].NegotiatedProtocol = status, protocol
			s.mu.Unlock()
		}
		next.ServeHTTP(sw, r)
	})
}

// lookup answers like the kubelet: 404 for an unknown Pod or a UID mismatch.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (ns, pod, uid string, ok bool) {
	ns, pod = r.PathValue("ns"), r.PathValue("pod")
	if s.cfg.LookupPod == nil {
		return ns, pod, r.PathValue("uid"), true
	}
	uid, found, err := s.cfg.LookupPod(r.Context(), ns, pod)
	switch {
	case err != nil:
		http.Error(w, fmt.Sprintf("look up pod %s/%s: %v", ns, pod, err), http.StatusInternalServerError)
		return "", "", "", false
	case !found:
		http.Error(w, "pod does not exist", http.StatusNotFound)
		return "", "", "", false
	case r.PathValue("uid") != "" && r.PathValue("uid") != uid:
		http.Error(w, "pod not found", http.StatusNotFound)
		return "", "", "", false
	}
	return ns, pod, uid, true
}

// forPod makes a streaming handler as the kubelet's: the request's options
// parsed (400 when they are bad), then the Pod looked up (404 when it is
// not there), then serve.
func forPod[O any](s *Server, parse func(*http.Request) (O, error),
	serve func(w http.ResponseWriter, r *http.Request, opts O, ns, pod, uid string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		opts, err := parse(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ns, pod, uid, ok := s.lookup(w, r)
		if !ok {
			return
		}
		serve(w, r, opts, ns, pod, uid)
	}
}

func (s *Server) serveExec(w http.ResponseWriter, r *http.Request, opts *remotecommand.Options, ns, pod, uid string) {
	remotecommand.ServeExec(w, r, &executor{s: s, ns: ns, pod: pod}, pod, uid, r.PathValue("container"),
		r.URL.Query()["command"], opts, 0, s.cfg.StreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request, opts *remotecommand.Options, ns, pod, uid string) {
	remotecommand.ServeAttach(w, r, &executor{s: s, ns: ns, pod: pod}, pod, uid, r.PathValue("container"),
		opts, 0, s.cfg.StreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request, opts *portforward.V4Options, ns, pod, uid string) {
	portforward.ServePortForward(w, r, &forwarder{s: s, ns: ns}, pod, uid, opts, 0,
		s.cfg.StreamCreationTimeout, portforward.SupportedProtocols)
}

// executor adapts ExecFunc to remotecommand.Executor and remotecommand.Attacher.
type executor struct {
	s       *Server
	ns, pod string
}

func (e *executor) ExecInContainer(ctx context.Context, _ string, uid, container string, cmd []string,
	in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	return e.s.cfg.Exec(ctx, ExecRequest{
		Namespace: e.ns, Pod: e.pod, UID: uid, Container: container, Command: cmd,
		Stdin: in, Stdout: out, Stderr: errOut, TTY: tty, Resize: resize,
	})
}

func (e *executor) AttachContainer(ctx context.Context, name, uid, container string,
	in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	return e.ExecInContainer(ctx, name, uid, container, nil, in, out, errOut, tty, resize, 0)
}

type forwarder struct {
	s  *Server
	ns string
}

func (f *forwarder) PortForward(ctx context.Context, pod, uid string, port int32, stream io.ReadWriteCloser) error {
	return f.s.cfg.PortForward(ctx, f.ns, pod, uid, port, stream)
}

// statusWriter reports the first status line written (101 for a SPDY
// upgrade). The WebSocket library hijacks the connection before it writes
// anything, so a WebSocket request is reported as Status 0, Hijacked.
type statusWriter struct {
	http.ResponseWriter
	onHeader func(status int, protocol string)
	wrote    bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.onHeader(code, w.Header().Get("X-Stream-Protocol-Version"))
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Hijack lets SPDY and WebSocket upgrades through the recorder.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Flush forwards to the underlying writer.
func (w *statusWriter) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func joinHeader(v []string) string { return strings.Join(v, ", ") }

// trackingListener remembers every accepted connection so Close can drop the
// ones net/http no longer owns after an upgrade.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return &trackedConn{Conn: c, l: l}, nil
}

func (l *trackingListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		c.Close()
	}
	clear(l.conns)
}

type trackedConn struct {
	net.Conn
	l *trackingListener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c.Conn)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
