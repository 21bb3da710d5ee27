// Package fleet keeps the live picture of a fleet of sandboxes: the Fleet,
// fed the engine objects and Pods kube/ watches, derives one row per
// sandbox (identity, state, notices) incrementally, and publishes
// immutable Snapshots that the TUI, the sweep and the exporter read
// without locking.
//
// The files follow the jobs: Pod events (pods.go, holders.go, orphans.go),
// sandbox events (sandboxes.go), image configs (images.go), the clock
// (timers.go), and publishing (publish.go, snapshot.go, changelog.go); the
// derivation of a row (derive.go) applies the rules of identity.go,
// state.go and notices.go, and re-derives only what an event touches
// (queue.go, links.go, and the indexes of entries.go).
package fleet

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// Options configures derivation.
type Options struct {
	// StuckAfter: a Pod deleting for longer than its grace period plus this is stuck. Default 5m.
	StuckAfter time.Duration
	// PodSelector picks plain-Pod sandboxes; default: has label opensandbox.io/id.
	PodSelector labels.Selector
	// ExpiringWithin: a sandbox whose expireTime is closer than this gets EXPIRING_SOON. Default 10m.
	ExpiringWithin time.Duration
	// Now is the clock (tests pin it). Default time.Now.
	Now func() time.Time
}

// Fleet is the live, incrementally derived picture of every sandbox. kube/
// calls the Upsert/Delete methods from informer handlers; readers take
// Snapshots. Safe for concurrent use. Work per event is proportional to the
// sandboxes the event touches, never to the fleet.
//
// Pods handed to UpsertPod should already be slim (SlimPod). The Fleet keeps
// the objects handed to Upsert* and never modifies them; nor may the caller
// afterwards: published rows share their metadata (Sandbox.Meta), and
// Snapshot readers hold no lock. Until SetStatus reports Synced, every
// sandbox in a Snapshot reads identity UNKNOWN and state Unknown.
type Fleet struct {
	mu      sync.Mutex
	opts    Options
	version uint64
	status  model.SourceStatus
	changes chan struct{}

	pods     map[string]*podEntry // "ns/name"
	bsOwned  mem.Index[*podEntry] // BatchSandbox key → Pods it controls or that carry its name label, but for sbEntry.owned (see ownedBy)
	agOwned  mem.Index[*podEntry] // agent Sandbox key → Pods it controls, but for sbEntry.owned
	claims   mem.Index[string]    // "ns/pod" → keys of BatchSandboxes whose alloc-status lists it
	selEq    mem.Index[string]    // "ns\x00k=v" → agent keys whose selector is that single equality
	selOther mem.Index[string]    // ns → agent keys with any other selector
	selKeys  map[string]bool      // label keys indexed in labelIdx (only grows)
	labelIdx mem.Index[string]    // "ns\x00k=v" → Pod names, for keys in selKeys
	podLinks mem.Index[*sbEntry]  // "ns/pod" → sandboxes whose slots name the Pod, but for podEntry.link (see linksOf)

	sandboxes map[string]*sbEntry
	pools     map[string]*model.Pool
	ext       agentExt // agent-sandbox claims, warm pools, templates

	// The published lists. order/podOrder are sorted; sbVec/podVec hold
	// their current values position by position, so an update writes one
	// slot (copying its chunk first if the last Snapshot shares it) and a
	// Snapshot after updates only hands the chunks out. Additions wait in
	// pending* and removals are counted until the next Snapshot merges them.
	order       []*sbEntry
	sbVec       mem.Chunked[model.Sandbox]
	sbLog       changeLog  // positions of sbVec replaced in place, for readers catching up
	pendingSbs  []*sbEntry // added since the last Snapshot, unsorted
	podOrder    []*podEntry
	podVec      mem.Chunked[model.Pod]
	pendingPods []*podEntry
	poolList    []*model.Pool
	poolsDirty  bool

	timers       timerHeap
	images       map[string]*model.ImageConfig
	imageAsked   map[string]bool
	imageWaiters map[string]map[string]struct{}
	imagePending []string

	// Holders of recorded IPs in namespaces the Fleet does not watch (a
	// namespace-scoped view), as kube/ last found them by live lookups;
	// foreignChecked holds the IPs the last lookup answered for, and
	// foreignBlocked is why other namespaces could not be read ("" = they
	// could). Once foreignTracked, a dead or gone slot whose IP was not
	// answered for reads unchecked (model.Slot.NamespaceOnly).
	foreign        map[string][]model.Holder
	foreignChecked map[string]struct{}
	foreignTracked bool
	// foreignCands caches ForeignCandidates for the version it was
	// computed at: a namespace-scoped watcher asks every few seconds, and
	// the answer changes only with the fleet.
	foreignCands   []string
	foreignCandsAt uint64
	foreignBlocked string

	// history is the table of IPs: per IP, its history (which Snapshots
	// share), the live Pods claiming it and the sandboxes recording it.
	history *ipHistory
	snap    *Snapshot
	masked  map[*sbEntry]maskedRow // while unknown: rows as shown masked, by entry

	removedSbs  []*sbEntry  // placed sandboxes removed since the last Snapshot
	droppedPods []*podEntry // placed Pods deleted or unlinked since the last Snapshot

	queue   []*sbEntry
	passed  []*sbEntry // derived in the current process call: their passes are reset at its end
	unknown bool

	// Scratch for the derivation in progress (derivations run one at a
	// time, under mu): the slot layout of a BatchSandbox, read only until
	// derive returns, and the bytes of a slot's default Pod name.
	specScratch []slotSpec
	nameScratch []byte
}

