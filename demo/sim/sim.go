// Package sim is a fleet simulator: it plays the sandbox engines (OpenSandbox
// BatchSandbox and Pool controllers, the agent-sandbox controller) and the
// kubelet against any Kubernetes API, through the API only. It creates
// sandboxes and their Pods, schedules them to a few nodes with small Pod
// CIDRs (so freed IPs are reused within seconds, as Calico does), and runs
// the life cycles sandscope must make visible: normal runs, instant deaths,
// OOM and liveness kills, evictions, stuck Terminating Pods, keep-alive
// entrypoints, same-name re-creations, Pods gone behind their sandbox and
// BatchSandboxes stuck on finalizers.
//
// With Config.AdoptEvery it also adopts the sandboxes it did not create — a
// BatchSandbox (template or pooled) or an agent-sandbox Sandbox written
// through the API by sandscope's create — and plays their engine and kubelet
// the way it does for its own: Pods named and owned as the engine does,
// scheduling, image pulls (failing for images the demo registry cannot
// serve), start-up, and the engine's status. See adopt.go.
//
// The simulator is deterministic: the same Config.Seed yields the same
// sequence of operations, whatever the wall clock does. Every timestamp it
// writes comes from the virtual time of the event that writes it.
//
// It works against client-go fake clientsets (Config.EmulateServer: the
// simulator then sets what a server would: UIDs, creation and deletion
// timestamps) and against a real API server (status through the status
// subresource, deletion through Delete with finalizers).
package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Resources the simulator writes. They match kube.BatchSandboxGVR and friends
// (kept here so the simulator does not depend on the watcher package).
var (
	BatchSandboxGVR = osv1.BatchSandboxes
	PoolGVR         = osv1.Pools
)

// AgentSandboxGVR is the agent-sandbox Sandbox resource at version.
func AgentSandboxGVR(version string) schema.GroupVersionResource {
	return agentsandbox.Sandboxes(version)
}

// Mix weighs the engines of newly created sandboxes.
type Mix struct {
	BatchSandbox int // non-pooled OpenSandbox BatchSandboxes
	Pooled       int // BatchSandboxes allocated from a Pool
	Agent        int // agent-sandbox Sandboxes
	PlainPod     int // Pods labelled opensandbox.io/id
}

// Config configures a simulation. Zero values take the defaults noted.
type Config struct {
	Seed int64
	// Namespaces the fleet lives in. Default ["sandboxes"].
	Namespaces []string
	// Nodes to schedule to. Default 4.
	Nodes int
	// NodePrefix names the nodes (<prefix><i>). Default "sim-node-".
	NodePrefix string
	// PodCIDRBase is the first address of node 0's Pod range; node i's range
	// starts 256 (or more) addresses further per node. Default 10.244.0.0,
	// so node 1 hands out 10.244.1.2, 10.244.1.3, ...
	PodCIDRBase string
	// PodCIDRSize is the number of Pod IPs per node. Small on purpose: a
	// freed IP goes to the next Pod on that node within seconds. Default 30.
	PodCIDRSize int
	// ChurnPerHour sandboxes are created (and as many deleted) per hour.
	// Default 800, like the incident fleet. Negative: no churn.
	ChurnPerHour int
	// LifetimeMin/Max bound how long a churned sandbox lives before its
	// user deletes it. Default 2m..8m.
	LifetimeMin, LifetimeMax time.Duration
	// Mix of engines for churned sandboxes. Default 50/20/15/15.
	Mix Mix
	// AgentVersion is the agent-sandbox version served. Default v1beta1.
	AgentVersion string
	// PoolBuffer pre-warmed Pods per Pool. Default 3. Negative: no Pools.
	PoolBuffer int
	// Examples seeds one sandbox of every scenario when the simulation
	// starts, so every state is visible within a minute.
	Examples bool
	// WarmPools plays agent-sandbox's extensions controller: a template,
	// a warm pool with claims on it and one running dry, in the first
	// namespace (warmpool.go). The server must serve the extension CRDs.
	WarmPools bool
	// Warmup backdates the simulation start: Start plays this much virtual
	// history at once (objects then look as old as in a long-running fleet).
	// Only meaningful with EmulateServer (a real server stamps its own
	// creation and deletion times).
	Warmup time.Duration
	// EmulateServer: the API is a client-go fake that does not set UIDs or
	// timestamps and does not honour finalizers; the simulator does it.
	EmulateServer bool
	// AdoptEvery, when positive, is how often (virtual time) the simulator
	// lists the sandbox objects of its namespaces to adopt those it did not
	// create and to notice adopted ones deleted behind it (see adopt.go).
	// Default 0: it adopts nothing. Each pass lists every sandbox object, so
	// replaying hours of virtual time with it costs; the demo sets 1s.
	AdoptEvery time.Duration
	// Clock paces Run. Default the real clock.
	Clock clock.Clock
	// OnOp, when set, is called after every operation (tests, logs).
	OnOp func(Op)
}

