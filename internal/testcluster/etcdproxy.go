package testcluster

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// newEtcdProxy starts the relay that stands between kube-apiserver and
// etcd, so that a test can take the storage away from a running API server:
// its connections to etcd are reset and new ones closed at once, as when
// etcd is down or the member is partitioned away, while the API server
// itself keeps answering requests that need no storage (/version, /livez,
// watches already open). kube-apiserver's --etcd-servers names
// "http://" + its Addr.
func newEtcdProxy(target func() (string, error)) (*relay, error) {
	r, err := newRelay(target, nil)
	if err != nil {
		return nil, fmt.Errorf("etcd proxy: %w", err)
	}
	return r, nil
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

func (c *Cluster) etcdProxy(t testing.TB) *relay {
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
