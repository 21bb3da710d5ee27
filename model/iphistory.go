package model

import (
	"sync"
	"time"
)

// Bounds of the IP history: memory stays flat however fast Pods churn.
const (
	ipHistoryPerIP     = 16             // holdings kept per IP, oldest dropped first
	ipHistoryRetention = 24 * time.Hour // an IP with no holder for this long is forgotten
	ipHistoryMaxIPs    = 1 << 18        // hard cap on IPs remembered
)

// holding is one entry of an IP's history. Versions let a Snapshot see the
// history exactly as it was when it was taken.
type holding struct {
	ns, pod, uid, sandbox string
	from                  time.Time
	to                    time.Time // zero while held
	fromVer, toVer        uint64    // fleet versions of the open/close (toVer 0 = open)
}

type ipRecord struct {
	ip         string
	holdings   []holding
	lastSeen   time.Time
	prev, next *ipRecord // the LRU list, least recently touched first
}

// ipHistory records, per IP, the Pods seen holding it since the Fleet
// started. It has its own lock so Snapshots can read it without the Fleet's.
type ipHistory struct {
	mu         sync.RWMutex
	ips        map[string]*ipRecord
	head, tail *ipRecord // LRU list (intrusive: no allocation per IP)
}

func newIPHistory() *ipHistory {
	return &ipHistory{ips: make(map[string]*ipRecord)}
}

func (h *ipHistory) unlink(r *ipRecord) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		h.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		h.tail = r.prev
	}
	r.prev, r.next = nil, nil
}

func (h *ipHistory) pushBack(r *ipRecord) {
	r.prev, r.next = h.tail, nil
	if h.tail != nil {
		h.tail.next = r
	} else {
		h.head = r
	}
	h.tail = r
}

func (h *ipHistory) touch(r *ipRecord) {
	if h.tail != r {
		h.unlink(r)
		h.pushBack(r)
	}
}

func (h *ipHistory) record(ip string) *ipRecord {
	r := h.ips[ip]
	if r == nil {
		r = &ipRecord{ip: ip}
		h.pushBack(r)
		h.ips[ip] = r
	} else {
		h.touch(r)
	}
	return r
}

// open notes that a Pod started holding ip at `at`.
func (h *ipHistory) open(ip, ns, pod, uid, sandbox string, at time.Time, ver uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.record(ip)
	r.lastSeen = at
	for i := range r.holdings {
		hd := &r.holdings[i]
		if hd.uid == uid && hd.toVer == 0 {
			hd.sandbox = sandbox // already open: refresh what it belongs to
			return
		}
	}
	r.holdings = append(r.holdings, holding{ns: ns, pod: pod, uid: uid, sandbox: sandbox, from: at, fromVer: ver})
	if len(r.holdings) > ipHistoryPerIP {
		r.holdings = append(r.holdings[:0:0], r.holdings[len(r.holdings)-ipHistoryPerIP:]...)
	}
	if len(h.ips) > ipHistoryMaxIPs {
		h.evictLocked(at, true)
	}
}

// setSandbox updates the sandbox an open holding belongs to (it can be learnt late).
func (h *ipHistory) setSandbox(ip, uid, sandbox string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.ips[ip]; r != nil {
		for i := range r.holdings {
			if hd := &r.holdings[i]; hd.uid == uid && hd.toVer == 0 {
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
	if r == nil {
		return
	}
	r.lastSeen = at
	h.touch(r)
	for i := range r.holdings {
		if hd := &r.holdings[i]; hd.uid == uid && hd.toVer == 0 {
			hd.to, hd.toVer = at, ver
		}
	}
}

// prune forgets IPs nobody has held for ipHistoryRetention. Cost is
// proportional to what it drops (the LRU front is the oldest).
func (h *ipHistory) prune(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.evictLocked(now, false)
}

func (h *ipHistory) evictLocked(now time.Time, force bool) {
	for r := h.head; r != nil; {
		next := r.next
		overCap := force && len(h.ips) > ipHistoryMaxIPs
		if !overCap && now.Sub(r.lastSeen) < ipHistoryRetention {
			return
		}
		if overCap || !r.open() {
			h.unlink(r)
			delete(h.ips, r.ip)
		} else {
			h.touch(r) // still held: keep, look again later
			r.lastSeen = now
		}
		r = next
	}
}

func (r *ipRecord) open() bool {
	for i := range r.holdings {
		if r.holdings[i].toVer == 0 {
			return true
		}
	}
	return false
}

// at returns ip's history as it was at fleet version ver, oldest first.
func (h *ipHistory) at(ip string, ver uint64) []IPHolding {
	h.mu.RLock()
	defer h.mu.RUnlock()
	r := h.ips[ip]
	if r == nil {
		return nil
	}
	var out []IPHolding
	for _, hd := range r.holdings {
		if hd.fromVer > ver {
			continue
		}
		e := IPHolding{IP: ip, Namespace: hd.ns, Pod: hd.pod, UID: hd.uid, Sandbox: hd.sandbox, From: hd.from}
		if hd.toVer != 0 && hd.toVer <= ver {
			to := hd.to
			e.To = &to
		}
		out = append(out, e)
	}
	return out
}

func (h *ipHistory) len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.ips)
}
