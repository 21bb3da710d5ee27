package fleet

import (
	"slices"
	"sort"
	"strings"

	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

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

// Snapshot returns a consistent, immutable view. It is cached until the next
// change; after a change it costs one pass over the sorted sandbox list (new
// sandboxes are sorted among themselves and merged in, never a full sort).
func (f *Fleet) Snapshot() *Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.snap != nil && f.snap.Version == f.version {
		return f.snap
	}
	if f.status.Synced {
		// While the first list arrives the Snapshot lists nothing, so the
		// additions stay pending and are sorted in once, at the sync: every
		// merge copies the whole sorted list, and merging on each of the
		// UI's refreshes during a 50,000-sandbox load made tens of megabytes
		// of copies that were garbage at the next.
		f.mergeOrders()
	}
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
	f.snap = &Snapshot{Version: f.version, Status: f.status, sbs: sbs, pods: pods, Pools: f.poolList, history: f.history, ForeignBlocked: f.foreignBlocked}
	if f.status.Synced {
		f.snap.Claims, f.snap.WarmPools, f.snap.Templates = f.ext.published()
		f.snap.replaced = f.ext.replaced
	} else {
		f.snap.Pools, f.snap.Loading = nil, f.placedSandboxes()
	}
	if !f.unknown {
		f.snap.changes = f.sbLog // masked lists are built anew each time: no log
	}
	return f.snap
}

// placedSandboxes is how many sandboxes the sorted list holds once the
// pending changes are merged: len(f.order) after mergeOrders, without it.
func (f *Fleet) placedSandboxes() int {
	n := len(f.order) - len(f.removedSbs) // removedSbs: placed ones only (removeSandbox)
	for _, e := range f.pendingSbs {
		if !e.removed && e.sb != nil {
			n++
		}
	}
	return n
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
		f.pendingSbs = emptied(f.pendingSbs)
		f.removedSbs = emptied(f.removedSbs)
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
	f.pendingPods = emptied(f.pendingPods)
	f.droppedPods = emptied(f.droppedPods)
}

// keptPendingCap is the most room a list of pending changes keeps once
// merged: a Snapshot usually merges a few changes, and the initial load
// (reserved for the whole fleet: ReservePods) would otherwise keep a
// pointer's room for every sandbox for as long as the fleet lives.
const keptPendingCap = 1024

// emptied is list merged: cleared for reuse, or let go when it grew larger
// than keptPendingCap.
func emptied[T any](list []T) []T {
	if cap(list) > keptPendingCap {
		return nil
	}
	clear(list)
	return list[:0]
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