// Op is one operation the simulator performed through the API.
type Op struct {
	At        time.Time
	Verb      string // create, update, status, delete, event, ...
	Resource  string // pods, batchsandboxes, ...
	Namespace string
	Name      string
	Detail    string
}

func (o Op) String() string {
	return fmt.Sprintf("%s %s %s %s/%s %s", o.At.UTC().Format(time.RFC3339Nano), o.Verb, o.Resource, o.Namespace, o.Name, o.Detail)
}

func (c *Config) defaults() {
	if len(c.Namespaces) == 0 {
		c.Namespaces = []string{"sandboxes"}
	}
	if c.Nodes <= 0 {
		c.Nodes = 4
	}
	if c.NodePrefix == "" {
		c.NodePrefix = "sim-node-"
	}
	if c.PodCIDRBase == "" {
		c.PodCIDRBase = "10.244.0.0"
	}
	if c.PodCIDRSize <= 0 {
		c.PodCIDRSize = 30
	}
	if c.ChurnPerHour == 0 {
		c.ChurnPerHour = 800
	}
	if c.LifetimeMin <= 0 {
		c.LifetimeMin = 2 * time.Minute
	}
	if c.LifetimeMax < c.LifetimeMin {
		c.LifetimeMax = 4 * c.LifetimeMin
	}
	if c.Mix == (Mix{}) {
		c.Mix = Mix{BatchSandbox: 50, Pooled: 20, Agent: 15, PlainPod: 15}
	}
	if c.AgentVersion == "" {
		c.AgentVersion = "v1beta1"
	}
	if c.PoolBuffer == 0 {
		c.PoolBuffer = 3
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
}

// Sim is a running fleet simulation. Its methods are safe for concurrent
// use; operations run one at a time.
type Sim struct {
	cfg  Config
	kube kubernetes.Interface
	dyn  dynamic.Interface

	mu    sync.Mutex
	rng   *rand.Rand
	queue eventQueue
	seq   uint64
	now   time.Time // virtual time of the event being run
	// backdate makes the objects created now look that much older (an old
	// sandbox near its expiry), where the simulator stamps them itself.
	backdate  time.Duration
	liveStart time.Time // when Start was called: the end of the warm-up
	started   bool
	ipam      *ipam
	sandboxes map[string]*sandbox  // by namespace/name
	pools     map[string]*pool     // by namespace
	warmPools []*warmPool          // agent-sandbox warm pools (warmpool.go)
	claims    map[string]*simClaim // SandboxClaims the extensions controller follows, by namespace/name
	podOwner  map[string]*sandbox  // pod namespace/name -> sandbox
	ops       int
	errs      []error

	logs          podLogs // the main containers' output (podlogs.go)
	kubeletEvents uint64  // names the Events of kubeletEvent
}

// New prepares a simulation; nothing is written before Start.
func New(kube kubernetes.Interface, dyn dynamic.Interface, cfg Config) (*Sim, error) {
	cfg.defaults()
	base, err := netip.ParseAddr(cfg.PodCIDRBase)
	if err != nil {
		return nil, fmt.Errorf("pod CIDR base %q: %w", cfg.PodCIDRBase, err)
	}
	ip, err := newIPAM(base, cfg.Nodes, cfg.PodCIDRSize)
	if err != nil {
		return nil, err
	}
	return &Sim{
		cfg:       cfg,
		kube:      kube,
		dyn:       dyn,
		rng:       rand.New(rand.NewSource(cfg.Seed)),
		ipam:      ip,
		sandboxes: map[string]*sandbox{},
		pools:     map[string]*pool{},
		podOwner:  map[string]*sandbox{},
		claims:    map[string]*simClaim{},
	}, nil
}

// Config returns the effective configuration (defaults filled in).
func (s *Sim) Config() Config { return s.cfg }

// Start writes the initial fleet: nodes, pools, the scenario examples (when
// Config.Examples) and the churn schedule, then plays Config.Warmup of
// virtual history at once. It returns when that is done.
func (s *Sim) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return fmt.Errorf("simulation already started")
	}
	s.started = true
	now := s.cfg.Clock.Now()
	s.liveStart = now
	s.now = now.Add(-s.cfg.Warmup)
	var setupErr error
	s.after(0, "setup", func(ctx context.Context) error {
		setupErr = s.setup(ctx)
		return setupErr
	})
	s.mu.Unlock()

	if err := s.RunUntil(ctx, now); err != nil {
		return err
	}
	if setupErr != nil {
		return fmt.Errorf("setting up the simulated fleet: %w", setupErr)
	}
	return nil
}

