package testcluster

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/internal/crash"
)

// etcdProxy stands between kube-apiserver and etcd, so that a test can take
// the storage away from a running API server: its connections to etcd are
// reset and new ones closed at once, as when etcd is down or the member is
// partitioned away, while the API server itself keeps answering requests
// that need no storage (/version, /livez, watches already open).
type etcdProxy struct {
	ln     net.Listener
	target func() (string, error) // etcd's host:port, known once start.sh picked it

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newEtcdProxy(target func() (string, error)) (*etcdProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("etcd proxy: %w", err)
	}
	p := &etcdProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	crash.Go(p.serve)
	return p, nil
}

// etcdURLTarget reads etcd's address from STATE/etcd.url, which start.sh
// writes before it starts kube-apiserver.
func etcdURLTarget(state string) func() (string, error) {
	return func() (string, error) {
		data, err := os.ReadFile(filepath.Join(state, "etcd.url"))
		if err != nil {
			return "", err
		}
		u, err := url.Parse(strings.TrimSpace(string(data)))
		if err != nil {
			return "", err
		}
		return u.Host, nil
	}
}

// URL is what kube-apiserver's --etcd-servers names.
func (p *etcdProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *etcdProxy) Close() {
	p.ln.Close()
	p.setCut(true)
}

func (p *etcdProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		crash.Go(func() { p.forward(c) })
	}
}

func (p *etcdProxy) forward(client net.Conn) {
	if !p.track(client) {
		client.Close() // cut: the connection ends as soon as it is made
		return
	}
	defer p.untrack(client)
	defer client.Close()
	addr, err := p.target()
	if err != nil {
		return
	}
	upstream, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(upstream) {
		upstream.Close()
		return
	}
	defer p.untrack(upstream)
	defer upstream.Close()
	done := make(chan struct{})
	crash.Go(func() {
		defer close(done)
		_, _ = io.Copy(upstream, client)
		upstream.Close()
	})
	_, _ = io.Copy(client, upstream)
	client.Close()
	<-done
}

// track registers a live connection; false while cut.
func (p *etcdProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *etcdProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// setCut cuts (every connection closed, new ones refused) or restores.
func (p *etcdProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// CutEtcd takes etcd away from the cluster's kube-apiserver: its
// connections to etcd are closed and new ones closed as soon as they are
// made. The API server keeps running and answering what needs no storage.
// RestoreEtcd (or the end of the test) gives etcd back. The cluster must
// have been started with Options.EtcdProxy.
func (c *Cluster) CutEtcd(t testing.TB) {
	t.Helper()
	p := c.etcdProxy(t)
	p.setCut(true)
	t.Cleanup(func() { p.setCut(false) })
}

// RestoreEtcd lets kube-apiserver reach etcd again.
func (c *Cluster) RestoreEtcd(t testing.TB) {
	t.Helper()
	c.etcdProxy(t).setCut(false)
}

func (c *Cluster) etcdProxy(t testing.TB) *etcdProxy {
	t.Helper()
	if c.pkg.proxy == nil {
		t.Fatal("testcluster: the cluster has no etcd proxy (start it with Options{EtcdProxy: true})")
	}
	return c.pkg.proxy
}

// SecondConfig is an admin config for the cluster's second kube-apiserver,
// which shares etcd with the first and reaches it directly. The cluster
// must have been started with Options.SecondAPIServer.
func (c *Cluster) SecondConfig(t testing.TB) *rest.Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(c.StateDir, "apiserver2.url"))
	if err != nil {
		t.Fatalf("testcluster: no second kube-apiserver (start the cluster with Options{SecondAPIServer: true}): %v", err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.Host = strings.TrimSpace(string(data))
	return cfg
}
