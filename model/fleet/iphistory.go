package fleet

import (
	"math"
	"strings"
	"sync"
	"time"

	"github.com/sandscope/sandscope/model"
)

// Bounds of the IP history: memory stays flat however fast Pods churn.
const (
	ipHistoryPerIP     = 16             // holdings kept per IP, oldest dropped first
	ipHistoryRetention = 24 * time.Hour // an IP with no holder for this long is forgotten
	ipHistoryMaxIPs    = 1 << 18        // hard cap on IPs remembered
)

// Layout. Nearly every Pod of a fleet holds an IP no other Pod has held, so
// the history is sized for that case: one IP, one open holding, stored
// inline in the IP's ipRecord; a second allocation (rest) appears only once
// a second Pod holds the IP. To get there:
//   - a holding names its Pod by the Fleet's "ns/name" key, a string shared
//     with the podEntry, split again when read;
//   - times are Unix nanoseconds, not time.Time;
//   - there is no per-IP LRU list: only IPs nobody holds can age out, so only
//     they are queued (unheld), in the order they were let go.

// holding is one entry of an IP's history. Versions let a Snapshot see the
// history exactly as it was when it was taken.
type holding struct {
	pod, uid, sandbox string // pod is the Fleet's "ns/name" key
	from, to          int64  // Unix ns (see ipHistory.nanos); to unset while held
	fromVer, toVer    uint64 // fleet versions of the open/close (toVer 0 = open)
}

// ipRecord is one IP's history, oldest first: first, then *rest.
type ipRecord struct {
	first holding
	rest  *[]holding // nil until a second Pod holds the IP
	// unheldSeq is, while nobody holds the IP, the seq of its entry in
	// ipHistory.unheld; 0 while somebody does. Any other entry for the IP is
	// stale: it was let go, taken again, and possibly let go again later.
	unheldSeq uint64
}

// recorded reports whether r holds a history (a holding's pod key is never
// empty): an ipNode of an IP the history forgot, or never saw held, has none.
func (r *ipRecord) recorded() bool { return r.first.pod != "" }

func (r *ipRecord) len() int {
	if r.rest == nil {
		return 1
	}
	return 1 + len(*r.rest)
}

// get returns the i-th holding, oldest first.
func (r *ipRecord) get(i int) *holding {
	if i == 0 {
		return &r.first
	}
	return &(*r.rest)[i-1]
}

func (r *ipRecord) held() bool {
	for i := range r.len() {
		if r.get(i).toVer == 0 {
			return true
		}
	}
	return false
}

// add appends hd, dropping the oldest holding beyond ipHistoryPerIP.
func (r *ipRecord) add(hd holding) {
	if r.rest == nil {
		r.rest = new([]holding)
	}
	rest := append(*r.rest, hd)
	if 1+len(rest) > ipHistoryPerIP {
		r.first = rest[0]
		n := copy(rest, rest[1:])
		rest[n] = holding{} // let go of its strings
		rest = rest[:n]
	}
	*r.rest = rest
}

// unheldIP is an entry of ipHistory.unheld.
type unheldIP struct {
	ip  string
	at  int64  // Unix ns: when the IP's last holder let go
	seq uint64 // matches the record's unheldSeq unless the entry is stale
}

// ipNode is all the Fleet keeps under one IP: its history, the live Pod
// claiming it and the sandbox recording it. One map of them, where the
// history, the live Pods and the recording sandboxes each had a map keyed
// by the IP, holds each IP's key once (about 60 bytes less per sandbox).
//
// live and watch hold a lone value, nil when there is none or several (then
// ipHistory.liveMany and watchMany list them, in insertion order), as
// mem.Index keeps a lone value: the usual IP costs no slice.
type ipNode struct {
	ipRecord // empty (recorded false) when the history has none for the IP
	live     *podEntry
	watch    *sbEntry
}

