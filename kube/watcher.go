package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/sandscope/sandscope/internal/broadcast"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/kube/codec"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Defaults of WatcherOptions.
const (
	DefaultTickEvery = time.Second
	// probeEvery is how often the watcher proves its data fresh with a
	// consistent read of the storage (freshness.go): one small request per
	// period per context, whatever the size of the fleet.
	probeEvery = 2 * time.Second
	// freshBudget: a consistent read that has not answered within it does
	// not prove the data current, and the connection counts as lost. An API
	// server that answers but cannot read etcd keeps its watches open and
	// silent; only this read tells.
	freshBudget = 5 * time.Second
	// stallAfter: a probe that has no answer after this long, while nothing
	// else came from the server for as long either, means the server is
	// frozen (a stopped process, a partition without a reset): the
	// connection counts as lost at once, without waiting out the budget.
	stallAfter = 3 * time.Second
	syncPoll   = 50 * time.Millisecond
)

// WatcherOptions configure a Watcher.
type WatcherOptions struct {
	// Namespace limits every informer to one namespace; "" watches all.
	Namespace string
	// Sources says which engine resources to watch; nil runs DiscoverSources
	// at the start of Run.
	Sources *Sources
	// PodSelector picks plain-Pod sandboxes (label selector syntax); "" is
	// the model's default (has label opensandbox.io/id). Every Pod is still
	// watched: any Pod may be the one holding a sandbox's recorded IP.
	PodSelector string
	// StuckAfter: a Pod deleting longer than its grace period plus this is
	// stuck Terminating. 0 is the model's default (5 min).
	StuckAfter time.Duration
	// ImageConfig reads image configs for ENTRYPOINT_NOT_RUN; nil turns
	// image checks off.
	ImageConfig ImageConfigReader
	// ReadOnly and Demo are shown in the status line as given.
	ReadOnly, Demo bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// TickEvery is how often time-based states (stuck Terminating, expiring
	// soon) are re-derived. Default 1 s.
	TickEvery time.Duration
}

// Watcher keeps a fleet.Fleet up to date from watches: Pods and
// BatchSandboxes feed the fleet with no cache beside it (fleetwatch.go),
// Pools and agent Sandboxes come through dynamic informers; every object is
// slimmed by a transform before anything keeps it. It also runs the fleet's
// clock, the image-config checks, and reports sync and connection state
// through model.SourceStatus.
//
// Change notifications: Fleet().Changes() has a single consumer, which is
// the Watcher itself once Run starts. Readers call Subscribe instead.
type Watcher struct {
	clients     *Clients
	opts        WatcherOptions
	now         func() time.Time
	fleet       *fleet.Fleet
	selectorErr error
	health      *apiHealth
	changes     broadcast.Signal
	lists       *mem.StringLists // commands and finalizers shared by the cached objects
	progress    *progressTracker // how far each initial list has come (watcher_progress.go)

	sourcesKnown chan struct{} // closed once Run knows its sources
	sourcesFound *Sources      // written before sourcesKnown closes; nil: discovery failed

	running   atomic.Bool
	syncedNow atomic.Bool   // every informer that can sync has; published before synced closes
	synced    chan struct{} // closed once the fleet has been told it is synced
	lastEvent atomic.Int64  // unix nanoseconds of the last informer event

	mu           sync.Mutex
	notes        []string       // from discovery
	notInstalled []model.Engine // engines whose CRD is missing, from discovery
	informers    []*watchedInformer

	publishMu sync.Mutex
	published *model.SourceStatus
}

// watchedInformer is one informer or fleet watch: how to run it, and
// whether the fleet has seen its initial list.
type watchedInformer struct {
	resource  string // plural, as in the request path and in messages
	run       func(context.Context)
	hasSynced func() bool
}

