package fleet

import (
	"container/heap"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
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
	ipLive   mem.Index[*podEntry] // podIP → live Pods claiming it (normally one)
	bsOwned  mem.Index[*podEntry] // BatchSandbox key → Pods it controls or that carry its name label
	agOwned  mem.Index[*podEntry] // agent Sandbox key → Pods it controls
	claims   mem.Index[string]    // "ns/pod" → keys of BatchSandboxes whose alloc-status lists it
	selEq    mem.Index[string]    // "ns\x00k=v" → agent keys whose selector is that single equality
	selOther mem.Index[string]    // ns → agent keys with any other selector
	selKeys  map[string]bool      // label keys indexed in labelIdx (only grows)
	labelIdx mem.Index[string]    // "ns\x00k=v" → Pod names, for keys in selKeys
	podLinks mem.Index[*sbEntry]  // "ns/pod" → sandboxes whose slots name the Pod, but for podEntry.link (see linksOf)
	ipWatch  mem.Index[*sbEntry]  // recorded IP → sandboxes recording it

	sandboxes map[string]*sbEntry
	pools     map[string]*model.Pool

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
	// foreignBlocked is why other namespaces cannot be read ("" = they can).
	foreign        map[string][]model.Holder
	foreignBlocked string

	history *ipHistory
	snap    *Snapshot
	masked  map[*sbEntry]maskedRow // while unknown: rows as shown masked, by entry

	removedSbs  []*sbEntry  // placed sandboxes removed since the last Snapshot
	droppedPods []*podEntry // placed Pods deleted or unlinked since the last Snapshot

	queue   []*sbEntry
	passGen uint32
	unknown bool
}

// podEntry is the Fleet's record of one Pod.
type podEntry struct {
	key     string     // "ns/name"
	pod     *model.Pod // set when the entry is made, kept after a delete
	since   int64      // Unix ns when it was first seen holding ip() (read back with ipHistory.time; a time.Time is 24 bytes)
	link    *sbEntry   // the sandbox naming it when that is the only one (then not in podLinks; see linksOf)
	linked  bool       // some sandbox's slot names it (mirrors linksOf)
	inOrder bool       // in podOrder or pendingPods
	pending bool       // in pendingPods
	removed bool
}

// The namespace and name are the Pod's own strings: an entry keeps no copy.
func (pe *podEntry) ns() string   { return pe.pod.Namespace }
func (pe *podEntry) name() string { return pe.pod.Name }

// ip is the live IP the entry is indexed under (ipLive, the IP history), ""
// when none. It is a function of the Pod, which only UpsertPod replaces, and
// it re-indexes the entry as it does: so it is read from the Pod, not kept
// (a string field took the entry from the 48-byte size class to 64).
func (pe *podEntry) ip() string { return liveIP(pe.pod) }

// HoldsIP reports whether a Pod still holds its podIP on the network (it
// has one and is not Failed or Succeeded; a Terminating Pod still does).
func HoldsIP(p *model.Pod) bool { return podLive(p) }

// SandboxKeyOfPod is the key of the sandbox a Pod names as its own, seen
// without a fleet: its BatchSandbox or agent Sandbox owner, else its own
// plain-Pod key when it carries the sandbox id label; "" when none.
func SandboxKeyOfPod(p *model.Pod) string {
	bs, ag := podOwners(p)
	switch {
	case len(bs) > 0:
		return model.SandboxKey(model.EngineBatchSandbox, p.Namespace, bs[0])
	case len(ag) > 0:
		return model.SandboxKey(model.EngineAgent, p.Namespace, ag[0])
	case p.Labels.Has(osv1.LabelSandboxID):
		return model.SandboxKey(model.EnginePod, p.Namespace, p.Name)
	}
	return ""
}

// liveIP is the IP a Pod holds: its podIP while it is live, else "".
func liveIP(p *model.Pod) string {
	if podLive(p) {
		return p.Status.PodIP
	}
	return ""
}

// sbEntry is the Fleet's record of one sandbox: its source object and what
// was derived from it last.
//
// Size: 112 bytes, a size class of its own. The agent Sandbox is kept in
// agentLink, which only agent entries have, and the recorded IPs an entry
// watches (ipWatch) are read from its last row, whose slots relink indexed:
// as fields they made it 136 bytes (the 144-byte class), and the IPs took a
// 16-byte array per sandbox.
type sbEntry struct {
	key        string // "<engine>/<namespace>/<name>"; engine(), ns() and name() read it
	bs         *model.BatchSandbox
	*agentLink // agent Sandboxes only (nil for the other engines)
	bound      []boundUID
	sb         *model.Sandbox // the last row derived; its slots' RecordedIPs are the IPs it watches
	links      []string       // pod keys its slots name
	due        int64          // Unix ns of the timer it is waiting for, 0 = none (a time.Time is 24 bytes)
	inOrder    bool           // in order or pendingSbs
	pending    bool           // in pendingSbs
	removed    bool
	queued     bool
	passes     uint8  // derivations in the current event
	passGen    uint32 // event the passes count belongs to
}

// The key holds the engine, namespace and name; an entry keeps no copies.
// None of the three can contain a slash.
func (e *sbEntry) engine() model.Engine {
	eng, _, _ := strings.Cut(e.key, "/")
	return model.Engine(eng)
}

func (e *sbEntry) ns() string {
	_, rest, _ := strings.Cut(e.key, "/")
	ns, _, _ := strings.Cut(rest, "/")
	return ns
}

func (e *sbEntry) name() string {
	_, rest, _ := strings.Cut(e.key, "/")
	_, name, _ := strings.Cut(rest, "/")
	return name
}

// maskedRow caches the masked form of a row (see maskedSandbox). Rows are
// masked only while the fleet is unknown, so the cache lives in a map of
// the Fleet's that exists only then, not in a field of every entry.
type maskedRow struct {
	of, row *model.Sandbox
}

// agentLink is what an agent Sandbox entry needs beyond the common fields.
// Its fields, ag included, are read only on agent entries.
type agentLink struct {
	ag       *model.AgentSandbox
	sel      labels.Selector // parsed status.selector (nil = none)
	selStr   string
	selErr   string
	selIndex string // the selEq key it is registered under, or "\x00other"
	lastPod  string // the Pod linked last (kept to say POD_GONE)
}

type boundUID struct {
	pod string
	uid types.UID
}

func (e *sbEntry) boundFor(pod string) types.UID {
	for _, b := range e.bound {
		if b.pod == pod {
			return b.uid
		}
	}
	return ""
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
		ipLive:       mem.NewIndex[*podEntry](),
		bsOwned:      mem.NewIndex[*podEntry](),
		agOwned:      mem.NewIndex[*podEntry](),
		claims:       mem.NewIndex[string](),
		selEq:        mem.NewIndex[string](),
		selOther:     mem.NewIndex[string](),
		selKeys:      make(map[string]bool),
		labelIdx:     mem.NewIndex[string](),
		podLinks:     mem.NewIndex[*sbEntry](),
		ipWatch:      mem.NewIndex[*sbEntry](),
		sandboxes:    make(map[string]*sbEntry),
		pools:        make(map[string]*model.Pool),
		images:       make(map[string]*model.ImageConfig),
		imageAsked:   make(map[string]bool),
		imageWaiters: make(map[string]map[string]struct{}),
		history:      newIPHistory(),
		unknown:      true,
	}
}