// New returns an empty Fleet.
func New(opts Options) *Fleet {
	if opts.StuckAfter <= 0 {
		opts.StuckAfter = 5 * time.Minute
	}
	if opts.ExpiringWithin <= 0 {
		opts.ExpiringWithin = 10 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PodSelector == nil {
		req, err := labels.NewRequirement(osv1.LabelSandboxID, "exists", nil)
		if err == nil {
			opts.PodSelector = labels.NewSelector().Add(*req)
		} else {
			opts.PodSelector = labels.Nothing()
		}
	}
	return &Fleet{
		opts:         opts,
		changes:      make(chan struct{}, 1),
		pods:         make(map[string]*podEntry),
		bsOwned:      mem.NewIndex[*podEntry](),
		agOwned:      mem.NewIndex[*podEntry](),
		claims:       mem.NewIndex[string](),
		selEq:        mem.NewIndex[string](),
		selOther:     mem.NewIndex[string](),
		selKeys:      make(map[string]bool),
		labelIdx:     mem.NewIndex[string](),
		podLinks:     mem.NewIndex[*sbEntry](),
		sandboxes:    make(map[string]*sbEntry),
		pools:        make(map[string]*model.Pool),
		images:       make(map[string]*model.ImageConfig),
		imageAsked:   make(map[string]bool),
		imageWaiters: make(map[string]map[string]struct{}),
		history:      newIPHistory(),
		unknown:      true,
	}
}

// SetStatus stores where the data comes from and how fresh it is. Until
// Synced, Snapshots list nothing (see Snapshot.Loading); while
// disconnected, every sandbox in them reads identity UNKNOWN and state
// Unknown.
func (f *Fleet) SetStatus(st model.SourceStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	candsCurrent := f.foreignCandsAt == f.version
	f.version++
	synced := st.Synced && !f.status.Synced
	f.status = st
	if synced {
		f.addOrphans()
	} else if candsCurrent {
		// A status alone (the watcher's last contact moves every few
		// seconds) changes no slot: the cached candidates stand.
		f.foreignCandsAt = f.version
	}
	unknown := !st.Synced || st.DisconnectedSince != nil
	if f.unknown && !unknown {
		f.masked = nil
	}
	if f.unknown != unknown {
		f.sbLog.restart(f.version) // every row is masked or unmasked
	}
	f.unknown = unknown
	f.notify()
}

// Changes delivers a coalesced notification after the fleet changed: take a
// Snapshot when it fires. It never blocks the writers.
func (f *Fleet) Changes() <-chan struct{} { return f.changes }

func (f *Fleet) notify() {
	select {
	case f.changes <- struct{}{}:
	default:
	}
}

// ReservePods makes room for n Pods when the fleet has none yet: kube/ calls
// it with the length of an initial list before handing its Pods over one by
// one. The maps a Pod goes into (by key, by IP, the IP history) are then
// made once at their size instead of growing, and rehashing what they hold,
// at every doubling on the way there.
func (f *Fleet) ReservePods(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n <= 0 || len(f.pods) > 0 {
		return
	}
	f.pods = make(map[string]*podEntry, n)
	f.pendingPods = slices.Grow(f.pendingPods, n)
	f.history.reserve(n)
}

// ReserveBatchSandboxes makes room for n BatchSandboxes when the fleet has no
// sandbox yet, as ReservePods does for Pods: the sandboxes by key, the
// recorded IPs they watch, and the list of those waiting to be placed.
func (f *Fleet) ReserveBatchSandboxes(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n <= 0 || len(f.sandboxes) > 0 {
		return
	}
	f.sandboxes = make(map[string]*sbEntry, n)
	f.history.reserve(n)
	f.pendingSbs = slices.Grow(f.pendingSbs, n)
}
