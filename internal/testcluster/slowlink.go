package testcluster

import (
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
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
	l, err := newRelay(func() (string, error) { return target, nil }, func(answers io.Reader) io.Reader {
		return &throttled{r: answers, free: free, rate: bytesPerSecond}
	})
	if err != nil {
		t.Fatalf("slow link: %v", err)
	}
	t.Cleanup(l.Close)

	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatalf("slow link: %v", err)
	}
	u := url.URL{Scheme: "https", Host: l.Addr()}
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
