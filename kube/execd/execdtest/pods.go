package execdtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/sandscope/sandscope/internal/crash"
)

// Pods plays the Pod network behind a test kubelet's port-forward: each Pod
// incarnation (by UID) has its own execd Server, so a forward reaches the
// daemon of that incarnation only — a dead Pod's daemon is gone, as on a node.
type Pods struct {
	mu      sync.Mutex
	daemons map[string]*Server // by Pod UID
	addrs   map[string]string  // by Pod UID: listeners that are not a Server
}

// NewPods returns an empty Pod network.
func NewPods() *Pods { return &Pods{daemons: map[string]*Server{}, addrs: map[string]string{}} }

// AddAddr registers a listener of the Pod incarnation uid that is not a
// Server (a hostile daemon a test writes itself).
func (p *Pods) AddAddr(uid, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.addrs[uid] = addr
}

// Add registers the daemon of the Pod incarnation uid.
func (p *Pods) Add(uid string, d *Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.daemons[uid] = d
}

// Get returns the daemon of uid, or nil.
func (p *Pods) Get(uid string) *Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.daemons[uid]
}

// Close stops every daemon.
func (p *Pods) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.daemons {
		d.Close()
	}
}

// Forward is a kubelettest PortForward function: it joins conn to the
// daemon of the Pod incarnation uid, whatever port was asked for.
func (p *Pods) Forward(_ context.Context, _, _, uid string, port int32, conn io.ReadWriteCloser) error {
	defer conn.Close()
	p.mu.Lock()
	addr := p.addrs[uid]
	if d := p.daemons[uid]; d != nil {
		addr = d.Addr
	}
	p.mu.Unlock()
	if addr == "" {
		return fmt.Errorf("pod %s has no listener on port %d", uid, port)
	}
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer up.Close()
	crash.Go(func() {
		_, _ = io.Copy(up, conn)
		_ = up.(*net.TCPConn).CloseWrite()
	})
	_, err = io.Copy(conn, up)
	return err
}