func nn(ns, name string) string { return ns + "/" + name }

// internSandboxKey returns the key of a sandbox, reusing the stored string
// when the sandbox is known (index keys then share one allocation).
func (f *Fleet) internSandboxKey(e model.Engine, ns, name string) string {
	k := model.SandboxKey(e, ns, name)
	if sb := f.sandboxes[k]; sb != nil {
		return sb.key
	}
	return k
}

// linkedPodKey returns key, as the string a sandbox linking the Pod already
// holds when there is one: a sandbox seen before its Pod made the key first,
// and the Pod's entry and the indexes can share it.
func (f *Fleet) linkedPodKey(key string) string {
	for e := range f.linksOf(key) {
		if i := slices.Index(e.links, key); i >= 0 {
			return e.links[i]
		}
	}
	return key
}

// internPodKey returns "ns/name", reusing the Pod entry's string when the Pod is known.
func (f *Fleet) internPodKey(ns, name string) string {
	k := nn(ns, name)
	if pe := f.pods[k]; pe != nil {
		return pe.key
	}
	return k
}

// ---- Pods ----

// UpsertPod records an added or updated Pod and re-derives the sandboxes it touches.
func (f *Fleet) UpsertPod(p *model.Pod) {
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	now := f.opts.Now()
	key := nn(p.Namespace, p.Name)
	pe := f.pods[key]
	var old *model.Pod
	var oldSandbox string // the sandbox the Pod belonged to, as holders name it
	if pe == nil {
		pe = &podEntry{key: f.linkedPodKey(key), pod: p}
		f.pods[pe.key] = pe
		f.settleLink(pe)
	} else {
		old = pe.pod
		oldSandbox = f.podSandboxKey(pe)
	}
	pe.pod = p
	if pe.inOrder && !pe.pending {
		if i, ok := f.podIndex(pe); ok {
			f.podVec.Set(i, p)
		}
	}
	f.reindexPodClaims(pe, old, p)

	// The live-IP index and the IP history.
	oldIP, newIP := liveIP(old), liveIP(p)
	if oldIP != newIP || (old != nil && old.UID != p.UID) {
		if oldIP != "" {
			f.dropLive(pe, oldIP)
			f.history.close(oldIP, string(uidOf(old)), now, f.version)
		}
		if newIP != "" {
			since := now
			if old == nil && f.unknown && p.Status.StartTime != nil && p.Status.StartTime.Time.Before(now) {
				// Seen in the initial list already holding its IP: it has held it
				// since about its start, not since sandscope started.
				since = p.Status.StartTime.Time
			}
			// Read back through the history's time (holders), in the location
			// open is about to note under the history's lock.
			pe.since = since.UnixNano()
			f.ipLive.Add(newIP, pe)
			f.history.open(newIP, pe.key, string(p.UID), "", since, f.version)
		}
	}

	f.enqueueEntries(f.linksOf(key))
	// The sandboxes recording the IP show its holder (name, UID, since,
	// sandbox). An update that changes none of them, a status change, the
	// usual event, does not re-derive them: any sandbox may record any IPs,
	// a thousand other tenants' among them.
	sameHolder := old != nil && oldIP == newIP && old.UID == p.UID
	if !sameHolder {
		f.enqueueEntries(f.ipWatch.All(oldIP))
		f.enqueueEntries(f.ipWatch.All(newIP))
	}
	f.enqueueCandidates(pe, old)
	f.enqueueCandidates(pe, p)
	f.ensurePlain(pe.ns(), pe.name())
	if old == nil || !sameOwnership(old, p) {
		// Whether a deleted sandbox keeps a row changes only with what the
		// Pod names and whether it is deleting: a status update skips this
		// (it would build owner lists and keys on every Pod event).
		f.ensureOrphans(pe.ns(), old)
		f.ensureOrphans(pe.ns(), p)
	}
	f.process(now)
	pe.linked = f.hasLinks(key)
	if !pe.inOrder && pe.linked {
		pe.inOrder, pe.pending = true, true
		f.pendingPods = append(f.pendingPods, pe)
	}
	if newIP != "" {
		sbx := f.podSandboxKey(pe)
		f.history.setSandbox(newIP, string(p.UID), sbx)
		if sameHolder && sbx != oldSandbox { // it changed hands: its holders say so
			f.enqueueEntries(f.ipWatch.All(newIP))
			f.process(now)
		}
	}
	f.notify()
}

func uidOf(p *model.Pod) types.UID {
	if p == nil {
		return ""
	}
	return p.UID
}

// DeletePod records a Pod's deletion. A Pod whose UID differs from the one
// stored under its name (a late tombstone of an older incarnation) is ignored.
func (f *Fleet) DeletePod(p *model.Pod) {
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := nn(p.Namespace, p.Name)
	pe := f.pods[key]
	if pe == nil || (p.UID != "" && pe.pod.UID != p.UID) {
		return
	}
	f.version++
	now := f.opts.Now()
	if pe.link != nil { // the index keeps the links of a Pod it does not have
		f.podLinks.Add(pe.key, pe.link)
		pe.link = nil
	}
	delete(f.pods, pe.key)
	f.reindexPodClaims(pe, pe.pod, nil)
	if ip := pe.ip(); ip != "" {
		f.dropLive(pe, ip)
		f.history.close(ip, string(pe.pod.UID), now, f.version)
		f.enqueueEntries(f.ipWatch.All(ip))
	}
	pe.removed = true
	f.dropPod(pe)
	f.enqueueEntries(f.linksOf(pe.key))
	f.enqueueCandidates(pe, pe.pod)
	f.ensurePlain(pe.ns(), pe.name())
	f.ensureOrphans(pe.ns(), pe.pod)
	f.process(now)
	f.notify()
}

func (f *Fleet) dropLive(pe *podEntry, ip string) { f.ipLive.Remove(ip, pe) }

// podOwners lists the BatchSandbox and agent Sandbox names a Pod declares
// itself part of (controller owner references and the BatchSandbox name label).
func podOwners(p *model.Pod) (bsbx []string, agents []string) {
	if p == nil {
		return nil, nil
	}
	for _, r := range p.OwnerReferences {
		switch {
		case r.Kind == "BatchSandbox":
			bsbx = append(bsbx, r.Name)
		case r.Kind == agentsandbox.KindSandbox && strings.HasPrefix(r.APIVersion, agentsandbox.GroupName+"/"):
			agents = append(agents, r.Name)
		}
	}
	if v, ok := p.Labels.Lookup(osv1.LabelBatchSandboxName); ok && v != "" && !slices.Contains(bsbx, v) {
		bsbx = append(bsbx, v)
	}
	return bsbx, agents
}

