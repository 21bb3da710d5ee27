package bench

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A shaped link between the clients (this process, the sandscope binary,
// kubectl) and the real API server, for BenchmarkNetScale.
//
// The kernel here has the tbf qdisc but no netem, so the link is built in
// two parts:
//
//   - Rate: a veth pair into a network namespace the bench creates, with a
//     tbf qdisc on each end (each direction). The clients' TCP runs over it
//     and meets the kernel's real shaping: queueing, drops, congestion
//     control.
//   - Delay: a relay in this process listens inside the namespace, holds
//     every chunk it reads from or writes to a client for RTT/2, and adds
//     one RTT before the first (the TCP handshake the veth does not pay).
//     It terminates TLS (with the API server's own serving certificate) and
//     opens its own loopback TLS connection to the API server with the
//     admin client certificate, so that it can read the HTTP/2 frames in
//     between: each request's path, arrival time and response bytes.
//
// The clients' TCP sees the shaped rate, and every request and TLS
// handshake pays the RTT; what it does not see is the RTT in its own
// congestion window (its ACKs come back from the relay at once), so slow
// start ramps faster than over a real 40 ms path: at 50 Mbit/s a real
// connection needs about 5 RTTs (0.2 s) to fill the pipe.

// linkProfile is one shaped link: "40ms:50mbit"; a zero rate leaves the
// link unshaped, a zero RTT adds no delay.
type linkProfile struct {
	rtt  time.Duration
	rate int64 // bits per second; 0 = unshaped
	text string
}

func parseLinkProfiles(s string) ([]linkProfile, error) {
	var out []linkProfile
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		rttText, rateText, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("link %q: want RTT:RATE, e.g. 40ms:50mbit", part)
		}
		rtt, err := time.ParseDuration(rttText)
		if err != nil {
			return nil, fmt.Errorf("link %q: %w", part, err)
		}
		rate, err := parseRate(rateText)
		if err != nil {
			return nil, fmt.Errorf("link %q: %w", part, err)
		}
		out = append(out, linkProfile{rtt: rtt, rate: rate, text: part})
	}
	return out, nil
}

func parseRate(s string) (int64, error) {
	s = strings.ToLower(s)
	mult := int64(1)
	for suffix, m := range map[string]int64{"gbit": 1e9, "mbit": 1e6, "kbit": 1e3} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("rate %q: want e.g. 50mbit", s)
	}
	return int64(v * float64(mult)), nil
}

func (p linkProfile) String() string {
	rate := "unshaped"
	if p.rate > 0 {
		rate = fmt.Sprintf("%g Mbit/s", float64(p.rate)/1e6)
	}
	return fmt.Sprintf("RTT %s, %s", p.rtt, rate)
}

// netLink is the namespace, its veth pair and the addresses on it.
type netLink struct {
	ns, hostIf, nsIf string
	hostIP, nsIP     string
}

// netLinkUsable says why the link cannot be built here ("" when it can).
func netLinkUsable() string {
	if os.Geteuid() != 0 {
		return "the shaped link needs root (ip netns, veth, tc)"
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "the shaped link needs " + tool + " (iproute2)"
		}
	}
	return ""
}

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// newNetLink creates the namespace and the veth pair; close removes both.
func newNetLink() (*netLink, error) {
	id := strconv.Itoa(os.Getpid() % 100000)
	l := &netLink{ns: "sandscope-bench-" + id, hostIf: "ssb" + id + "h", nsIf: "ssb" + id + "n",
		hostIP: "10.203.0.1", nsIP: "10.203.0.2"}
	steps := [][]string{
		{"ip", "netns", "add", l.ns},
		{"ip", "link", "add", l.hostIf, "type", "veth", "peer", "name", l.nsIf},
		{"ip", "link", "set", l.nsIf, "netns", l.ns},
		{"ip", "addr", "add", l.hostIP + "/30", "dev", l.hostIf},
		{"ip", "link", "set", l.hostIf, "up"},
		{"ip", "-n", l.ns, "addr", "add", l.nsIP + "/30", "dev", l.nsIf},
		{"ip", "-n", l.ns, "link", "set", l.nsIf, "up"},
		{"ip", "-n", l.ns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			l.close()
			return nil, err
		}
	}
	return l, nil
}