// NewWatcher builds a Watcher over c. Nothing talks to the server until Run.
func NewWatcher(c *Clients, opts WatcherOptions) *Watcher {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TickEvery <= 0 {
		opts.TickEvery = DefaultTickEvery
	}
	w := &Watcher{
		clients: c,
		opts:    opts,
		now:     opts.Now,
		lists:   mem.NewStringLists(),
		synced:  make(chan struct{}),

		sourcesKnown: make(chan struct{}),
	}
	w.progress = &progressTracker{now: w.now}
	fleetOpts := fleet.Options{StuckAfter: opts.StuckAfter, Now: opts.Now}
	if opts.PodSelector != "" {
		sel, err := labels.Parse(opts.PodSelector)
		if err != nil {
			w.selectorErr = fmt.Errorf("invalid pod selector %q: %w", opts.PodSelector, err)
		} else {
			fleetOpts.PodSelector = sel
		}
	}
	w.fleet = fleet.New(fleetOpts)
	if opts.Namespace != "" {
		// Dead sandboxes' IPs may be held in other namespaces: unchecked
		// until looked up there (foreign.go).
		w.fleet.TrackForeign()
	}
	w.health = newAPIHealth(w.now, w.publishStatus)
	return w
}

// Fleet is the model the watcher feeds. Take Snapshots from it; for change
// notifications use Subscribe, not Fleet().Changes().
func (w *Watcher) Fleet() *fleet.Fleet { return w.fleet }

// Subscribe returns a channel that receives a coalesced signal whenever the
// fleet changed (capacity 1: several changes while the reader is busy make
// one signal), and a function that ends the subscription. The channel holds
// one signal from the start, so the first snapshot is taken at once. Any
// number of readers (the TUI, the watcher's own image checks) may subscribe,
// before or after Run starts.
func (w *Watcher) Subscribe() (<-chan struct{}, func()) { return w.changes.Subscribe() }

// WaitForSync blocks until every informer delivered its initial list to the
// fleet (informers for resources the server denies do not count) and the
// fleet knows it is synced, or ctx ends.
func (w *Watcher) WaitForSync(ctx context.Context) error {
	select {
	case <-w.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the informers to sync: %w", ctx.Err())
	}
}

