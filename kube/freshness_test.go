package kube_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// An API server cut off from etcd keeps answering /version and keeps its
// watches open: they only go silent, as over a quiet fleet. Here it is one
// of an HA pair: the other keeps taking writes, and deletes the sandbox's
// Pod meanwhile. The watcher, on the cut-off one, must call that
// disconnected (identity UNKNOWN, never the stale OK; every watch down)
// within its freshness budget, AsOf must stay at the last time the data was
// proven current, and when etcd is back the deletion must show.
func TestWatcherStorageCut(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{EtcdProxy: true, SecondAPIServer: true})
	other, err := kubernetes.NewForConfig(c.SecondConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t)
	kl, ct := c.Kubelet(t), c.Controller(t)
	w := startWatcher(t, c.Config, kube.WatcherOptions{Namespace: ns})
	const name, ip = "sbx-s", "127.0.0.29"
	key := runningSandbox(t, kl, ct, w, ns, name, ip)
	// While connected, AsOf moves: each consistent read proves the data anew.
	before := time.Now()
	waitFor(t, w, before, waitTimeout, "AsOf proven after the sandbox was OK", func(s *fleet.Snapshot) bool {
		return s.Status.AsOf.After(before)
	})

	start := time.Now()
	c.CutEtcd(t)
	// The cut-off server still answers what needs no storage, and the other
	// one takes writes: the sandbox's Pod is deleted.
	if _, err := c.Kube.Discovery().ServerVersion(); err != nil {
		t.Fatalf("kube-apiserver stopped answering /version with etcd cut: %v", err)
	}
	zero := int64(0)
	if err := other.CoreV1().Pods(ns).Delete(testcluster.Context(t), name+"-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("deleting the Pod through the other API server: %v", err)
	}
	snap, d := waitDisconnected(t, w, key, start)
	t.Logf("latency: etcd cut → DisconnectedSince set, identity UNKNOWN: %s", d)
	asOf := snap.Status.AsOf
	if asOf.IsZero() || asOf.After(start) {
		t.Errorf("AsOf = %v, want the last proof before etcd was cut at %v", asOf, start)
	}
	if sb := snap.Sandbox(key); sb.State != model.StateUnknown {
		t.Errorf("state while the storage is cut = %s, want Unknown", sb.State)
	}
	for _, ws := range w.Watches() {
		if ws.Up {
			t.Errorf("watch %s up while the storage is cut", ws.Resource)
		}
	}
	// Over more than one probe period the data is proven no fresher, and
	// the sandbox never reads OK.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if id := slotIdentity(w.Fleet().Snapshot(), key); id != model.IdentityUnknown {
			t.Fatalf("identity %s while the storage is cut, want UNKNOWN", id)
		}
	}
	if st := w.Status(); !st.AsOf.Equal(asOf) || st.DisconnectedSince == nil {
		t.Errorf("after 5 s more without etcd: AsOf %v (was %v), disconnected since %v", st.AsOf, asOf, st.DisconnectedSince)
	}

	restored := time.Now()
	c.RestoreEtcd(t)
	snap, d = waitFor(t, w, restored, 60*time.Second, "reconnected + POD_GONE", func(s *fleet.Snapshot) bool {
		return s.Status.DisconnectedSince == nil && slotIdentity(s, key) == model.IdentityPodGone
	})
	t.Logf("latency: etcd restored → reconnected, the deletion seen: %s", d)
	// A read sent while etcd was cut may be the one that proves it (its
	// answer reads etcd's revision after the restore); AsOf is when it was
	// sent, and it moves on from the frozen one.
	if !snap.Status.AsOf.After(asOf) {
		t.Errorf("AsOf = %v after reconnecting, want a proof after the frozen %v", snap.Status.AsOf, asOf)
	}
	for _, ws := range w.Watches() {
		if !ws.Up {
			t.Errorf("watch %s still down after etcd was restored", ws.Resource)
		}
	}
}

// After each of several API server restarts in a row, the watcher is back
// within seconds of the server: client-go's default back-off grew with each
// outage (11, 18, then 37 s to resync). The bound is generous against the
// back-off's 2 s cap; the latency is logged.
func TestWatcherReconnectsAfterRepeatedRestarts(t *testing.T) {
	c := testcluster.Get(t)
	w, key := watchedRunningSandbox(t, "sbx-r", "127.0.0.39")
	const bound = 10 * time.Second
	for i := range 3 {
		start := time.Now()
		c.StopAPIServer(t)
		waitDisconnected(t, w, key, start)
		// Down long enough for a doubling back-off to grow past the bound.
		time.Sleep(8 * time.Second)
		c.StartAPIServer(t)
		up := time.Now()
		_, d := waitReconnected(t, w, key, up)
		t.Logf("restart %d: kube-apiserver ready → reconnected, identity OK: %s", i+1, d.Round(10*time.Millisecond))
		if d > bound {
			t.Errorf("restart %d: reconnected %s after the server was ready, want within %s", i+1, d.Round(10*time.Millisecond), bound)
		}
	}
}
