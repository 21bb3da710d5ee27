package fleet

import (
	"iter"
	"slices"
)

// The live Pods claiming each IP and the sandboxes recording it, kept in
// the IP's node (see ipNode). These methods run under the Fleet's lock; they
// take the history's lock only to add or take out a node, since Snapshots
// read the map but never live or watch.

// nodeOf is ip's node, made (under the history's lock) when it has none.
func (h *ipHistory) nodeOf(ip string) *ipNode {
	if n := h.ips[ip]; n != nil {
		return n
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodeLocked(ip)
}

// addLive puts pe among the live Pods claiming ip, once.
func (h *ipHistory) addLive(ip string, pe *podEntry) {
	addOne(&h.nodeOf(ip).live, h.liveMany, ip, pe)
}

// removeLive takes pe from the live Pods claiming ip.
func (h *ipHistory) removeLive(ip string, pe *podEntry) {
	if n := h.ips[ip]; n != nil && removeOne(&n.live, h.liveMany, ip, pe) {
		h.dropIfEmpty(ip, n)
	}
}

// hasLive reports whether a live Pod claims ip.
func (h *ipHistory) hasLive(ip string) bool {
	if n := h.ips[ip]; n != nil && n.live != nil {
		return true
	}
	return len(h.liveMany[ip]) > 0
}

// liveAt yields the live Pods claiming ip in the order they came. The body
// must not add to or remove from ip's.
func (h *ipHistory) liveAt(ip string) iter.Seq[*podEntry] {
	return allOf(h.ips[ip], func(n *ipNode) *podEntry { return n.live }, h.liveMany, ip)
}

// addWatch puts e among the sandboxes recording ip, once.
func (h *ipHistory) addWatch(ip string, e *sbEntry) {
	addOne(&h.nodeOf(ip).watch, h.watchMany, ip, e)
}

// removeWatch takes e from the sandboxes recording ip.
func (h *ipHistory) removeWatch(ip string, e *sbEntry) {
	if n := h.ips[ip]; n != nil && removeOne(&n.watch, h.watchMany, ip, e) {
		h.dropIfEmpty(ip, n)
	}
}

// watchers yields the sandboxes recording ip in the order they came. The
// body must not add to or remove from ip's.
func (h *ipHistory) watchers(ip string) iter.Seq[*sbEntry] {
	return allOf(h.ips[ip], func(n *ipNode) *sbEntry { return n.watch }, h.watchMany, ip)
}

// liveKeys and watchKeys count the IPs with a live Pod, with a recording sandbox.
func (h *ipHistory) liveKeys() int {
	return countKeys(h, func(n *ipNode) bool { return n.live != nil }, h.liveMany)
}
func (h *ipHistory) watchKeys() int {
	return countKeys(h, func(n *ipNode) bool { return n.watch != nil }, h.watchMany)
}

func (h *ipHistory) dropIfEmpty(ip string, n *ipNode) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropIfEmptyLocked(ip, n)
}

// addOne puts v under k: in *lone when nothing is there, in many with the
// value it joins when something is, as mem.Index.Add does.
func addOne[V comparable](lone *V, many map[string][]V, k string, v V) {
	var zero V
	if list, ok := many[k]; ok {
		if !slices.Contains(list, v) {
			many[k] = append(list, v)
		}
		return
	}
	switch *lone {
	case zero:
		*lone = v
	case v:
	default:
		many[k] = []V{*lone, v}
		*lone = zero
	}
}

// removeOne takes v from under k, as mem.Index.Remove does (a list handed
// out is not changed), and reports whether k may have nothing left.
func removeOne[V comparable](lone *V, many map[string][]V, k string, v V) bool {
	var zero V
	if *lone != zero {
		if *lone != v {
			return false
		}
		*lone = zero
		return true
	}
	list := many[k]
	i := slices.Index(list, v)
	switch {
	case i < 0:
		return false
	case len(list) == 2:
		delete(many, k)
		*lone = list[1-i]
	default:
		many[k] = slices.Delete(slices.Clone(list), i, i+1) // copy on write: a caller may be ranging over it
	}
	return false
}

// allOf yields the lone value of n, or the values under k in many.
func allOf[V comparable](n *ipNode, lone func(*ipNode) V, many map[string][]V, k string) iter.Seq[V] {
	return func(yield func(V) bool) {
		var zero V
		if n != nil {
			if v := lone(n); v != zero {
				yield(v)
				return
			}
		}
		for _, v := range many[k] {
			if !yield(v) {
				return
			}
		}
	}
}

func countKeys[V any](h *ipHistory, has func(*ipNode) bool, many map[string][]V) int {
	c := len(many)
	for _, n := range h.ips {
		if has(n) {
			c++
		}
	}
	return c
}