func (l *netLink) close() {
	_ = run("ip", "link", "del", l.hostIf) // takes its peer with it
	_ = run("ip", "netns", "del", l.ns)
}

// shape puts a tbf of the given rate on both ends (0: removes it).
func (l *netLink) shape(rate int64) error {
	for _, dev := range [][]string{{"tc"}, {"tc", "-n", l.ns}} {
		ifName := l.hostIf
		if len(dev) > 1 {
			ifName = l.nsIf
		}
		_ = run(append(dev, "qdisc", "del", "dev", ifName, "root")...)
		if rate == 0 {
			continue
		}
		// burst: 4 ms of the rate, at least 16 KB (more than one GSO
		// segment at these rates); a queue of 50 ms before drops.
		burst := max(rate/8/250, 16<<10)
		args := append(dev, "qdisc", "add", "dev", ifName, "root", "tbf", "rate", strconv.FormatInt(rate, 10)+"bit",
			"burst", strconv.FormatInt(burst, 10), "latency", "50ms")
		if err := run(args...); err != nil {
			return err
		}
	}
	return nil
}

// counters are the host end's bytes: rx is what the server side sent
// (download), tx what the clients sent (upload), IP and TCP headers and TLS
// included.
func (l *netLink) counters() (rx, tx int64) {
	read := func(name string) int64 {
		data, _ := os.ReadFile(filepath.Join("/sys/class/net", l.hostIf, "statistics", name))
		v, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		return v
	}
	return read("rx_bytes"), read("tx_bytes")
}

// listenIn opens a TCP listener inside the namespace: the socket belongs to
// the namespace it was made in, whichever thread accepts on it later. The
// goroutine's thread stays locked and so ends with it, never serving other
// goroutines from the wrong namespace.
func (l *netLink) listenIn(addr string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + l.ns)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns %s: %w", l.ns, err)}
			return
		}
		ln, err := net.Listen("tcp", addr)
		ch <- result{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}

// relay accepts clients inside the namespace, delays their traffic and
// forwards it to the API server, logging the HTTP/2 requests it carries.
type relay struct {
	ln               net.Listener
	upstream         string // host:port of the API server
	serverTLS, upTLS *tls.Config
	delay            time.Duration // one way: RTT/2
	log              *requestLog

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// newRelay serves on ln with the API server's serving certificate from
// the cluster's PKI folder and dials upstream as its admin.
func newRelay(ln net.Listener, upstream, pki string) (*relay, error) {
	serving, err := tls.LoadX509KeyPair(filepath.Join(pki, "serving.crt"), filepath.Join(pki, "serving.key"))
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	admin, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("relay: no CA certificate in ca.crt")
	}
	host, _, _ := net.SplitHostPort(upstream)
	r := &relay{ln: ln, upstream: upstream, log: &requestLog{},
		serverTLS: &tls.Config{Certificates: []tls.Certificate{serving}, NextProtos: []string{"h2", "http/1.1"}},
		upTLS:     &tls.Config{Certificates: []tls.Certificate{admin}, RootCAs: pool, ServerName: host},
		conns:     map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// setDelay applies to connections accepted from now on.
func (r *relay) setDelay(d time.Duration) {
	r.mu.Lock()
	r.delay = d
	r.mu.Unlock()
}

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		accepted := time.Now()
		r.mu.Lock()
		d := r.delay
		dc := newDelayedConn(c, d)
		r.conns[dc] = true
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.handle(dc, accepted)
			r.mu.Lock()
			delete(r.conns, dc)
			r.mu.Unlock()
		}()
	}
}

