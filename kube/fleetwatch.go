package kube

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// A fleet watch is an informer without a cache or a queue of its own: client-go's
// reflector (list, watch, streamed initial lists, re-lists, backoff) writes
// into fleetStore, which hands each object to the fleet at once. The fleet keeps
// every Pod and BatchSandbox it is handed, so a SharedIndexInformer's store
// beside it would hold each object a second time in a map, under a second key
// string; and a FIFO between reflector and fleet costs, for every object of a
// streamed initial list, a key string, a Deltas slice and (while its queue is
// deep, as it is for all of that list) a trace record: a fifth of what the
// client allocated in a 50,000-sandbox start-up, each a reason for the
// collector to run. The fleet answers a re-list's question of which objects
// it knows (the missing ones become deletes).
//
// Pools and agent Sandboxes, of which there are few, keep a store of their
// own for that question (addCachedWatch): they are fleet watches too, so
// that every watch reconnects on the same short back-off.

// fleetWatch is the controller of one resource: a reflector writing into a
// fleetStore.
type fleetWatch struct {
	reflector *cache.Reflector
	store     *fleetStore
}

func (c *fleetWatch) RunWithContext(ctx context.Context) { c.reflector.RunWithContext(ctx) }

// HasSynced reports whether the fleet has seen the initial list.
func (c *fleetWatch) HasSynced() bool { return c.store.synced.Load() }

// listAfter makes c hand over its initial list only once first has handed
// over its own (or done is closed). The fleet derives a sandbox again each
// time one of its sources arrives: when the Pods are in first, each sandbox
// is derived once, with its Pods, as it arrives; when the sandboxes are in
// first, each is derived without its Pods, then again for every Pod. Which
// of two streamed lists ends first is a race, and the losing order cost half
// as much again in CPU and allocation (BenchmarkInitialLists). Holding one
// list back costs no time to the sync, which waits for both. Call before Run.
func (c *fleetWatch) listAfter(first *fleetWatch, done <-chan struct{}) {
	c.store.after, c.store.done = first.store.listed, done
}

// newFleetWatch builds the controller of one resource. The handler gets
// OnAdd for every object added, updated or re-listed (the fleet's upserts do
// not tell them apart) and OnDelete, with a DeletedFinalStateUnknown when the
// delete was only seen in a re-list. onWatchError (nil: none) hears every
// error of a list or a watch request, as a reflector's watch error handler
// would.
func newFleetWatch(resource string, lw cache.ListerWatcher, objType runtime.Object, transform cache.TransformFunc,
	known cache.KeyListerGetter, handler cache.ResourceEventHandler, onWatchError cache.WatchErrorHandlerWithContext) *fleetWatch {
	store := &fleetStore{transform: transform, known: known, handler: handler, listed: make(chan struct{})}
	if onWatchError != nil {
		lw = newReportingListWatch(lw, onWatchError)
	}
	r := cache.NewReflectorWithOptions(lw, objType, store, cache.ReflectorOptions{TypeDescription: resource, Backoff: reconnectBackoff()})
	return &fleetWatch{reflector: r, store: store}
}

// reconnectBackoff is how long a watch waits before it lists or watches
// again after a failure. client-go's default doubles from 0.8 s (with as
// much again of jitter) up to 30 s, and forgets only after 2 minutes without
// a failure: after each of a few API server restarts in a row the view came
// back later (11, 18, then 37 s after the server was up). The watcher holds
// one watch per resource, four at most per cluster, so retrying every 2 to
// 3 s while the server is away costs it next to nothing, and the view is
// back within seconds of the server.
func reconnectBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 10, Cap: 2 * time.Second}
}

// storingHandler keeps addCachedWatch's record of the objects it handed over, for
// the resources the fleet cannot list by key.
type storingHandler struct {
	store cache.Store
	next  cache.ResourceEventHandler
}

func (h storingHandler) OnAdd(obj any, isInInitialList bool) {
	_ = h.store.Add(obj) // keyed by namespace/name, which every object has
	h.next.OnAdd(obj, isInInitialList)
}

func (h storingHandler) OnUpdate(oldObj, newObj any) {
	_ = h.store.Update(newObj)
	h.next.OnUpdate(oldObj, newObj)
}

func (h storingHandler) OnDelete(obj any) {
	_ = h.store.Delete(obj)
	h.next.OnDelete(obj)
}

// fleetStore is the reflector's store: it transforms each object and hands
// it to the handler. The reflector calls it from one goroutine. It is a
// TransformingStore so that a streamed initial list, which the reflector
// gathers in a temporary store of its own, is held there already slim.
type fleetStore struct {
	transform cache.TransformFunc
	known     cache.KeyListerGetter
	handler   cache.ResourceEventHandler
	synced    atomic.Bool
	// streamed (nil: none) hears each object of a streamed initial list as
	// the reflector gathers it, before any of it reaches the handler: how
	// far the list has come (watcher_progress.go).
	streamed func()

	// listed is closed once the initial list has been handed over.
	listed     chan struct{}
	listedOnce sync.Once
	// after (nil: none) holds the initial list back until it, or done, is
	// closed: see listAfter.
	after, done <-chan struct{}
}

var (
	_ cache.ReflectorStore    = (*fleetStore)(nil)
	_ cache.TransformingStore = (*fleetStore)(nil)
)

// Transformer is what the reflector applies to each object of a streamed
// initial list as it gathers it in a store of its own.
func (s *fleetStore) Transformer() cache.TransformFunc {
	if s.streamed == nil || s.transform == nil {
		return s.transform
	}
	return func(obj any) (any, error) {
		s.streamed()
		return s.transform(obj)
	}
}