// ipHistory is the Fleet's table of IPs. It records, per IP, the Pods seen
// holding it since the Fleet started: that history has its own lock so
// Snapshots can read it without the Fleet's. Beside it, in the same nodes,
// the live Pods claiming each IP and the sandboxes recording it: those are
// read and written under the Fleet's lock alone (Snapshots never read
// them), but a node is added to or taken from ips under mu too, since
// Snapshots read the map.
type ipHistory struct {
	mu  sync.RWMutex
	ips map[string]*ipNode
	// recs counts the nodes with a history: the IPs the history remembers.
	recs int
	// peak is the most nodes ips has held since it was made (see shrinkLocked).
	peak int
	// IPs with two or more live Pods, or recording sandboxes (never also in
	// the node). Under the Fleet's lock only.
	liveMany  map[string][]*podEntry
	watchMany map[string][]*sbEntry
	// unheld queues the IPs nobody holds, in the order they were let go, so
	// prune and the cap forget the IPs let go longest ago by popping from the
	// front: cost proportional to what they drop. An IP taken again leaves a
	// stale entry behind, skipped when popped; compactLocked drops stale
	// entries once they could outnumber the IPs, so reuse cannot grow it.
	unheld []unheldIP
	seq    uint64 // last seq handed to an unheld entry
	maxIPs int    // ipHistoryMaxIPs (a field so tests can lower it)
	// loc is the location of the times the Fleet gives (its clock's: Local in
	// production, UTC on the tests' clock). Times are read back in it, so they
	// print as they did when held as time.Time.
	loc *time.Location
}

func newIPHistory() *ipHistory {
	return &ipHistory{ips: make(map[string]*ipNode), maxIPs: ipHistoryMaxIPs, loc: time.Local,
		liveMany: make(map[string][]*podEntry), watchMany: make(map[string][]*sbEntry)}
}

// reserve makes room for n IPs (an initial list of Pods or sandboxes) when
// the table holds fewer, so that filling it does not grow its map step by
// step (each step rehashes every key so far, and holds the old table beside
// the new one while it does). Called once per list: the IPs already there
// are copied once.
func (h *ipHistory) reserve(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n <= len(h.ips) {
		return
	}
	ips := make(map[string]*ipNode, n)
	for k, v := range h.ips {
		ips[k] = v
	}
	h.ips = ips
	h.peak = len(ips)
}

// minShrink: a map of fewer IPs than this is never made anew (see shrinkLocked).
const minShrink = 1024

// nodeLocked returns ip's node, adding an empty one when there is none.
func (h *ipHistory) nodeLocked(ip string) *ipNode {
	n := h.ips[ip]
	if n == nil {
		n = &ipNode{}
		h.ips[ip] = n
		h.peak = max(h.peak, len(h.ips))
	}
	return n
}

// dropIfEmptyLocked takes ip's node n out once nothing is under it.
func (h *ipHistory) dropIfEmptyLocked(ip string, n *ipNode) {
	if n.recorded() || n.live != nil || n.watch != nil || len(h.liveMany[ip]) > 0 || len(h.watchMany[ip]) > 0 {
		return
	}
	delete(h.ips, ip)
	h.shrinkLocked()
}

// shrinkLocked makes ips anew once it holds a quarter of its peak: a Go map
// never gives back the memory of deleted entries, and copying the IPs left
// costs less than the removals since the last time it was made.
func (h *ipHistory) shrinkLocked() {
	if h.peak < minShrink || len(h.ips) >= h.peak/4 {
		return
	}
	ips := make(map[string]*ipNode, len(h.ips))
	for k, v := range h.ips {
		ips[k] = v
	}
	h.ips, h.peak = ips, len(ips)
}

// forgetRecordLocked drops n's history (the IP is forgotten) and n with it
// when nothing else is under it.
func (h *ipHistory) forgetRecordLocked(ip string, n *ipNode) {
	n.ipRecord = ipRecord{}
	h.recs--
	h.dropIfEmptyLocked(ip, n)
}

// zeroNanos stands for the zero time.Time, whose UnixNano is undefined.
const zeroNanos = math.MinInt64

// nanos converts t for storage, noting its location.
func (h *ipHistory) nanos(t time.Time) int64 {
	if t.IsZero() {
		return zeroNanos
	}
	h.loc = t.Location()
	return t.UnixNano()
}

// time converts back what nanos stored.
func (h *ipHistory) time(ns int64) time.Time {
	if ns == zeroNanos {
		return time.Time{}
	}
	return time.Unix(0, ns).In(h.loc)
}

// open notes that a Pod (pod: its "ns/name" key) started holding ip at `at`.
func (h *ipHistory) open(ip, pod, uid, sandbox string, at time.Time, ver uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := holding{pod: pod, uid: uid, sandbox: sandbox, from: h.nanos(at), fromVer: ver}
	r := h.nodeLocked(ip)
	if !r.recorded() {
		r.ipRecord = ipRecord{first: hd}
		h.recs++
		if h.recs > h.maxIPs {
			h.evictLocked(ip)
		}
		return
	}
	for i := range r.len() {
		if old := r.get(i); old.uid == uid && old.toVer == 0 {
			old.sandbox = sandbox // already open: refresh what it belongs to
			return
		}
	}
	r.add(hd)
	r.unheldSeq = 0 // held again: its entry in unheld, if any, is stale
}

