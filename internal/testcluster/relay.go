package testcluster

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/sandscope/sandscope/internal/crash"
)

// relay is a TCP proxy on loopback that knows its live connections, so a
// test can cut them all at once: the etcd proxy (storage taken away from a
// running API server) and the slow link (a throttled path to the API
// server) are both one.
type relay struct {
	ln     net.Listener
	target func() (string, error) // host:port to dial for each connection
	// answers wraps what the target sends back on its way to the client
	// (nil: as it comes).
	answers func(io.Reader) io.Reader

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newRelay(target func() (string, error), answers func(io.Reader) io.Reader) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &relay{ln: ln, target: target, answers: answers, conns: map[net.Conn]struct{}{}}
	crash.Go(r.serve)
	return r, nil
}

// Addr is the relay's host:port.
func (r *relay) Addr() string { return r.ln.Addr().String() }

// Close stops accepting and closes every connection.
func (r *relay) Close() {
	r.ln.Close()
	r.setCut(true)
}

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		crash.Go(func() { r.forward(c) })
	}
}

func (r *relay) forward(client net.Conn) {
	if !r.track(client) {
		client.Close() // cut: the connection ends as soon as it is made
		return
	}
	defer r.untrack(client)
	defer client.Close()
	addr, err := r.target()
	if err != nil {
		return
	}
	upstream, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return
	}
	if !r.track(upstream) {
		upstream.Close()
		return
	}
	defer r.untrack(upstream)
	defer upstream.Close()
	done := make(chan struct{})
	crash.Go(func() {
		defer close(done)
		_, _ = io.Copy(upstream, client)
		upstream.Close()
	})
	var answers io.Reader = upstream
	if r.answers != nil {
		answers = r.answers(upstream)
	}
	_, _ = io.Copy(client, answers)
	client.Close()
	<-done
}

// track registers a live connection; false while cut.
func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cut {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// setCut cuts (every connection closed, new ones refused) or restores.
func (r *relay) setCut(cut bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = cut
	if cut {
		for c := range r.conns {
			c.Close()
		}
		clear(r.conns)
	}
}
