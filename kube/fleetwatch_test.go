package kube

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/sandscope/sandscope/kube/codec"
)

// noWatchList marks a ListerWatcher as not serving streamed initial lists, so
// the reflector lists first, as it does with the fake clients.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// TestFleetWatchRelistDeletes drives a fleet watch through a list, watch
// events, and a re-list that no longer has a Pod: with no cache of its own,
// the watch must learn from the fleet which Pods to delete.
func TestFleetWatchRelistDeletes(t *testing.T) {
	t.Parallel()
	pod := func(name, ip string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
		}
	}
	var mu sync.Mutex
	lists := []*corev1.PodList{
		{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: []corev1.Pod{*pod("a", "10.0.0.1"), *pod("b", "10.0.0.2")}},
		{ListMeta: metav1.ListMeta{ResourceVersion: "20"}, Items: []corev1.Pod{*pod("b", "10.0.0.2")}},
	}
	watches := make(chan *watch.FakeWatcher, 2)
	typed := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			l := lists[0]
			if len(lists) > 1 {
				lists = lists[1:]
			}
			return l.DeepCopy(), nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			fw := watch.NewFake()
			watches <- fw
			return fw, nil
		},
	}

	w := NewWatcher(&Clients{}, WatcherOptions{})
	lw := codec.PodsOverWire(typed, noWatchList{}, w.lists)
	c := newFleetWatch("pods", lw, &codec.VersionedPod{}, codec.UnwrapPod, fleetPods(w.fleet), w.podHandler(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); c.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return cond(), nil })
		if err != nil {
			t.Fatalf("waiting until %s: %v", what, err)
		}
	}
	has := func(name string) bool { _, ok := w.fleet.PodByKey("ns/" + name); return ok }
	waitFor("the initial list is in the fleet", c.HasSynced)
	if !has("a") || !has("b") {
		t.Fatalf("after sync: a=%v b=%v, want both", has("a"), has("b"))
	}

	fw := <-watches
	changed := pod("b", "10.0.0.9")
	fw.Modify(changed)
	waitFor("b's new IP is in the fleet", func() bool {
		p, ok := w.fleet.PodByKey("ns/b")
		return ok && p.Status.PodIP == "10.0.0.9"
	})
	fw.Add(pod("c", "10.0.0.3"))
	waitFor("c is added", func() bool { return has("c") })
	fw.Delete(pod("c", "10.0.0.3"))
	waitFor("c is deleted", func() bool { return !has("c") })

	// The server no longer has the watch's resource version: the reflector
	// re-lists, and a, missing from the new list, must go.
	fw.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	waitFor("a, missing from the re-list, is deleted", func() bool { return !has("a") })
	if !has("b") {
		t.Fatal("b, still listed, was deleted by the re-list")
	}
}

// A fleet watch has no reflector error handler of its own: the errors of its
// list and watch requests reach onWatchError through reportingListWatch,
// which keeps the inner ListerWatcher's answer about streamed lists.
func TestFleetWatchReportsRequestErrors(t *testing.T) {
	t.Parallel()
	forbidden := apierrors.NewForbidden(corev1.Resource("pods"), "", nil)
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, forbidden },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, forbidden
		},
	}, noWatchList{})
	reported := make(chan error, 10)
	w := NewWatcher(&Clients{}, WatcherOptions{})
	c := newFleetWatch("pods", lw, &codec.VersionedPod{}, codec.UnwrapPod, fleetPods(w.fleet), w.podHandler(),
		func(_ context.Context, _ *cache.Reflector, err error) { reported <- err })
	if !watchlist.DoesClientNotSupportWatchListSemantics(newReportingListWatch(lw, nil)) {
		t.Fatal("the wrapper lost the inner ListerWatcher's 'no streamed lists'")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case err := <-reported:
		if !apierrors.IsForbidden(err) {
			t.Fatalf("reported %v, want the forbidden list", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the forbidden list was never reported")
	}
	if c.HasSynced() {
		t.Fatal("synced although every list was refused")
	}
}

// A watch listed after another hands over its initial list only once the
// other has handed over its own, or once its done channel closes; later
// lists are not held back.
func TestFleetWatchListAfter(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	record := func(name string) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, name)
		}}
	}
	none := fleetKnown[any]{keys: func() []string { return nil }, get: func(string) (any, bool) { return nil, false }}
	watchOf := func(name string) *fleetWatch {
		return newFleetWatch(name, &cache.ListWatch{}, &corev1.Pod{}, nil, none, record(name), nil)
	}
	first, second := watchOf("pods"), watchOf("sandboxes")
	second.listAfter(first, make(chan struct{}))

	replaced := make(chan error, 1)
	go func() { replaced <- second.store.Replace([]any{"s"}, "1") }()
	select {
	case err := <-replaced:
		t.Fatalf("the second list was handed over before the first (err %v)", err)
	case <-time.After(100 * time.Millisecond): // held back: nothing to wait for but time
	}
	if err := first.store.Replace([]any{"p"}, "1"); err != nil {
		t.Fatal(err)
	}
	if err := <-replaced; err != nil {
		t.Fatal(err)
	}
	if err := second.store.Replace([]any{"s2"}, "2"); err != nil { // a re-list: not held back
		t.Fatal(err)
	}
	mu.Lock()
	if got := strings.Join(order, ","); got != "pods,sandboxes,sandboxes" {
		t.Fatalf("handed over %s, want pods,sandboxes,sandboxes", got)
	}
	mu.Unlock()

	// Stopped before the first list came: the second is not held forever.
	done := make(chan struct{})
	third := watchOf("agents")
	third.listAfter(watchOf("never"), done)
	close(done)
	if err := third.store.Replace([]any{"a"}, "1"); err != nil {
		t.Fatal(err)
	}
}
