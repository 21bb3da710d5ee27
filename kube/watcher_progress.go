package kube

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/sandscope/sandscope/model"
)

// Progress of the initial lists. At 50,000 sandboxes over a VPN the first
// lists take tens of seconds, and "syncing…" alone cannot tell a slow
// server from a dead one. Each fleet watch counts what its initial list has
// received so far (streamed: each object as the reflector gathers it;
// paged: each page), and the watcher asks the server once, with a list of
// one object, how many there are: a streamed list announces no count, and
// remainingItemCount is the server's own figure. The count is asked for
// only when the lists have not synced within countAfter, so that a fleet
// that loads at once costs no request more.

// countAfter is how long the initial lists may take before the watcher asks
// the server how many objects they hold.
const countAfter = time.Second

// listProgress is one resource's initial list, as far as it has come.
type listProgress struct {
	resource string
	gvr      *schema.GroupVersionResource // nil: not counted by the server
	// synced is the watch's HasSynced, set once the watch exists, read by
	// whoever asks for progress meanwhile.
	synced atomic.Pointer[func() bool]

	received atomic.Int64
	total    atomic.Int64 // -1: unknown
	started  atomic.Int64 // unix nanoseconds the current attempt began; 0: not yet
}

// begin starts a new attempt at the initial list: a retried list starts
// from nothing again.
func (p *listProgress) begin(now time.Time) {
	p.received.Store(0)
	p.started.Store(now.UnixNano())
}

// isSynced: the watch's initial list is in; false before the watch exists.
func (p *listProgress) isSynced() bool {
	f := p.synced.Load()
	return f != nil && (*f)()
}

// streamed counts one object of a streamed initial list.
func (p *listProgress) streamed() { p.received.Add(1) }

func (p *listProgress) state(now time.Time) model.ListProgress {
	out := model.ListProgress{Resource: p.resource, Received: p.received.Load(), Done: p.isSynced()}
	if total := p.total.Load(); total >= 0 {
		out.Total = &total
	}
	if s := p.started.Load(); s != 0 && !out.Done {
		if d := now.Sub(time.Unix(0, s)).Seconds(); d >= 0.5 {
			out.PerSecond = float64(out.Received) / d
		}
	}
	return out
}

// progressTracker holds every fleet watch's listProgress.
type progressTracker struct {
	now func() time.Time
	mu  sync.Mutex
	all []*listProgress
}

func (t *progressTracker) track(resource string) *listProgress {
	p := &listProgress{resource: resource}
	p.total.Store(-1)
	t.mu.Lock()
	t.all = append(t.all, p)
	t.mu.Unlock()
	return p
}

// count names the resource the server is asked to count (countTotals).
func (t *progressTracker) count(resource string, gvr schema.GroupVersionResource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.all {
		if p.resource == resource {
			p.gvr = &gvr
		}
	}
}

func (t *progressTracker) list() []*listProgress {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*listProgress(nil), t.all...)
}

// states is every resource's progress, in the order they were added.
func (t *progressTracker) states() []model.ListProgress {
	now := t.now()
	all := t.list()
	out := make([]model.ListProgress, len(all))
	for i, p := range all {
		out[i] = p.state(now)
	}
	return out
}

// countTotals asks the server, once the lists have taken countAfter, how
// many objects each resource not yet synced holds: a list of one object,
// whose remainingItemCount is the rest. Metadata only, so that the answer
// is a few hundred bytes whatever the objects are.
func (t *progressTracker) countTotals(ctx context.Context, cfg *rest.Config, namespace string, synced <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-synced:
		return
	case <-time.After(countAfter):
	}
	// A connection of its own: on a slow link, a request multiplexed on
	// the lists' connection waits behind the bytes of the very lists it
	// counts (TCP delivers in order, whatever HTTP/2 interleaves).
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return // no total: the progress still says how many so far
	}
	for _, p := range t.list() {
		if p.gvr == nil || p.isSynced() || p.total.Load() >= 0 {
			continue
		}
		list, err := mc.Resource(*p.gvr).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			continue
		}
		n := int64(len(list.Items))
		if rest := list.GetRemainingItemCount(); rest != nil {
			n += *rest
		} else if list.GetContinue() != "" {
			continue // more, but the server did not say how many
		}
		p.total.CompareAndSwap(-1, n)
	}
}

// listWatch wraps lw so that the progress follows each attempt at the
// initial list: a streamed one starts counting from nothing, and each page
// of a paged one adds its objects and tells what remains.
func (p *listProgress) listWatch(lw cache.ListerWatcher, now func() time.Time) cache.ListerWatcher {
	return wrapListWatch(lw, &progressListWatch{inner: cache.ToListerWatcherWithContext(lw), p: p, now: now})
}

type progressListWatch struct {
	inner cache.ListerWatcherWithContext
	p     *listProgress
	now   func() time.Time
}

func (l *progressListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	initial := !l.p.isSynced()
	if initial && opts.Continue == "" {
		l.p.begin(l.now())
	}
	obj, err := l.inner.ListWithContext(ctx, opts)
	if err != nil || !initial {
		return obj, err
	}
	n := int64(meta.LenList(obj))
	got := l.p.received.Add(n)
	if lm, err := meta.ListAccessor(obj); err == nil {
		if rest := lm.GetRemainingItemCount(); rest != nil {
			l.p.total.Store(got + *rest)
		} else if lm.GetContinue() == "" {
			l.p.total.Store(got) // the last page, or the whole list
		}
	}
	return obj, nil
}

func (l *progressListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents && !l.p.isSynced() {
		l.p.begin(l.now())
	}
	return l.inner.WatchWithContext(ctx, opts)
}

// SyncProgress says how far each resource's initial list has come. It is
// also in Status().Syncing until the fleet has synced.
func (w *Watcher) SyncProgress() []model.ListProgress { return w.progress.states() }