// Run starts the Pods' watch, discovers the other sources (unless given)
// meanwhile, starts their informers and the watcher's loops, and returns
// when ctx ends. It returns an error only when it cannot start.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watcher is already running")
	}
	if w.selectorErr != nil {
		w.discovered(nil)
		return w.selectorErr
	}
	kc, dc, cfg, err := w.informerClients()
	if err != nil {
		w.discovered(nil)
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := logr.FromContext(ctx); err != nil {
		// client-go's reflectors log through the context's logger, by default
		// to stderr, which would tear through a terminal UI. The watcher
		// reports what matters through Status; a caller that wants the logs
		// puts a logger into ctx.
		ctx = klog.NewContext(ctx, logr.Discard())
	}
	var wg sync.WaitGroup
	goLoop := func(loop func(context.Context)) {
		wg.Add(1)
		crash.Go(func() {
			defer wg.Done()
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			loop(ctx)
		})
	}
	stop := func() {
		cancel()
		wg.Wait()
	}

	ns := w.opts.Namespace
	// Pods and BatchSandboxes, the fleet's bulk, are decoded straight into
	// the model's types (package codec), from the server's
	// bytes or, for clients without a server, from their objects encoded as
	// a server would send them (codec.PodsOverWire).
	var podLW cache.ListerWatcher
	if cfg != nil {
		if podLW, err = codec.NewPodListWatch(cfg, ns, w.lists); err != nil {
			w.discovered(nil)
			return err
		}
	} else {
		podLW = codec.PodsOverWire(podListWatch(kc, ns), kc, w.lists)
	}
	pods := w.addFleetWatch("pods", podLW, &codec.VersionedPod{}, codec.UnwrapPod, fleetPods(w.fleet), w.podHandler())
	// Pods always exist: their list, the bulk of the bytes, starts beside
	// discovery rather than a round trip or two after it. Nothing counts as
	// synced before discovery has said what else to wait for
	// (waitForInformers starts after it).
	goLoop(pods.RunWithContext)

	sources := w.opts.Sources
	if sources == nil {
		found, err := discoverRetrying(ctx, discoveryBackoff, w.clients.Sources)
		if err != nil {
			w.discovered(nil)
			stop()
			return err
		}
		sources = &found
	}
	w.discovered(sources)
	w.mu.Lock()
	w.notes = append([]string(nil), sources.Notes...)
	w.notInstalled = append([]model.Engine(nil), sources.NotInstalled...)
	w.mu.Unlock()
	w.publishStatus()

	if dc == nil && (sources.BatchSandbox || sources.Pool || sources.Agent != nil) {
		stop()
		return errors.New("watching custom resources needs a dynamic client")
	}
	w.mu.Lock()
	started := len(w.informers)
	w.mu.Unlock()
	if err := w.addEngineWatches(ctx, cfg, dc, pods, *sources); err != nil {
		stop()
		return err
	}

	goLoop(w.forwardChanges)
	goLoop(w.runTicker)
	if ns != "" {
		goLoop(w.runForeignHolders)
	}
	if cfg != nil {
		w.health.proving()
		probe := newStorageProbe(kc.CoreV1().RESTClient(), ns)
		goLoop(func(ctx context.Context) { w.runProbe(ctx, probe.read) })
		goLoop(func(ctx context.Context) { w.progress.countTotals(ctx, cfg, ns, w.synced) })
	}
	if w.opts.ImageConfig != nil {
		sub, unsubscribe := w.Subscribe()
		defer unsubscribe()
		goLoop(func(ctx context.Context) { w.runImageChecks(ctx, sub) })
	}

	w.mu.Lock()
	for _, wi := range w.informers[started:] {
		goLoop(wi.run)
	}
	w.mu.Unlock()
	goLoop(w.waitForInformers)

	<-ctx.Done()
	stop()
	return nil
}

// addEngineWatches registers the watches of the engine resources sources
// found, after the Pods' (pods), and the resources whose count the server
// is asked for when their initial lists take long.
func (w *Watcher) addEngineWatches(ctx context.Context, cfg *rest.Config, dc dynamic.Interface, pods *fleetWatch, sources Sources) error {
	ns := w.opts.Namespace
	if sources.BatchSandbox {
		var lw cache.ListerWatcher
		if cfg != nil {
			var err error
			if lw, err = codec.NewBatchSandboxListWatch(cfg, ns, w.lists); err != nil {
				return err
			}
		} else {
			lw = codec.BatchSandboxesOverWire(dynamicListWatch(dc, BatchSandboxGVR, ns), dc, w.lists)
		}
		w.addFleetWatch(BatchSandboxGVR.Resource, lw, &model.BatchSandbox{}, codec.SlimBatchSandbox, fleetBatchSandboxes(w.fleet), w.batchSandboxHandler()).
			listAfter(pods, ctx.Done())
	}
	if sources.Pool {
		w.addCachedWatch(PoolGVR.Resource, cache.ToListWatcherWithWatchListSemantics(dynamicListWatch(dc, PoolGVR, ns), dc), slimPool, w.poolHandler())
	}
	if sources.Agent != nil {
		gvr := *sources.Agent
		w.addCachedWatch(gvr.Resource, cache.ToListWatcherWithWatchListSemantics(dynamicListWatch(dc, gvr, ns), dc), slimAgentSandbox(gvr), w.agentSandboxHandler())
	}
	if err := w.addAgentExtensions(dc, ns, sources.AgentExt); err != nil {
		return err
	}
	// The agent extensions hold few objects.
	w.progress.count("pods", corev1.SchemeGroupVersion.WithResource("pods"))
	w.progress.count(BatchSandboxGVR.Resource, BatchSandboxGVR)
	w.progress.count(PoolGVR.Resource, PoolGVR)
	if sources.Agent != nil {
		w.progress.count(sources.Agent.Resource, *sources.Agent)
	}
	return nil
}