// dropAll closes every client connection (between measurements).
func (r *relay) dropAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		c.Close()
	}
}

func (r *relay) close() {
	r.ln.Close()
	r.dropAll()
	r.wg.Wait()
}

func (r *relay) handle(raw *delayedConn, accepted time.Time) {
	defer raw.Close()
	client := tls.Server(raw, r.serverTLS)
	if err := client.Handshake(); err != nil {
		return
	}
	up := r.upTLS.Clone()
	proto := client.ConnectionState().NegotiatedProtocol
	if proto != "" {
		up.NextProtos = []string{proto}
	}
	server, err := tls.Dial("tcp", r.upstream, up)
	if err != nil {
		return
	}
	defer server.Close()
	sn := r.log.conn(proto == "h2", accepted)
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(server, io.TeeReader(client, sn.requests))
		_ = server.CloseWrite()
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, io.TeeReader(server, sn.responses))
		_ = client.CloseWrite()
		done <- struct{}{}
	}()
	<-done
	// One direction ended: the other follows once its peer sees the close
	// (and what is still on its way has arrived), or is cut.
	select {
	case <-done:
	case <-time.After(4*raw.d + 2*time.Second):
		raw.Close()
		server.Close()
		<-done
	}
	sn.close()
}

// delayedConn holds each chunk read from or written to its connection for
// d (a one-way delay), keeping the order and the rate: chunks are in
// flight together, as on a long path. The first chunk read waits one
// round trip more, for the TCP handshake.
type delayedConn struct {
	net.Conn
	d   time.Duration
	in  chan chunk
	out chan chunk

	rest      []byte // of the chunk being read
	readErr   error
	closeOnce sync.Once
	closed    chan struct{}
	wrote     chan struct{} // closed when the writer has sent all it had
}

type chunk struct {
	b   []byte
	due time.Time
	err error
}

func newDelayedConn(c net.Conn, d time.Duration) *delayedConn {
	dc := &delayedConn{Conn: c, d: d, in: make(chan chunk, 1024), out: make(chan chunk, 256),
		closed: make(chan struct{}), wrote: make(chan struct{})}
	go dc.reader()
	go dc.writer()
	return dc
}

func (c *delayedConn) reader() {
	first := true
	for {
		b := make([]byte, 32<<10)
		n, err := c.Conn.Read(b)
		due := time.Now().Add(c.d)
		if first {
			due = due.Add(2 * c.d)
			first = false
		}
		select {
		case c.in <- chunk{b: b[:n], due: due, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *delayedConn) Read(p []byte) (int, error) {
	for len(c.rest) == 0 {
		if c.readErr != nil {
			return 0, c.readErr
		}
		var ch chunk
		select {
		case ch = <-c.in:
		case <-c.closed:
			return 0, net.ErrClosed
		}
		if wait := time.Until(ch.due); wait > 0 {
			time.Sleep(wait)
		}
		c.rest, c.readErr = ch.b, ch.err
	}
	n := copy(p, c.rest)
	c.rest = c.rest[n:]
	return n, nil
}

func (c *delayedConn) Write(p []byte) (int, error) {
	b := append([]byte(nil), p...)
	select {
	case c.out <- chunk{b: b, due: time.Now().Add(c.d)}:
		return len(p), nil
	case <-c.closed:
		return 0, net.ErrClosed
	}
}

func (c *delayedConn) writer() {
	defer close(c.wrote)
	for {
		select {
		case ch := <-c.out:
			if wait := time.Until(ch.due); wait > 0 {
				time.Sleep(wait)
			}
			if _, err := c.Conn.Write(ch.b); err != nil {
				return
			}
		case <-c.closed:
			return
		}
	}
}

// CloseWrite sends the close once what was written has gone out.
func (c *delayedConn) CloseWrite() error {
	go func() {
		time.Sleep(c.d)
		for len(c.out) > 0 {
			time.Sleep(time.Millisecond)
		}
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	return nil
}

func (c *delayedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