// reindexPodClaims moves a Pod in the owner and label indexes from old to new (nil = absent).
func (f *Fleet) reindexPodClaims(pe *podEntry, old, new *model.Pod) {
	ob, oa := podOwners(old)
	nb, na := podOwners(new)
	for _, o := range ob {
		if !slices.Contains(nb, o) || new == nil {
			f.bsOwned.Remove(model.SandboxKey(model.EngineBatchSandbox, pe.ns(), o), pe)
		}
	}
	for _, o := range nb {
		f.bsOwned.Add(f.internSandboxKey(model.EngineBatchSandbox, pe.ns(), o), pe)
	}
	for _, o := range oa {
		if !slices.Contains(na, o) || new == nil {
			f.agOwned.Remove(model.SandboxKey(model.EngineAgent, pe.ns(), o), pe)
		}
	}
	for _, o := range na {
		f.agOwned.Add(f.internSandboxKey(model.EngineAgent, pe.ns(), o), pe)
	}
	if len(f.selKeys) == 0 {
		return
	}
	var oldL, newL model.Labels
	if old != nil {
		oldL = old.Labels
	}
	if new != nil {
		newL = new.Labels
	}
	for k := range f.selKeys {
		ov, oh := oldL.Lookup(k)
		nv, nh := newL.Lookup(k)
		if oh && (!nh || ov != nv) {
			f.labelIdx.Remove(pe.ns()+"\x00"+k+"="+ov, pe.name())
		}
		if nh {
			f.labelIdx.Add(pe.ns()+"\x00"+k+"="+nv, pe.name())
		}
	}
}

// enqueueCandidates queues every sandbox that may link p by ownership,
// allocation, selector or as a plain Pod.
func (f *Fleet) enqueueCandidates(pe *podEntry, p *model.Pod) {
	if p == nil {
		return
	}
	bs, ag := podOwners(p)
	for _, b := range bs {
		f.enqueue(model.SandboxKey(model.EngineBatchSandbox, pe.ns(), b))
	}
	for _, a := range ag {
		f.enqueue(model.SandboxKey(model.EngineAgent, pe.ns(), a))
	}
	f.enqueueAll(f.claims.All(pe.key))
	f.enqueueAll(slices.Values(f.agentsMatching(pe.ns(), p.Labels)))
	f.enqueue(model.SandboxKey(model.EnginePod, pe.ns(), pe.name()))
}

// agentsMatching returns the keys of agent Sandboxes whose selector matches the labels.
func (f *Fleet) agentsMatching(ns string, l model.Labels) []string {
	if f.selEq.Keys() == 0 && f.selOther.Keys() == 0 {
		return nil // no agent Sandbox has a selector: skip building a key per label
	}
	var out []string
	for k, v := range l.All() {
		out = slices.AppendSeq(out, f.selEq.All(ns+"\x00"+k+"="+v))
	}
	for key := range f.selOther.All(ns) {
		if e := f.sandboxes[key]; e != nil && e.sel != nil && e.sel.Matches(l) {
			out = append(out, key)
		}
	}
	return out
}

// claimed reports whether a Pod belongs to an engine (so it is not a plain-Pod sandbox).
func (f *Fleet) claimed(pe *podEntry) bool {
	p := pe.pod
	for _, r := range p.OwnerReferences {
		if r.Kind == osv1.KindBatchSandbox || r.Kind == osv1.KindPool || (r.Kind == agentsandbox.KindSandbox && strings.HasPrefix(r.APIVersion, agentsandbox.GroupName+"/")) {
			return true
		}
	}
	if p.Labels.Has(osv1.LabelBatchSandboxName) {
		return true
	}
	if f.claims.Has(pe.key) {
		return true
	}
	return len(f.agentsMatching(pe.ns(), p.Labels)) > 0
}

// ensurePlain creates or removes the plain-Pod sandbox of ns/name.
func (f *Fleet) ensurePlain(ns, name string) {
	key := model.SandboxKey(model.EnginePod, ns, name)
	pe := f.pods[nn(ns, name)]
	should := pe != nil && f.opts.PodSelector.Matches(pe.pod.Labels) && !f.claimed(pe)
	e := f.sandboxes[key]
	switch {
	case should && e == nil:
		e = &sbEntry{key: key}
		f.addSandbox(e)
	case !should && e != nil:
		f.removeSandbox(e)
	}
}

// A Pod that names its sandbox (an ownerReference, the BatchSandbox name
// label) outlives the sandbox object when the sandbox is deleted while the
// Pod cannot finish terminating: a finalizer, a kubelet still pulling its
// image. Such Pods hold quota and image-pull slots, so each deleted sandbox
// they name keeps an entry with no source object (e.bs or e.ag nil): its
// row, phase "deleted", lists them. The entry goes with its last Pod, and
// becomes the sandbox's own again if an object of that name comes back.

// orphan reports an entry kept only for the Pods of a deleted sandbox.
func (e *sbEntry) orphan() bool {
	switch e.engine() {
	case model.EngineBatchSandbox:
		return e.bs == nil
	case model.EngineAgent:
		return e.agentLink == nil || e.ag == nil
	}
	return false
}

// orphanWorthy: the Pod keeps a deleted sandbox's row. A pooled Pod named
// by the label alone goes back to its Pool when the sandbox goes; it is
// the deleted sandbox's only while it is itself being deleted.
func orphanWorthy(p *model.Pod, ownedByRef bool) bool {
	if ownedByRef || p.DeletionTimestamp != nil {
		return true
	}
	for _, r := range p.OwnerReferences {
		if r.Kind == "Pool" {
			return false
		}
	}
	return true
}

// orphanWanted reports whether some Pod names the sandbox key so that it
// would keep a row without its object.
func (f *Fleet) orphanWanted(key string) bool {
	eng, rest, _ := strings.Cut(key, "/")
	_, name, _ := strings.Cut(rest, "/")
	idx := &f.bsOwned
	if model.Engine(eng) == model.EngineAgent {
		idx = &f.agOwned
	}
	for pe := range idx.All(key) {
		if orphanWorthy(pe.pod, ownerRefNames(pe.pod, name)) {
			return true
		}
	}
	return false
}

// ownerRefNames: an ownerReference of the Pod names name (as opposed to the label alone).
func ownerRefNames(p *model.Pod, name string) bool {
	for _, r := range p.OwnerReferences {
		if r.Name == name && (r.Kind == "BatchSandbox" || r.Kind == "Sandbox") {
			return true
		}
	}
	return false
}

// sameOwnership: a and b name the same sandboxes and are both deleting or
// both not (see orphanWorthy).
func sameOwnership(a, b *model.Pod) bool {
	av, _ := a.Labels.Lookup(osv1.LabelBatchSandboxName)
	bv, _ := b.Labels.Lookup(osv1.LabelBatchSandboxName)
	return av == bv && (a.DeletionTimestamp == nil) == (b.DeletionTimestamp == nil) && slices.Equal(a.OwnerReferences, b.OwnerReferences)
}

// ensureOrphans creates or removes the rows of deleted sandboxes that p names.
func (f *Fleet) ensureOrphans(ns string, p *model.Pod) {
	if p == nil {
		return
	}
	bs, ag := podOwners(p)
	for _, b := range bs {
		f.ensureOrphan(model.EngineBatchSandbox, ns, b)
	}
	for _, a := range ag {
		f.ensureOrphan(model.EngineAgent, ns, a)
	}
}