// discovered records what the watcher watches beyond the Pods (nil: it
// could not tell), for Sources.
func (w *Watcher) discovered(s *Sources) {
	w.sourcesFound = s
	close(w.sourcesKnown)
}

// Sources waits until Run knows which engines it watches (given, or
// discovered beside the Pods' list) and returns them; nil when discovery
// failed (Run returns why) or ctx ended first. What reads single objects
// takes its agent-sandbox version from here, to agree with the watcher.
func (w *Watcher) Sources(ctx context.Context) *Sources {
	select {
	case <-w.sourcesKnown:
		return w.sourcesFound
	case <-ctx.Done():
		return nil
	}
}

// Discovered reports whether Run knows its sources (given, or discovery
// answered). Until then, and for good when discovery failed or was cut
// short, no engine's objects are asked for, and SyncProgress says nothing of
// them (its totals cover the Pods alone). A caller whose time ran out may
// read it after Run has already given discovery up: "not waiting any more"
// is not "answered".
func (w *Watcher) Discovered() bool {
	select {
	case <-w.sourcesKnown:
		return w.sourcesFound != nil
	default:
		return false
	}
}

// informerClients builds the informers' clients: their own, whose transport
// reports every request's outcome to w.health (the freshness probe uses the
// typed one), and the config they are built from (for more clients).
// Clients without a rest.Config (fake clientsets: tests, the demo) are used
// as they are, without connection tracking or probe, and the config is nil.
func (w *Watcher) informerClients() (kubernetes.Interface, dynamic.Interface, *rest.Config, error) {
	if w.clients.Config == nil {
		return w.clients.Kube, w.clients.Dynamic, nil, nil
	}
	cfg := rest.CopyConfig(w.clients.Config)
	cfg.Wrap(w.health.wrap)
	if !cfg.DisableCompression { // the kubeconfig's disable-compression
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gzipTransport{next: rt} })
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("building the watcher's kubernetes client: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("building the watcher's dynamic client: %w", err)
	}
	return kc, dc, cfg, nil
}

// addCachedWatch registers a fleet watch of a resource with few objects,
// which the fleet does not list by key: a store of its own remembers what it
// handed over, for a re-list to tell which objects are gone.
func (w *Watcher) addCachedWatch(resource string, lw cache.ListerWatcher, transform cache.TransformFunc, handler cache.ResourceEventHandler) {
	known := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	w.addFleetWatch(resource, lw, &unstructured.Unstructured{}, transform, known, storingHandler{store: known, next: handler})
}

// addFleetWatch registers a watch that feeds the fleet without a cache of
// its own (fleetwatch.go).
func (w *Watcher) addFleetWatch(resource string, lw cache.ListerWatcher, objType runtime.Object, transform cache.TransformFunc, known cache.KeyListerGetter, handler cache.ResourceEventHandler) *fleetWatch {
	p := w.progress.track(resource)
	c := newFleetWatch(resource, p.listWatch(lw, w.now), objType, transform, known, handler, w.watchErrorHandler(resource))
	c.store.streamed = p.streamed
	hasSynced := c.HasSynced
	p.synced.Store(&hasSynced)
	w.mu.Lock()
	w.informers = append(w.informers, &watchedInformer{resource: resource, run: c.RunWithContext, hasSynced: c.HasSynced})
	w.mu.Unlock()
	return c
}

// watchErrorHandler replaces client-go's default, which logs to stderr (and
// would tear through a terminal UI). Connection failures are already seen by
// the health transport; what only this handler sees is the server denying
// a resource (forbidden, or not served).
func (w *Watcher) watchErrorHandler(resource string) cache.WatchErrorHandlerWithContext {
	return func(_ context.Context, _ *cache.Reflector, err error) {
		switch {
		case apierrors.IsForbidden(err):
			msg, verb := forbiddenRequest(resource, w.opts.Namespace, err)
			w.health.deny(resource, denial{message: msg, forbidden: true, watchOnly: verb == "watch"})
		case apierrors.IsNotFound(err):
			w.health.deny(resource, denial{message: "list " + resource + ": not served (CRD removed?)"})
		}
	}
}