func (s *fleetStore) slim(obj any) (any, error) {
	if s.transform == nil {
		return obj, nil
	}
	return s.transform(obj)
}

func (s *fleetStore) Add(obj any) error {
	obj, err := s.slim(obj)
	if err != nil {
		return err
	}
	s.handler.OnAdd(obj, false)
	return nil
}

func (s *fleetStore) Update(obj any) error { return s.Add(obj) }

func (s *fleetStore) Delete(obj any) error {
	obj, err := s.slim(obj)
	if err != nil {
		return err
	}
	s.handler.OnDelete(obj)
	return nil
}

// Replace hands the handler every listed object, then deletes what the
// fleet knew of this resource before and the list no longer has. The first
// Replace (the initial list) marks the store synced once it is all handed
// over.
func (s *fleetStore) Replace(list []any, _ string) error {
	initial := !s.synced.Load()
	if initial && s.after != nil {
		select {
		case <-s.after:
		case <-s.done:
		}
	}
	// Into an empty fleet (the initial list) nothing can be stale, and the
	// listed keys are not needed.
	var listed map[string]struct{}
	knownBefore := s.known.ListKeys()
	if len(knownBefore) > 0 {
		listed = make(map[string]struct{}, len(list))
	} else if r, ok := s.known.(reserver); ok {
		r.Reserve(len(list))
	}
	for _, obj := range list {
		obj, err := s.slim(obj)
		if err != nil {
			return err
		}
		if listed != nil {
			key, err := cache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				return fmt.Errorf("replacing: %w", err)
			}
			listed[key] = struct{}{}
		}
		s.handler.OnAdd(obj, initial)
	}
	for _, key := range knownBefore {
		if _, ok := listed[key]; ok {
			continue
		}
		if obj, ok, _ := s.known.GetByKey(key); ok {
			s.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: obj})
		}
	}
	s.synced.Store(true)
	s.listedOnce.Do(func() { close(s.listed) })
	return nil
}

// Resync is a no-op: the fleet has no resync period.
func (s *fleetStore) Resync() error { return nil }

// reportingListWatch passes a ListerWatcher's calls through and reports
// their errors, since a bare reflector takes no watch error handler.
type reportingListWatch struct {
	inner  cache.ListerWatcherWithContext
	report cache.WatchErrorHandlerWithContext
}

// newReportingListWatch is lw reporting its errors to report.
func newReportingListWatch(lw cache.ListerWatcher, report cache.WatchErrorHandlerWithContext) cache.ListerWatcher {
	return wrapListWatch(lw, &reportingListWatch{inner: cache.ToListerWatcherWithContext(lw), report: report})
}

func (l *reportingListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := l.inner.ListWithContext(ctx, opts)
	if err != nil {
		l.report(ctx, nil, err)
	}
	return obj, err
}

func (l *reportingListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.inner.WatchWithContext(ctx, opts)
	if err != nil {
		l.report(ctx, nil, err)
	}
	return w, err
}

// wrapListWatch is the ListerWatcher a reflector takes, made of wrapper's
// calls, which wrap lw's. It keeps lw's answer about streamed initial
// lists: the reflector asks only the ListerWatcher it is given, and a
// wrapper that forgot it would stream the lists of a client that cannot
// (the demo's fake clientsets). client-go's ListWatch also serves the calls
// without a context that a ListerWatcher must have.
func wrapListWatch(lw cache.ListerWatcher, wrapper cache.ListerWatcherWithContext) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc:  wrapper.ListWithContext,
		WatchFuncWithContext: wrapper.WatchWithContext,
	}, lw)
}

// reserver is a store's known objects that can make room for a list of n
// before it is handed over (fleetKnown): the fleet sizes its maps once
// instead of growing them through the list.
type reserver interface{ Reserve(n int) }

// fleetKnown is the fleet seen as a FIFO's known objects: its keys and its
// objects of one kind.
type fleetKnown[T any] struct {
	keys    func() []string
	get     func(key string) (T, bool)
	reserve func(n int)
}

func (k fleetKnown[T]) ListKeys() []string { return k.keys() }

func (k fleetKnown[T]) Reserve(n int) {
	if k.reserve != nil {
		k.reserve(n)
	}
}

func (k fleetKnown[T]) GetByKey(key string) (any, bool, error) {
	if obj, ok := k.get(key); ok {
		return obj, true, nil
	}
	return nil, false, nil
}

func fleetPods(f *fleet.Fleet) cache.KeyListerGetter {
	return fleetKnown[*model.Pod]{keys: f.PodKeys, get: f.PodByKey, reserve: f.ReservePods}
}

func fleetBatchSandboxes(f *fleet.Fleet) cache.KeyListerGetter {
	return fleetKnown[*model.BatchSandbox]{keys: f.BatchSandboxKeys, get: f.BatchSandboxByKey, reserve: f.ReserveBatchSandboxes}
}

// podListWatch lists and watches Pods through a typed client, as client-go's
// Pod informer does.
func podListWatch(kc kubernetes.Interface, namespace string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return kc.CoreV1().Pods(namespace).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return kc.CoreV1().Pods(namespace).Watch(ctx, opts)
		},
	}
}

// dynamicListWatch lists and watches one resource through a dynamic client,
// as a dynamic informer does.
func dynamicListWatch(dc dynamic.Interface, gvr schema.GroupVersionResource, namespace string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return dc.Resource(gvr).Namespace(namespace).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return dc.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
		},
	}
}