// setup writes the fleet's starting point: namespaces, nodes, a Pool per
// namespace with its warm Pods, the scenario examples, and the first churn
// and adoption events. It is the first event Start runs.
func (s *Sim) setup(ctx context.Context) error {
	for _, ns := range s.cfg.Namespaces {
		nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		s.stamp(nsObj)
		if _, err := s.kube.CoreV1().Namespaces().Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	for i := range s.cfg.Nodes {
		if err := s.ensureNode(ctx, i); err != nil {
			return err
		}
	}
	if s.cfg.PoolBuffer > 0 {
		for _, ns := range s.cfg.Namespaces {
			p := &pool{ns: ns, name: "warm-python", revision: "7d9f8c6b5"}
			obj, err := s.createCR(ctx, PoolGVR, s.newPool(p))
			if err != nil {
				return err
			}
			p.obj = obj
			s.pools[ns] = p
			for range s.cfg.PoolBuffer {
				if err := s.addPoolPod(ctx, p); err != nil {
					return err
				}
			}
		}
	}
	if s.cfg.Examples {
		s.seedExamples()
	}
	if s.cfg.WarmPools {
		if err := s.setupWarmPools(ctx); err != nil {
			return err
		}
	}
	if s.cfg.ChurnPerHour > 0 {
		s.after(s.churnInterval(), "churn", s.churn)
	}
	if s.cfg.AdoptEvery > 0 {
		// Nobody else writes into the fleet during the warm-up (it is played
		// at once): adoption starts with the live simulation.
		s.after(s.liveStart.Sub(s.now), "adopt", s.adoptPoll)
	}
	return nil
}

// Run plays the simulation in real (Config.Clock) time until ctx ends.
// Errors of single operations are recorded (Errors) and do not stop it.
func (s *Sim) Run(ctx context.Context) error {
	for {
		s.mu.Lock()
		next, ok := s.queue.peek()
		s.mu.Unlock()
		wait := time.Hour
		if ok {
			wait = next.Sub(s.cfg.Clock.Now())
		}
		if wait > 0 {
			t := s.cfg.Clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C():
			}
			continue
		}
		if err := s.RunUntil(ctx, s.cfg.Clock.Now()); err != nil {
			return err
		}
	}
}

// RunUntil runs, at once, every scheduled event due at or before t, in
// virtual-time order. Tests drive the simulation with it instead of waiting.
func (s *Sim) RunUntil(ctx context.Context, t time.Time) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
		at, ok := s.queue.peek()
		if !ok || at.After(t) {
			s.mu.Unlock()
			return nil
		}
		ev := heap.Pop(&s.queue).(*event)
		s.now = ev.at
		err := s.safely(func() error { return ev.fn(ctx) })
		if err != nil && ctx.Err() == nil {
			s.recordErr(fmt.Errorf("%s: %w", ev.what, err))
		}
		s.mu.Unlock()
	}
}

// Now is the simulation's virtual time (the time of the last event run).
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// Ops is the number of API operations performed so far.
func (s *Sim) Ops() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops
}

// Errors returns the last operation errors (at most 100 are kept).
func (s *Sim) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

func (s *Sim) recordErr(err error) {
	if len(s.errs) >= 100 {
		s.errs = s.errs[1:]
	}
	s.errs = append(s.errs, err)
}

// safely turns a panic of a client (the fake watcher panics when a consumer
// falls 100 events behind) into an error instead of killing the demo.
func (s *Sim) safely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in simulated operation: %v", r)
		}
	}()
	return fn()
}