// ConnRefusedSince reports since when every attempt to connect to the
// server has been refused (nothing listens at its address), with no answer
// in between; ok is false while the server answers, or is merely silent or
// slow. A one-shot read gives up on a server that is not there instead of
// waiting out its timeout.
func (w *Watcher) ConnRefusedSince() (since time.Time, ok bool) {
	return w.health.connectionsRefusedSince()
}

// Unserved reports whether the server will not serve the watcher's
// requests for resource ("pods", "batchsandboxes", ...): forbidden, or not
// served at all.
func (w *Watcher) Unserved(resource string) bool { return w.health.isDenied(resource) }

// waitForInformers marks the fleet synced once every informer's handler has
// seen its initial list, not counting informers the server denies.
func (w *Watcher) waitForInformers(ctx context.Context) {
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for {
		if w.allSynced() {
			w.syncedNow.Store(true)
			w.publishStatus()
			close(w.synced)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *Watcher) allSynced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wi := range w.informers {
		if !wi.hasSynced() && !w.health.isDenied(wi.resource) {
			return false
		}
	}
	return true
}

// forwardChanges is the single reader of Fleet.Changes; it fans the signal
// out to the subscribers.
func (w *Watcher) forwardChanges(ctx context.Context) {
	fleetChanges := func() (<-chan struct{}, func()) { return w.fleet.Changes(), func() {} }
	broadcast.Relay(ctx, fleetChanges, w.changes.Notify)
}

// runTicker drives the fleet's time-based states and keeps AsOf current.
// It ticks on the wall clock's TickEvery, half a period after the
// freshness probes (runProbe): every watcher of the process then publishes
// the AsOf its probe proved at the same moment, and a TUI over several
// contexts draws their changes in one frame instead of one frame each.
func (w *Watcher) runTicker(ctx context.Context) {
	every := w.opts.TickEvery
	repeatOnTheClock(ctx, func(now time.Time) time.Duration { return untilOnTheClock(now, every, every/2) },
		func() {
			w.fleet.Tick()
			w.publishStatus()
		})
}

// Status is the current source status: what the fleet is built from and how
// fresh it is. AsOf is when the data was last proven current: the sending of
// the last consistent read of the storage that answered (freshness.go); it
// stops moving when the connection or the storage is lost. Clients without a
// server (fake clientsets) have no probe: there AsOf is the last event.
func (w *Watcher) Status() model.SourceStatus {
	c := w.clients
	st := model.SourceStatus{
		Context:       c.Context,
		Cluster:       c.Cluster,
		User:          c.User,
		ServerVersion: c.ServerVersion,
		Server:        c.Server,
		ReadOnly:      w.opts.ReadOnly,
		Demo:          w.opts.Demo,
		Synced:        w.syncedNow.Load(),
	}
	if w.opts.Namespace != "" {
		st.Namespaces = []string{w.opts.Namespace}
	}
	h := w.health.state()
	st.DisconnectedSince = h.disconnectedSince
	if h.proves {
		// An event proves nothing about what else is missing: only the
		// storage read does.
		st.AsOf = h.proven
	} else {
		st.AsOf = h.lastContact
		if ev := w.lastEvent.Load(); ev != 0 {
			if t := time.Unix(0, ev); t.After(st.AsOf) {
				st.AsOf = t
			}
		}
	}
	st.Forbidden = h.forbidden
	w.mu.Lock()
	st.Notes = append(st.Notes, w.notes...)
	st.NotInstalled = append(st.NotInstalled, w.notInstalled...)
	w.mu.Unlock()
	st.Notes = append(st.Notes, h.unavailable...)
	if !st.Synced {
		st.Syncing = w.progress.states()
	}
	return st
}

// publishStatus hands the status to the fleet when it changed.
func (w *Watcher) publishStatus() {
	w.publishMu.Lock()
	defer w.publishMu.Unlock()
	st := w.Status()
	if w.published != nil && reflect.DeepEqual(*w.published, st) {
		return
	}
	w.published = &st
	w.fleet.SetStatus(st)
}

func (w *Watcher) touch() { w.lastEvent.Store(w.now().UnixNano()) }

// Event handlers: they call the fleet directly (it is incremental and
// coalesces its own notifications) and never touch the network.

func (w *Watcher) podHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*model.Pod); ok {
				w.touch()
				w.fleet.UpsertPod(p)
			}
		},
		UpdateFunc: func(_, obj any) {
			if p, ok := obj.(*model.Pod); ok {
				w.touch()
				w.fleet.UpsertPod(p)
			}
		},
		DeleteFunc: func(obj any) {
			w.touch()
			if p := deletedPod(obj); p != nil {
				w.fleet.DeletePod(p)
			}
		},
	}
}

