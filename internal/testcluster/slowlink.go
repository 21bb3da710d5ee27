package testcluster

import (
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/sandscope/sandscope/internal/crash"
)

// SlowLink puts a slow link between clients and the cluster's API server:
// a TCP proxy (TLS passes through it untouched, so the certificates and
// credentials stay valid) that lets the first free bytes of each
// connection's answers through at once, then bytesPerSecond. Requests are
// small and go at full speed. A large initial list then streams for as
// long as the test needs, deterministically: no timing of the server's.
// It returns a kubeconfig whose current context reaches the server through
// the link; the link closes at the end of the test. Clients in one process
// share connections to one address (client-go caches transports): a second
// command run in-process over the same link finds its free bytes spent, so
// give each its own link.
func (c *Cluster) SlowLink(t testing.TB, free, bytesPerSecond int) (kubeconfig string) {
	t.Helper()
	target := strings.TrimPrefix(c.Server, "https://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("slow link: %v", err)
	}
	l := &slowLink{ln: ln, target: target, free: free, rate: bytesPerSecond, conns: map[net.Conn]struct{}{}}
	crash.Go(l.serve)
	t.Cleanup(l.close)

	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatalf("slow link: %v", err)
	}
	u := url.URL{Scheme: "https", Host: ln.Addr().String()}
	for _, cl := range cfg.Clusters {
		cl.Server = u.String()
	}
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig-slow")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatalf("slow link: %v", err)
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Fatalf("slow link: %v", err)
	}
	return kubeconfig
}

type slowLink struct {
	ln         net.Listener
	target     string
	free, rate int

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

func (l *slowLink) serve() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		crash.Go(func() { l.forward(c) })
	}
}

func (l *slowLink) forward(client net.Conn) {
	upstream, err := net.DialTimeout("tcp", l.target, 5*time.Second)
	if err != nil || !l.track(client, upstream) {
		client.Close()
		if upstream != nil {
			upstream.Close()
		}
		return
	}
	defer client.Close()
	defer upstream.Close()
	done := make(chan struct{})
	crash.Go(func() {
		defer close(done)
		_, _ = io.Copy(upstream, client)
		upstream.Close()
	})
	_, _ = io.Copy(client, &throttled{r: upstream, free: l.free, rate: l.rate})
	client.Close()
	<-done
}

func (l *slowLink) track(cs ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	for _, c := range cs {
		l.conns[c] = struct{}{}
	}
	return true
}

func (l *slowLink) close() {
	l.ln.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	clear(l.conns)
}

// throttled reads free bytes at once, then at most rate bytes a second, in
// reads of a tenth of a second's worth.
type throttled struct {
	r          io.Reader
	free, rate int
}

func (t *throttled) Read(p []byte) (int, error) {
	if t.free > 0 {
		n, err := t.r.Read(p[:min(len(p), t.free)])
		t.free -= n
		return n, err
	}
	chunk := max(1, t.rate/10)
	time.Sleep(time.Duration(chunk) * time.Second / time.Duration(max(1, t.rate)))
	return t.r.Read(p[:min(len(p), chunk)])
}