// setSandbox updates the sandbox an open holding belongs to (it can be learnt late).
func (h *ipHistory) setSandbox(ip, uid, sandbox string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.ips[ip]; r != nil && r.recorded() {
		for i := range r.len() {
			if hd := r.get(i); hd.uid == uid && hd.toVer == 0 {
				hd.sandbox = sandbox
			}
		}
	}
}

// close notes that the Pod with uid stopped holding ip at `at`.
func (h *ipHistory) close(ip, uid string, at time.Time, ver uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.ips[ip]
	if r == nil || !r.recorded() {
		return
	}
	to := h.nanos(at)
	closed := false
	for i := range r.len() {
		if hd := r.get(i); hd.uid == uid && hd.toVer == 0 {
			hd.to, hd.toVer = to, ver
			closed = true
		}
	}
	if closed && !r.held() {
		h.seq++
		r.unheldSeq = h.seq
		h.unheld = append(h.unheld, unheldIP{ip: ip, at: to, seq: h.seq})
		if len(h.unheld) > 2*h.recs+64 {
			h.compactLocked()
		}
	}
}

// prune forgets IPs nobody has held for ipHistoryRetention. Cost is
// proportional to what it drops (the front of unheld is the oldest).
func (h *ipHistory) prune(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cutoff := now.UnixNano() - int64(ipHistoryRetention)
	n := 0
	for n < len(h.unheld) && h.unheld[n].at <= cutoff {
		h.forgetLocked(h.unheld[n])
		n++
	}
	h.popLocked(n)
}

// evictLocked brings the history back under its cap after ip was added:
// first the IPs let go longest ago, then, if every IP left is held (more
// than maxIPs Pods hold one), any held IP but the one just added.
func (h *ipHistory) evictLocked(ip string) {
	n := 0
	for h.recs > h.maxIPs && n < len(h.unheld) {
		h.forgetLocked(h.unheld[n])
		n++
	}
	h.popLocked(n)
	for k, r := range h.ips {
		if h.recs <= h.maxIPs {
			break
		}
		if k != ip && r.recorded() {
			h.forgetRecordLocked(k, r)
		}
	}
}

// forgetLocked forgets e's IP unless e is stale.
func (h *ipHistory) forgetLocked(e unheldIP) {
	if r := h.ips[e.ip]; r != nil && r.recorded() && r.unheldSeq == e.seq {
		h.forgetRecordLocked(e.ip, r)
	}
}

// popLocked drops the first n entries of unheld.
func (h *ipHistory) popLocked(n int) {
	clear(h.unheld[:n])
	h.unheld = h.unheld[n:]
	if len(h.unheld) == 0 {
		h.unheld = nil // release the array once drained
	}
}

// compactLocked drops the stale entries of unheld, keeping the order. It runs
// when unheld has grown past 2·len(ips)+64 entries; at most len(ips) of them
// are live, so at least as many closes as it scans entries have happened since
// the last compaction: its cost is amortised over them.
func (h *ipHistory) compactLocked() {
	kept := h.unheld[:0]
	for _, e := range h.unheld {
		if r := h.ips[e.ip]; r != nil && r.unheldSeq == e.seq {
			kept = append(kept, e)
		}
	}
	clear(h.unheld[len(kept):])
	h.unheld = kept
}

// at returns ip's history as it was at fleet version ver, oldest first.
func (h *ipHistory) at(ip string, ver uint64) []model.IPHolding {
	h.mu.RLock()
	defer h.mu.RUnlock()
	r := h.ips[ip]
	if r == nil || !r.recorded() {
		return nil
	}
	var out []model.IPHolding
	for i := range r.len() {
		hd := r.get(i)
		if hd.fromVer > ver {
			continue
		}
		ns, pod, _ := strings.Cut(hd.pod, "/")
		e := model.IPHolding{IP: ip, Namespace: ns, Pod: pod, UID: hd.uid, Sandbox: hd.sandbox, From: h.time(hd.from)}
		if hd.toVer != 0 && hd.toVer <= ver {
			to := h.time(hd.to)
			e.To = &to
		}
		out = append(out, e)
	}
	return out
}

// len is the number of IPs the history remembers.
func (h *ipHistory) len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.recs
}