// deletedPod unwraps a delete notification. A DeletedFinalStateUnknown (the
// delete happened while the watch was down) carries the last cached Pod; if
// it does not, the key still names it.
func deletedPod(obj any) *model.Pod {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		if p, ok := tomb.Obj.(*model.Pod); ok {
			return p
		}
		ns, name, err := cache.SplitMetaNamespaceKey(tomb.Key)
		if err != nil {
			return nil
		}
		p := &model.Pod{}
		p.Namespace, p.Name = ns, name
		return p
	}
	p, _ := obj.(*model.Pod)
	return p
}

func (w *Watcher) batchSandboxHandler() cache.ResourceEventHandler {
	return objectHandler(w, func(obj any) {
		if b, ok := obj.(*model.BatchSandbox); ok {
			w.fleet.UpsertBatchSandbox(b)
		}
	}, w.fleet.DeleteBatchSandbox)
}

func (w *Watcher) agentSandboxHandler() cache.ResourceEventHandler {
	return objectHandler(w, func(obj any) {
		if s, ok := obj.(*model.AgentSandbox); ok {
			w.fleet.UpsertAgentSandbox(s)
		}
	}, w.fleet.DeleteAgentSandbox)
}

func (w *Watcher) poolHandler() cache.ResourceEventHandler {
	return objectHandler(w, func(obj any) {
		if p, ok := obj.(*model.Pool); ok {
			w.fleet.UpsertPool(p)
		}
	}, w.fleet.DeletePool)
}

// objectHandler builds the handler of a custom resource whose informer
// caches slim model structs; deletes only need the namespace and name.
func objectHandler(w *Watcher, upsert func(any), remove func(namespace, name string)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.touch(); upsert(obj) },
		UpdateFunc: func(_, obj any) { w.touch(); upsert(obj) },
		DeleteFunc: func(obj any) {
			w.touch()
			key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if err != nil {
				return
			}
			ns, name, err := cache.SplitMetaNamespaceKey(key)
			if err != nil {
				return
			}
			remove(ns, name)
		},
	}
}

// Transforms: they run before an object is cached, so the cache holds only
// what the model reads. Since client-go may hand an already transformed
// object to a transform again (a streamed initial list is transformed into a
// temporary store, then replaced into the real one), each one passes through
// anything that is not its raw input.

func slimPool(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if p := model.PoolFromUnstructured(u); p != nil {
			return p, nil
		}
	}
	return obj, nil
}

func slimAgentSandbox(gvr schema.GroupVersionResource) cache.TransformFunc {
	return func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if s := model.AgentSandboxFromUnstructured(u, gvr.Version); s != nil {
				return s, nil
			}
		}
		return obj, nil
	}
}