func (f *Fleet) ensureOrphan(eng model.Engine, ns, name string) {
	key := f.internSandboxKey(eng, ns, name)
	e := f.sandboxes[key]
	switch {
	case e == nil && !f.status.Synced:
		// The initial lists are still arriving: a Pod listed before its
		// sandbox would get a row derived only to be replaced. The rows of
		// the sandboxes still missing at the sync are made then (addOrphans).
	case e == nil && f.orphanWanted(key):
		e = &sbEntry{key: key}
		if eng == model.EngineAgent {
			e.agentLink = &agentLink{}
		}
		f.addSandbox(e)
	case e != nil && e.orphan() && !f.orphanWanted(key):
		f.removeSandbox(e)
	}
}

// addOrphans makes the rows of the deleted sandboxes whose Pods name them,
// once the initial lists are in (see ensureOrphan).
func (f *Fleet) addOrphans() {
	var keys []string
	for _, idx := range []*mem.Index[*podEntry]{&f.bsOwned, &f.agOwned} {
		for k := range idx.EachKey() {
			if f.sandboxes[k] == nil && f.orphanWanted(k) {
				keys = append(keys, k)
			}
		}
	}
	for _, k := range keys {
		e := &sbEntry{key: k}
		if strings.HasPrefix(k, string(model.EngineAgent)+"/") {
			e.agentLink = &agentLink{}
		}
		f.addSandbox(e)
	}
	f.process(f.opts.Now())
}

// podSandboxKey names the sandbox a Pod belongs to: its controlling
// BatchSandbox, else the newest BatchSandbox that allocated it, else its
// agent Sandbox, else its own plain-Pod sandbox; "" when none is known. It
// returns the entry's own key string: the IP history and slot holders keep
// it, and a freshly built copy would cost one allocation per Pod.
func (f *Fleet) podSandboxKey(pe *podEntry) string {
	bs, ag := podOwners(pe.pod)
	for _, b := range bs {
		if e := f.sandboxes[model.SandboxKey(model.EngineBatchSandbox, pe.ns(), b)]; e != nil {
			return e.key
		}
	}
	if k := f.primaryClaim(pe.key); k != "" {
		return k
	}
	for _, a := range ag {
		if e := f.sandboxes[model.SandboxKey(model.EngineAgent, pe.ns(), a)]; e != nil {
			return e.key
		}
	}
	if ks := f.agentsMatching(pe.ns(), pe.pod.Labels); len(ks) > 0 {
		slices.Sort(ks)
		return ks[0]
	}
	if e := f.sandboxes[model.SandboxKey(model.EnginePod, pe.ns(), pe.name())]; e != nil {
		return e.key
	}
	return ""
}

// primaryClaim picks, among the BatchSandboxes whose alloc-status lists a
// pooled Pod, the one created last (it is the one the pool handed it to).
func (f *Fleet) primaryClaim(podKey string) string {
	best := ""
	var bestT time.Time
	for k := range f.claims.All(podKey) {
		e := f.sandboxes[k]
		if e == nil || e.bs == nil {
			continue
		}
		t := e.bs.CreationTimestamp.Time
		if best == "" || t.After(bestT) || (t.Equal(bestT) && k > best) {
			best, bestT = k, t
		}
	}
	return best
}

// newestClaims are the BatchSandboxes whose alloc-status lists a pooled
// Pod and that were created last (several when their creation times, whole
// seconds, are equal), in key order.
func (f *Fleet) newestClaims(podKey string) []string {
	var best []string
	var bestT time.Time
	for k := range f.claims.All(podKey) {
		e := f.sandboxes[k]
		if e == nil || e.bs == nil {
			continue
		}
		switch t := e.bs.CreationTimestamp.Time; {
		case len(best) == 0 || t.After(bestT):
			best, bestT = append(best[:0], k), t
		case t.Equal(bestT):
			best = append(best, k)
		}
	}
	slices.Sort(best)
	return best
}

// holders lists the live Pods holding ip, with the sandbox each belongs to:
// those the Fleet watches, then those found in other namespaces.
func (f *Fleet) holders(ip string) []model.Holder {
	if !f.ipLive.Has(ip) {
		return f.foreign[ip]
	}
	var out []model.Holder
	for pe := range f.ipLive.All(ip) {
		out = append(out, model.Holder{Namespace: pe.ns(), Pod: pe.name(), UID: string(pe.pod.UID), Sandbox: f.podSandboxKey(pe), Since: f.history.time(pe.since)})
	}
	for _, h := range f.foreign[ip] {
		if !slices.ContainsFunc(out, func(o model.Holder) bool { return o.UID == h.UID }) {
			out = append(out, h)
		}
	}
	return out
}

// SetForeignHolders records the live Pods outside the watched namespaces
// that hold ip (none: nil), as a live lookup found them, and re-derives the
// sandboxes recording ip. A namespace-scoped view cannot otherwise tell an
// address taken by a Pod elsewhere from one nobody holds.
func (f *Fleet) SetForeignHolders(ip string, hs []model.Holder) {
	if ip == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.foreign[ip]
	if slices.Equal(old, hs) {
		return
	}
	f.version++
	if len(hs) == 0 {
		delete(f.foreign, ip)
	} else {
		if f.foreign == nil {
			f.foreign = make(map[string][]model.Holder)
		}
		f.foreign[ip] = slices.Clone(hs)
	}
	f.enqueueEntries(f.ipWatch.All(ip))
	f.process(f.opts.Now())
	f.notify()
}

// SetForeignBlocked says why other namespaces cannot be searched for the
// holders of recorded IPs ("" once they can): slots that find no holder
// then say they were checked in their own namespace only.
func (f *Fleet) SetForeignBlocked(reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.foreignBlocked == reason {
		return
	}
	f.version++
	f.foreignBlocked = reason
	for _, e := range f.sandboxes {
		if e.sb != nil && slices.ContainsFunc(e.sb.Slots, func(sl model.Slot) bool { return sl.RecordedIP != "" }) {
			f.enqueueEntry(e)
		}
	}
	f.process(f.opts.Now())
	f.notify()
}

