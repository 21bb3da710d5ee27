package serve

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/sandscope/sandscope/kube"
)

// serveHTTP runs s's HTTP server (limits, TLS unless plain) on a loopback
// port until the test ends and returns its address.
func serveHTTP(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, wrapped := s.httpServer(ln)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(wrapped)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String()
}

func newTestServer(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.Log = io.Discard
	s, err := New(&kube.Clients{Kube: kubefake.NewClientset()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keepAlive dials addr (over TLS unless plain), GETs /healthz and reads the
// whole answer, leaving the connection open and idle as an HTTP/1.1
// keep-alive client does.
func keepAlive(t *testing.T, addr string, plain bool) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	if plain {
		c, err = net.DialTimeout("tcp", addr, 10*time.Second)
	} else {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test's self-signed server
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: sandscope\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz: %d, close %v; want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
	}
	return c
}

// closedBy reports whether the server has closed c by deadline: reading
// it through (a 408 the server may send first included) ends in EOF or a
// reset, not in the deadline.
func closedBy(c net.Conn, deadline time.Time) error {
	_ = c.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("still open at %s", deadline.Format(time.TimeOnly))
	}
	return nil
}

// Idle keep-alive connections are closed after IdleTimeout, plain and TLS:
// a client cannot keep descriptors open by opening connections and
// sending nothing more.
func TestIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	plainAndTLS(t, Limits{IdleTimeout: 300 * time.Millisecond, MaxConnections: 200}, func(t *testing.T, addr string, plain bool) {
		const n = 100
		conns := make([]net.Conn, n)
		for i := range conns {
			conns[i] = keepAlive(t, addr, plain)
		}
		open, deadline := 0, time.Now().Add(10*time.Second)
		for _, c := range conns {
			if err := closedBy(c, deadline); err != nil {
				open++
			}
		}
		if open > 0 {
			t.Errorf("%d of %d idle keep-alive connections still open long after the 300ms idle timeout", open, n)
		}
	})
}

// plainAndTLS runs test, in parallel subtests, against a server with
// limits serving plain HTTP and one serving TLS.
func plainAndTLS(t *testing.T, limits Limits, test func(t *testing.T, addr string, plain bool)) {
	for _, plain := range []bool{true, false} {
		t.Run(fmt.Sprintf("plain=%v", plain), func(t *testing.T) {
			t.Parallel()
			test(t, serveHTTP(t, newTestServer(t, Options{InsecurePlainHTTP: plain, Limits: limits})), plain)
		})
	}
}

// A connection that never completes its TLS handshake or its request's
// headers is closed after ReadHeaderTimeout.
func TestSilentConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	plainAndTLS(t, Limits{ReadHeaderTimeout: 300 * time.Millisecond}, func(t *testing.T, addr string, plain bool) {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if plain {
			// Half a request line, then nothing.
			if _, err := fmt.Fprint(c, "GET /metr"); err != nil {
				t.Fatal(err)
			}
		}
		if err := closedBy(c, time.Now().Add(10*time.Second)); err != nil {
			t.Errorf("silent connection: %v", err)
		}
	})
}

// Past MaxConnections a new connection is not served until one of the open
// ones closes; then it is.
func TestConnectionsBeyondTheBoundWait(t *testing.T) {
	t.Parallel()
	const max = 3
	addr := serveHTTP(t, newTestServer(t, Options{
		InsecurePlainHTTP: true,
		Limits:            Limits{MaxConnections: max, IdleTimeout: time.Minute},
	}))
	var held []net.Conn
	for range max {
		held = append(held, keepAlive(t, addr, true))
	}
	extra, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if _, err := fmt.Fprint(extra, "GET /healthz HTTP/1.1\r\nHost: sandscope\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(extra)
	_ = extra.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := r.Peek(1); err == nil {
		t.Fatalf("connection %d was served while %d were open", max+1, max)
	}
	held[0].Close()
	_ = extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("connection %d not served after one of the %d closed: %v", max+1, max, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz: %d", resp.StatusCode)
	}
}

// Zero limits take the defaults; none is left unbounded.
func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	got := Limits{IdleTimeout: time.Second}.withDefaults()
	want := DefaultLimits
	want.IdleTimeout = time.Second
	if got != want {
		t.Errorf("withDefaults = %+v, want %+v", got, want)
	}
	srv, _ := newTestServer(t, Options{InsecurePlainHTTP: true}).httpServer(nopListener{})
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("an unbounded timeout: %+v", srv)
	}
}

type nopListener struct{}

func (nopListener) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (nopListener) Close() error              { return nil }
func (nopListener) Addr() net.Addr            { return &net.TCPAddr{} }
