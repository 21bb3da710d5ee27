package sim

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

// replay is the simulator playing an engine's controller on a fake clock
// through the real API server, with what a reader sees recorded write by
// write (the engine's objects and the Pods of the namespace) and a
// kube.Watcher reading the same namespace: the setup of the controller
// replay tests, written once.
type replay struct {
	c       *testcluster.Cluster
	ns      string
	ctx     context.Context
	start   time.Time
	s       *Sim
	w       *kube.Watcher
	objects *recorder // the engine's objects (gvr)
	pods    *recorder
}

// startReplay starts cfg's simulator (its namespace, nodes and clock set
// here) after the recorders and the watcher, so that they see every write.
func startReplay(t *testing.T, gvr schema.GroupVersionResource, cfg Config) *replay {
	t.Helper()
	c := testcluster.Get(t)
	r := &replay{c: c, ns: c.Namespace(t), ctx: testcluster.Context(t)}
	ow, err := c.Dynamic.Resource(gvr).Namespace(r.ns).Watch(r.ctx, metav1.ListOptions{})
	r.objects = record(t, ow, err)
	pw, err := c.Kube.CoreV1().Pods(r.ns).Watch(r.ctx, metav1.ListOptions{})
	r.pods = record(t, pw, err)

	clients, err := kube.NewClients(c.Config, r.ns)
	if err != nil {
		t.Fatal(err)
	}
	r.w = kube.NewWatcher(clients, kube.WatcherOptions{Namespace: r.ns})
	wctx, stop := context.WithCancel(r.ctx)
	t.Cleanup(stop)
	go r.w.Run(wctx) //nolint:errcheck // WaitForSync fails the test if it never syncs
	if err := r.w.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}

	r.start = time.Now()
	cfg.Namespaces, cfg.NodePrefix, cfg.Clock = []string{r.ns}, r.ns+"-node-", testingclock.NewFakeClock(r.start)
	if r.s, err = New(c.Kube, c.Dynamic, cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.s.Start(r.ctx); err != nil {
		t.Fatal(err)
	}
	return r
}

// runUntil advances the simulated clock by step until done, failing the
// test with what when limit of simulated time passes first, and then when
// the API server refused any simulated write.
func (r *replay) runUntil(t *testing.T, step, limit time.Duration, done func() bool, what string) {
	t.Helper()
	for at := r.start; !done(); at = at.Add(step) {
		if at.After(r.start.Add(limit)) {
			t.Fatal(what)
		}
		if err := r.s.RunUntil(r.ctx, at); err != nil {
			t.Fatal(err)
		}
	}
	if errs := r.s.Errors(); len(errs) > 0 {
		t.Fatalf("the API server refused simulated writes: %v", errs)
	}
}

// recorder keeps every event of a watch, in order.
type recorder struct {
	mu     sync.Mutex
	events []watch.Event
}

func record(t *testing.T, w watch.Interface, err error) *recorder {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *recorder) snapshot() []watch.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// holds says whether the recorder got the write that made resourceVersion.
func (r *recorder) holds(resourceVersion string) bool {
	return slices.ContainsFunc(r.snapshot(), func(ev watch.Event) bool {
		m, err := meta.Accessor(ev.Object)
		return err == nil && m.GetResourceVersion() == resourceVersion
	})
}