// ForeignCandidates lists the recorded IPs whose holder may live in a
// namespace the Fleet does not watch: those of slots whose Pod is dead,
// gone or elsewhere (no watched Pod answers for them), and those held by a
// foreign Pod (to notice it go). Sorted, each once.
func (f *Fleet) ForeignCandidates() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	for ip := range f.foreign {
		seen[ip] = true
	}
	for _, e := range f.sandboxes {
		if e.sb == nil {
			continue
		}
		for i := range e.sb.Slots {
			sl := &e.sb.Slots[i]
			switch sl.Identity {
			case model.IdentityPodDead, model.IdentityPodGone, model.IdentityIPStale:
				if sl.RecordedIP != "" && !f.ipLive.Has(sl.RecordedIP) {
					seen[sl.RecordedIP] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for ip := range seen {
		out = append(out, ip)
	}
	slices.Sort(out)
	return out
}

// ---- engine objects ----

// UpsertBatchSandbox records an added or updated BatchSandbox.
func (f *Fleet) UpsertBatchSandbox(b *model.BatchSandbox) {
	if b == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	key := model.SandboxKey(model.EngineBatchSandbox, b.Namespace, b.Name)
	e := f.sandboxes[key]
	var oldAlloc []string
	if e == nil {
		e = &sbEntry{key: key}
		f.addSandbox(e)
	} else if e.bs == nil {
		e.bound = nil // a deleted sandbox's row (see ensureOrphans) whose object is back
	} else {
		oldAlloc = e.bs.AllocatedPods()
		if e.bs.UID != b.UID && b.UID != "" {
			e.bound = nil // a new object under the same name: bind afresh
		}
	}
	e.bs = b
	f.reclaim(e, oldAlloc, b.AllocatedPods())
	f.enqueue(key)
	f.process(f.opts.Now())
	f.notify()
}

// reclaim moves a BatchSandbox's allocation claims from old to new Pod names
// and re-derives everything those Pods touch.
func (f *Fleet) reclaim(e *sbEntry, old, new []string) {
	for _, p := range old {
		if !slices.Contains(new, p) {
			f.claims.Remove(nn(e.ns(), p), e.key)
		}
	}
	for _, p := range new {
		f.claims.Add(nn(e.ns(), p), e.key)
	}
	for _, list := range [][]string{old, new} {
		for _, p := range list {
			f.touchPod(e.ns(), p)
		}
	}
}

// touchPod re-derives what depends on who a Pod belongs to.
func (f *Fleet) touchPod(ns, name string) {
	k := nn(ns, name)
	f.enqueueEntries(f.linksOf(k))
	f.enqueueAll(f.claims.All(k))
	if pe := f.pods[k]; pe != nil && pe.ip() != "" {
		f.enqueueEntries(f.ipWatch.All(pe.ip()))
	}
	f.ensurePlain(ns, name)
}

// DeleteBatchSandbox records a BatchSandbox's deletion.
func (f *Fleet) DeleteBatchSandbox(namespace, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.sandboxes[model.SandboxKey(model.EngineBatchSandbox, namespace, name)]
	if e == nil || e.bs == nil {
		return
	}
	f.version++
	alloc := e.bs.AllocatedPods()
	if f.orphanWanted(e.key) {
		// Its Pods outlive it (Terminating, held by a finalizer or a slow
		// kubelet): the entry stays, as the deleted sandbox's row.
		e.bs, e.bound = nil, nil
		f.enqueueEntry(e)
	} else {
		f.removeSandbox(e)
	}
	f.reclaim(e, alloc, nil)
	for _, pe := range f.bsOwned.Values(model.SandboxKey(model.EngineBatchSandbox, namespace, name)) {
		f.touchPod(namespace, pe.name())
	}
	f.process(f.opts.Now())
	f.notify()
}

// UpsertAgentSandbox records an added or updated agent-sandbox Sandbox.
func (f *Fleet) UpsertAgentSandbox(s *model.AgentSandbox) {
	if s == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	key := model.SandboxKey(model.EngineAgent, s.Namespace, s.Name)
	e := f.sandboxes[key]
	if e == nil {
		e = &sbEntry{key: key, agentLink: &agentLink{}}
		f.addSandbox(e)
	} else if e.ag == nil || e.ag.UID != s.UID && s.UID != "" {
		e.bound = nil // a new object, or a deleted sandbox's row whose object is back
	}
	before := f.agentCandidates(e)
	e.ag = s
	if s.Selector != e.selStr || e.sel == nil && e.selErr == "" && s.Selector != "" {
		f.unregisterSelector(e)
		e.selStr, e.sel, e.selErr = s.Selector, nil, ""
		if s.Selector != "" {
			sel, err := labels.Parse(s.Selector)
			if err != nil {
				e.selErr = err.Error()
			} else {
				e.sel = sel
				f.registerSelector(e)
			}
		}
	}
	for _, p := range append(before, f.agentCandidates(e)...) {
		f.touchPod(e.ns(), p)
	}
	f.enqueue(key)
	f.process(f.opts.Now())
	f.notify()
}

// DeleteAgentSandbox records an agent Sandbox's deletion.
func (f *Fleet) DeleteAgentSandbox(namespace, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.sandboxes[model.SandboxKey(model.EngineAgent, namespace, name)]
	if e == nil || e.ag == nil {
		return
	}
	f.version++
	before := f.agentCandidates(e)
	if f.orphanWanted(e.key) {
		// Its Pod outlives it: the entry stays, as the deleted sandbox's row.
		f.unregisterSelector(e)
		e.agentLink, e.bound = &agentLink{}, nil
		f.enqueueEntry(e)
	} else {
		f.removeSandbox(e)
	}
	for _, p := range before {
		f.touchPod(namespace, p)
	}
	f.process(f.opts.Now())
	f.notify()
}

// registerSelector indexes an agent's selector: a single equality (the
// agent-sandbox controller's form) goes to selEq and the label index; any
// other selector is matched by scanning the namespace's agents per Pod event.
func (f *Fleet) registerSelector(e *sbEntry) {
	reqs, _ := e.sel.Requirements()
	if len(reqs) == 1 {
		r := reqs[0]
		vals := r.Values().List()
		if (r.Operator() == "=" || r.Operator() == "==" || r.Operator() == "in") && len(vals) == 1 {
			k := r.Key()
			if !f.selKeys[k] {
				// First selector on this label key: index the existing Pods once.
				f.selKeys[k] = true
				for _, pe := range f.pods {
					if v, ok := pe.pod.Labels.Lookup(k); ok {
						f.labelIdx.Add(pe.ns()+"\x00"+k+"="+v, pe.name())
					}
				}
			}
			e.selIndex = e.ns() + "\x00" + k + "=" + vals[0]
			f.selEq.Add(e.selIndex, e.key)
			return
		}
	}
	e.selIndex = "\x00other"
	f.selOther.Add(e.ns(), e.key)
}

func (f *Fleet) unregisterSelector(e *sbEntry) {
	switch e.selIndex {
	case "":
	case "\x00other":
		f.selOther.Remove(e.ns(), e.key)
	default:
		f.selEq.Remove(e.selIndex, e.key)
	}
	e.selIndex = ""
}

// agentCandidates lists the Pod names that may back an agent Sandbox.
func (f *Fleet) agentCandidates(e *sbEntry) []string {
	if e.ag == nil {
		return nil
	}
	var out []string
	for pe := range f.agOwned.All(e.key) {
		out = append(out, pe.name())
	}
	switch {
	case e.sel != nil && e.selIndex != "\x00other" && e.selIndex != "":
		out = slices.AppendSeq(out, f.labelIdx.All(e.selIndex))
	case e.sel != nil:
		prefix := e.ns() + "/"
		for k, pe := range f.pods {
			if strings.HasPrefix(k, prefix) && e.sel.Matches(pe.pod.Labels) {
				out = append(out, pe.name())
			}
		}
	}
	if !slices.Contains(out, e.name()) {
		out = append(out, e.name())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// UpsertPool records an added or updated Pool.
func (f *Fleet) UpsertPool(p *model.Pool) {
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	f.pools[nn(p.Namespace, p.Name)] = p
	f.poolsDirty = true
	f.notify()
}

// DeletePool records a Pool's deletion.
func (f *Fleet) DeletePool(namespace, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.pools[nn(namespace, name)]; !ok {
		return
	}
	f.version++
	delete(f.pools, nn(namespace, name))
	f.poolsDirty = true
	f.notify()
}

// ---- images ----

// SetImageConfig stores what a registry said about an image (keyed by
// cfg.Ref, the string PendingImageChecks returned) and re-derives the
// sandboxes waiting for it.
func (f *Fleet) SetImageConfig(cfg model.ImageConfig) {
	if cfg.Ref == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	c := cfg
	f.images[cfg.Ref] = &c
	f.imageAsked[cfg.Ref] = true
	for k := range f.imageWaiters[cfg.Ref] {
		if f.sandboxes[k] == nil {
			delete(f.imageWaiters[cfg.Ref], k) // the sandbox is gone
			continue
		}
		f.enqueue(k)
	}
	if cfg.Err == "" {
		// A failed read stays watched: kube/ retries it, and the sandboxes
		// showing "image config unreadable" must hear the later answer.
		delete(f.imageWaiters, cfg.Ref)
	}
	f.process(f.opts.Now())
	f.notify()
}

// PendingImageChecks returns the image references (digest references when
// the runtime reported one) of keep-alive main containers whose config is not
// known yet. Each is returned once until SetImageConfig answers it.
func (f *Fleet) PendingImageChecks() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, k := range f.imagePending {
		if f.images[k] == nil && !f.imageAsked[k] {
			f.imageAsked[k] = true
			out = append(out, k)
		}
	}
	f.imagePending = f.imagePending[:0]
	return out
}

// needImage returns the config of image ref, and notes that sandbox key
// waits for it while it is unknown or its read failed.
func (f *Fleet) needImage(ref, key string) *model.ImageConfig {
	cfg := f.images[ref]
	if cfg != nil && cfg.Err == "" {
		return cfg
	}
	w := f.imageWaiters[ref]
	if w == nil {
		w = make(map[string]struct{})
		f.imageWaiters[ref] = w
		if !f.imageAsked[ref] {
			f.imagePending = append(f.imagePending, ref)
		}
	}
	w[key] = struct{}{}
	return cfg
}

// ---- status, time, notifications ----

// SetStatus stores where the data comes from and how fresh it is. Until
// Synced, Snapshots list nothing (see Snapshot.Loading); while
// disconnected, every sandbox in them reads identity UNKNOWN and state
// Unknown.
func (f *Fleet) SetStatus(st model.SourceStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	synced := st.Synced && !f.status.Synced
	f.status = st
	if synced {
		f.addOrphans()
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

// Tick re-derives the sandboxes whose notices depend on the clock (a Pod
// becoming stuck Terminating, an expiry coming close), and only those: they
// wait in a heap ordered by the time they change. Call it every few seconds.
func (f *Fleet) Tick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	changed := false
	for len(f.timers) > 0 && !f.timers[0].due.After(now) {
		t := heap.Pop(&f.timers).(timer)
		if e := f.sandboxes[t.key]; e != nil && e.due == t.due.UnixNano() {
			e.due = 0
			if !changed {
				f.version++
				changed = true
			}
			f.enqueue(t.key)
		}
	}
	if changed {
		f.process(now)
		f.notify()
	}
	f.history.prune(now)
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

type timer struct {
	due time.Time
	key string
}

type timerHeap []timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ---- sandbox bookkeeping ----

func (f *Fleet) addSandbox(e *sbEntry) {
	f.sandboxes[e.key] = e
	f.enqueue(e.key)
}

// publish places a freshly derived sandbox in the published list.
func (f *Fleet) publish(e *sbEntry) {
	switch {
	case !e.inOrder:
		e.inOrder, e.pending = true, true
		f.pendingSbs = append(f.pendingSbs, e)
	case e.pending:
	default:
		if i, ok := f.sbIndex(e); ok {
			f.sbVec.Set(i, e.sb)
			f.sbLog.add(f.version, i)
		}
	}
}

// sbIndex finds a placed sandbox in order by binary search.
func (f *Fleet) sbIndex(e *sbEntry) (int, bool) {
	i, found := slices.BinarySearchFunc(f.order, e.key, func(x *sbEntry, k string) int { return strings.Compare(x.key, k) })
	return i, found && f.order[i] == e
}

// podIndex finds a placed Pod in podOrder by binary search.
func (f *Fleet) podIndex(pe *podEntry) (int, bool) {
	i, found := slices.BinarySearchFunc(f.podOrder, pe, comparePodEntries)
	return i, found && f.podOrder[i] == pe
}

// dropPod notes that a placed Pod may have to leave the published list.
func (f *Fleet) dropPod(pe *podEntry) {
	if pe.inOrder && !pe.pending {
		f.droppedPods = append(f.droppedPods, pe)
	}
}

// removeSandbox drops a sandbox and its links; the Pods it linked are re-examined.
func (f *Fleet) removeSandbox(e *sbEntry) {
	delete(f.sandboxes, e.key)
	delete(f.masked, e)
	e.removed = true
	if e.inOrder && !e.pending {
		f.removedSbs = append(f.removedSbs, e)
	}
	if e.engine() == model.EngineAgent {
		f.unregisterSelector(e)
	}
	for _, pk := range e.links {
		f.unlinkPod(pk, e)
		if pe := f.pods[pk]; pe != nil {
			f.enqueueEntries(f.ipWatch.All(pe.ip()))
		}
	}
	for ip := range e.watchedIPs() {
		f.ipWatch.Remove(ip, e)
	}
	e.links = nil
}

// The sandboxes whose slots name a Pod are its links. Nearly every Pod
// exists and has one, which its entry keeps (podEntry.link): the entry had
// room for the pointer (48-byte size class either way) and an index entry
// costs about 45 bytes of map. podLinks has the links of every other key:
// those of a Pod named by several sandboxes, or that does not exist.

// linksOf yields the sandboxes whose slots name the Pod key, in the order
// they linked it.
func (f *Fleet) linksOf(key string) iter.Seq[*sbEntry] {
	if pe := f.pods[key]; pe != nil && pe.link != nil {
		return func(yield func(*sbEntry) bool) { yield(pe.link) }
	}
	return f.podLinks.All(key)
}

// hasLinks reports whether a sandbox's slot names the Pod key.
func (f *Fleet) hasLinks(key string) bool {
	if pe := f.pods[key]; pe != nil && pe.link != nil {
		return true
	}
	return f.podLinks.Has(key)
}

// addLink notes that e's slots name the Pod key, once.
func (f *Fleet) addLink(key string, e *sbEntry) {
	pe := f.pods[key]
	switch {
	case pe == nil:
		f.podLinks.Add(key, e)
	case pe.link == e:
	case pe.link != nil: // a second link: both go to the index, in order
		f.podLinks.Add(key, pe.link)
		f.podLinks.Add(key, e)
		pe.link = nil
	case f.podLinks.Has(key):
		f.podLinks.Add(key, e)
	default:
		pe.link = e
	}
}

// removeLink undoes addLink.
func (f *Fleet) removeLink(key string, e *sbEntry) {
	pe := f.pods[key]
	if pe != nil && pe.link == e {
		pe.link = nil
		return
	}
	f.podLinks.Remove(key, e)
	if pe != nil {
		f.settleLink(pe)
	}
}

// settleLink moves an existing Pod's only link from the index to its entry.
func (f *Fleet) settleLink(pe *podEntry) {
	if e, ok := f.podLinks.Lone(pe.key); ok {
		f.podLinks.Remove(pe.key, e)
		pe.link = e
	}
}

func (f *Fleet) unlinkPod(podKey string, e *sbEntry) {
	f.removeLink(podKey, e)
	if !f.hasLinks(podKey) {
		if pe := f.pods[podKey]; pe != nil {
			pe.linked = false
			f.dropPod(pe)
		}
	}
}

func (f *Fleet) linkPod(podKey string, e *sbEntry) {
	f.addLink(podKey, e)
	if pe := f.pods[podKey]; pe != nil {
		pe.linked = true
		if !pe.inOrder {
			pe.inOrder, pe.pending = true, true
			f.pendingPods = append(f.pendingPods, pe)
		}
	}
}

func (f *Fleet) enqueue(key string) {
	if e := f.sandboxes[key]; e != nil {
		f.enqueueEntry(e)
	}
}

func (f *Fleet) enqueueEntry(e *sbEntry) {
	if !e.removed && !e.queued {
		e.queued = true
		f.queue = append(f.queue, e)
	}
}

func (f *Fleet) enqueueAll(keys iter.Seq[string]) {
	for k := range keys {
		f.enqueue(k)
	}
}

// enqueueEntries queues the sandboxes an index of entries yields (podLinks,
// ipWatch: removeSandbox takes an entry out of them).
func (f *Fleet) enqueueEntries(es iter.Seq[*sbEntry]) {
	for e := range es {
		f.enqueueEntry(e)
	}
}

// process re-derives the queued sandboxes. A sandbox is derived at most
// twice per event: links depend only on sources and Pods, so a second pass
// only refreshes the names of holders.
func (f *Fleet) process(now time.Time) {
	f.passGen++
	for i := 0; i < len(f.queue); i++ {
		e := f.queue[i]
		f.queue[i] = nil
		e.queued = false
		if e.removed {
			continue
		}
		if e.passGen != f.passGen {
			e.passGen, e.passes = f.passGen, 0
		}
		if e.passes >= 2 {
			continue
		}
		e.passes++
		f.derive(e, now)
	}
	if cap(f.queue) > 1024 {
		f.queue = nil // do not keep a burst's worth of queue around
	} else {
		f.queue = f.queue[:0]
	}
}

// ---- snapshots ----

// Snapshot returns a consistent, immutable view. It is cached until the next
// change; after a change it costs one pass over the sorted sandbox list (new
// sandboxes are sorted among themselves and merged in, never a full sort).
func (f *Fleet) Snapshot() *Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.snap != nil && f.snap.Version == f.version {
		return f.snap
	}
	f.mergeOrders()
	var sbs mem.SharedList[model.Sandbox]
	var pods mem.SharedList[model.Pod]
	switch {
	case !f.status.Synced:
		// The first list is still arriving: the Snapshot holds none of
		// it, only its count. Every row would read UNKNOWN, of a list not
		// yet complete; and masked copies of 50,000 rows, with the views
		// built over them, are memory that is garbage the moment the fleet
		// syncs, in spans shared with the objects that stay.
	case f.unknown:
		masked := make([]*model.Sandbox, len(f.order))
		for i, e := range f.order {
			masked[i] = f.maskedSandbox(e)
		}
		sbs, pods = mem.PlainList(masked), f.podVec.Share()
	default:
		sbs, pods = f.sbVec.Share(), f.podVec.Share()
	}
	if f.status.Synced && (f.poolsDirty || f.poolList == nil) {
		f.poolList = make([]*model.Pool, 0, len(f.pools))
		for _, p := range f.pools {
			f.poolList = append(f.poolList, p)
		}
		sort.Slice(f.poolList, func(i, j int) bool {
			a, b := f.poolList[i], f.poolList[j]
			if a.Namespace != b.Namespace {
				return a.Namespace < b.Namespace
			}
			return a.Name < b.Name
		})
		f.poolsDirty = false
	}
	f.snap = &Snapshot{Version: f.version, Status: f.status, sbs: sbs, pods: pods, Pools: f.poolList, history: f.history}
	if !f.status.Synced {
		f.snap.Pools, f.snap.Loading = nil, len(f.order)
	}
	if !f.unknown {
		f.snap.changes = f.sbLog // masked lists are built anew each time: no log
	}
	return f.snap
}

// mergeOrders folds added entries into the sorted lists and drops removed
// ones. Runs only when sandboxes or Pods were added or removed since the
// last Snapshot, never for plain updates. Cost: O(k log n) comparisons to
// place the k changes, then block copies of the unchanged runs; no full sort
// and no walk over every entry.
func (f *Fleet) mergeOrders() {
	if len(f.pendingSbs) > 0 || len(f.removedSbs) > 0 {
		var drop []int
		for _, e := range f.removedSbs {
			if i, ok := f.sbIndex(e); ok {
				drop = append(drop, i)
			}
			e.inOrder = false
		}
		adds := f.pendingSbs[:0:0]
		for _, e := range f.pendingSbs {
			e.pending = false
			if e.removed || e.sb == nil {
				e.inOrder = false
				continue
			}
			adds = append(adds, e)
		}
		slices.SortFunc(adds, func(a, b *sbEntry) int { return strings.Compare(a.key, b.key) })
		ins := make([]int, len(adds))
		addVals := make([]*model.Sandbox, len(adds))
		for j, e := range adds {
			ins[j], _ = slices.BinarySearchFunc(f.order, e.key, func(x *sbEntry, k string) int { return strings.Compare(x.key, k) })
			addVals[j] = e.sb
		}
		var sbs []*model.Sandbox
		f.order, sbs = splice(f.order, f.sbVec.Flat(), drop, ins, adds, addVals)
		f.sbVec.Reset(sbs)
		f.sbLog.restart(f.version)
		clear(f.pendingSbs)
		f.pendingSbs = f.pendingSbs[:0]
		clear(f.removedSbs)
		f.removedSbs = f.removedSbs[:0]
	}
	if len(f.pendingPods) == 0 && len(f.droppedPods) == 0 {
		return
	}
	var drop []int
	for _, pe := range f.droppedPods {
		if !pe.removed && pe.linked {
			continue // linked again since
		}
		if i, ok := f.podIndex(pe); ok {
			drop = append(drop, i)
			pe.inOrder = false
		}
	}
	adds := f.pendingPods[:0:0]
	for _, pe := range f.pendingPods {
		pe.pending = false
		if pe.removed || !pe.linked {
			pe.inOrder = false
			continue
		}
		adds = append(adds, pe)
	}
	slices.SortFunc(adds, comparePodEntries)
	ins := make([]int, len(adds))
	addVals := make([]*model.Pod, len(adds))
	for j, pe := range adds {
		ins[j], _ = slices.BinarySearchFunc(f.podOrder, pe, comparePodEntries)
		addVals[j] = pe.pod
	}
	var pods []*model.Pod
	f.podOrder, pods = splice(f.podOrder, f.podVec.Flat(), drop, ins, adds, addVals)
	f.podVec.Reset(pods)
	clear(f.pendingPods)
	f.pendingPods = f.pendingPods[:0]
	clear(f.droppedPods)
	f.droppedPods = f.droppedPods[:0]
}

// splice returns new copies of the parallel sorted slices order/vals without
// the elements at the drop indices and with adds[j] inserted before old index
// ins[j] (ins ascending, as from a binary search). Unchanged runs move as blocks.
func splice[E, V any](order []E, vals []V, drop, ins []int, adds []E, addVals []V) ([]E, []V) {
	slices.Sort(drop)
	drop = slices.Compact(drop)
	n := len(order) - len(drop) + len(adds)
	outE, outV := make([]E, 0, n), make([]V, 0, n)
	prev, d, a := 0, 0, 0
	for {
		next := len(order)
		if d < len(drop) && drop[d] < next {
			next = drop[d]
		}
		if a < len(ins) && ins[a] < next {
			next = ins[a]
		}
		outE, outV = append(outE, order[prev:next]...), append(outV, vals[prev:next]...)
		prev = next
		for a < len(ins) && ins[a] == next {
			outE, outV = append(outE, adds[a]), append(outV, addVals[a])
			a++
		}
		if d < len(drop) && drop[d] == next {
			prev = next + 1
			d++
			continue
		}
		if next == len(order) {
			return outE, outV
		}
	}
}

func comparePodEntries(a, b *podEntry) int {
	if c := strings.Compare(a.ns(), b.ns()); c != 0 {
		return c
	}
	return strings.Compare(a.name(), b.name())
}

// maskedSandbox is the sandbox as shown while the data cannot be trusted:
// identity UNKNOWN, state Unknown, no identity notices.
func (f *Fleet) maskedSandbox(e *sbEntry) *model.Sandbox {
	if m, ok := f.masked[e]; ok && m.of == e.sb {
		return m.row
	}
	m := *e.sb
	m.State = model.StateUnknown
	m.Slots = make([]model.Slot, max(len(e.sb.Slots), 1))
	m.Slots[0].Identity = model.IdentityUnknown // a sandbox without slots reads UNKNOWN too
	for i, sl := range e.sb.Slots {
		sl.Identity = model.IdentityUnknown
		sl.Holder = nil
		m.Slots[i] = sl
	}
	m.Notices = nil
	for _, n := range e.sb.Notices {
		switch n.Code {
		case model.CodeIPTaken, model.CodePodDead, model.CodePodGone, model.CodeUIDChanged, model.CodeIPStale, model.CodeStateMismatch, model.CodeFailedSticky:
			continue
		}
		m.Notices = append(m.Notices, n)
	}
	if f.masked == nil {
		f.masked = make(map[*sbEntry]maskedRow)
	}
	f.masked[e] = maskedRow{of: e.sb, row: &m}
	return &m
}

// Snapshot is a consistent, immutable view of the fleet at one moment.
type Snapshot struct {
	Version uint64
	Status  model.SourceStatus
	Pools   []*model.Pool
	// Loading counts the sandboxes read so far while the source has not
	// synced (Status.Synced false); until then the Snapshot lists none.
	Loading int

	sbs  mem.SharedList[model.Sandbox] // sorted by Key
	pods mem.SharedList[model.Pod]     // every Pod behind a sandbox, sorted by namespace/name

	history  *ipHistory
	changes  changeLog
	podOnce  sync.Once
	podToSbx map[string]*model.Sandbox
}

// NewSnapshot is a Snapshot of plain lists, for code that assembles a fleet
// without a Fleet (tests, fixtures). sandboxes must be sorted by Key and
// pods by namespace/name; the Snapshot keeps them, so they must not change.
func NewSnapshot(version uint64, status model.SourceStatus, sandboxes []*model.Sandbox, pods []*model.Pod, pools []*model.Pool) *Snapshot {
	return &Snapshot{Version: version, Status: status, sbs: mem.PlainList(sandboxes), pods: mem.PlainList(pods), Pools: pools}
}

// Sandboxes returns every sandbox, sorted by Key. Read only. The first call
// on a Snapshot from a Fleet builds the list (O(n)); a reader following
// changes should use ChangedSince, NumSandboxes and SandboxAt instead.
func (s *Snapshot) Sandboxes() []*model.Sandbox { return s.sbs.All() }

// NumSandboxes is len(Sandboxes()) without building the list.
func (s *Snapshot) NumSandboxes() int { return s.sbs.Len() }

// SandboxAt is Sandboxes()[i] without building the list.
func (s *Snapshot) SandboxAt(i int) *model.Sandbox { return s.sbs.At(i) }

// SameSandboxes: s and o hold the same sandbox list, as a Snapshot after a
// change of status alone shares its predecessor's.
func (s *Snapshot) SameSandboxes(o *Snapshot) bool { return o != nil && s.sbs.Same(&o.sbs) }

// Pods returns every Pod behind a sandbox, sorted by namespace/name. Read
// only; built on first use.
func (s *Snapshot) Pods() []*model.Pod { return s.pods.All() }

// NumPods is len(Pods()) without building the list.
func (s *Snapshot) NumPods() int { return s.pods.Len() }

// Sandbox finds a sandbox by key (binary search), nil when absent.
func (s *Snapshot) Sandbox(key string) *model.Sandbox {
	n := s.NumSandboxes()
	i := sort.Search(n, func(i int) bool { return s.SandboxAt(i).Key >= key })
	if i < n && s.SandboxAt(i).Key == key {
		return s.SandboxAt(i)
	}
	return nil
}

// IPHistory returns the Pods seen holding ip since the Fleet started, oldest
// first, as they were when the snapshot was taken.
func (s *Snapshot) IPHistory(ip string) []model.IPHolding {
	if s.history == nil {
		return nil
	}
	return s.history.at(ip, s.Version)
}

// SandboxOfPod returns the sandbox a Pod is linked to, nil when none. A Pod
// named by several sandboxes (a pooled Pod handed on) belongs to the one it
// serves, not to one that merely still lists it. The index is built on first use.
func (s *Snapshot) SandboxOfPod(namespace, name string) *model.Sandbox {
	s.podOnce.Do(func() {
		s.podToSbx = make(map[string]*model.Sandbox)
		for _, sb := range s.Sandboxes() {
			for i := range sb.Slots {
				sl := &sb.Slots[i]
				if sl.PodName == "" || sl.Pod == nil {
					continue
				}
				if sl.Holder != nil && sl.Holder.Pod == sl.PodName && sl.Holder.Sandbox != "" && sl.Holder.Sandbox != sb.Key {
					continue // the Pod serves another sandbox now
				}
				k := nn(sb.Namespace(), sl.PodName)
				if _, taken := s.podToSbx[k]; !taken {
					s.podToSbx[k] = sb
				}
			}
		}
	})
	return s.podToSbx[nn(namespace, name)]
}
