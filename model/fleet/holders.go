package fleet

import (
	"slices"

	"github.com/sandscope/sandscope/model"
)

// holders lists the live Pods holding ip, with the sandbox each belongs to:
// those the Fleet watches, then those found in other namespaces.
//
// out is room for them (appended to from empty; a caller's array keeps the
// usual one off the heap): the result is read only until out's next use.
func (f *Fleet) holders(ip string, out []model.Holder) []model.Holder {
	if !f.history.hasLive(ip) {
		return f.foreign[ip]
	}
	out = out[:0]
	for pe := range f.history.liveAt(ip) {
		since := f.history.time(pe.since)
		// Since is the Pod's start when it was first seen already holding
		// the IP with a startTime; otherwise it is when sandscope saw it.
		start, ok := pe.pod.Status.StartTime()
		started := ok && start.Equal(since)
		out = append(out, model.Holder{Namespace: pe.ns(), Pod: pe.name(), UID: string(pe.pod.UID), Sandbox: f.podSandboxKey(pe),
			Since: since, SinceObserved: !started})
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
	_, checked := f.foreignChecked[ip]
	if checked && slices.Equal(old, hs) {
		return
	}
	f.version++
	if f.foreignChecked == nil {
		f.foreignChecked = make(map[string]struct{})
	}
	f.foreignChecked[ip] = struct{}{}
	if len(hs) == 0 {
		delete(f.foreign, ip)
	} else {
		if f.foreign == nil {
			f.foreign = make(map[string][]model.Holder)
		}
		f.foreign[ip] = slices.Clone(hs)
	}
	f.enqueueEntries(f.history.watchers(ip))
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
	f.enqueueRecorders()
	f.process(f.opts.Now())
	f.notify()
}

// TrackForeign tells a namespace-scoped Fleet that the holders of its dead
// and gone sandboxes' IPs live anywhere in the cluster: until a lookup has
// answered for an IP (SetForeignIndex), the slots recording it read
// unchecked (model.Slot.NamespaceOnly), never a plain POD_DEAD.
func (f *Fleet) TrackForeign() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.foreignTracked {
		return
	}
	f.version++
	f.foreignTracked = true
	f.enqueueRecorders()
	f.process(f.opts.Now())
	f.notify()
}

// SetForeignIndex records one lookup of every namespace the Fleet does not
// watch: checked are the IPs it answered for, holders the live Pods found
// holding them (an IP of checked missing from holders is held by none
// there). Holders of IPs not in checked are forgotten, and those IPs read
// unchecked until a later lookup answers for them. It also clears
// SetForeignBlocked's reason: the lookup was allowed.
func (f *Fleet) SetForeignIndex(checked []string, holders map[string][]model.Holder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	touched := map[string]struct{}{}
	now := make(map[string]struct{}, len(checked))
	for _, ip := range checked {
		now[ip] = struct{}{}
		if _, ok := f.foreignChecked[ip]; !ok {
			touched[ip] = struct{}{}
		}
	}
	for ip := range f.foreignChecked {
		if _, ok := now[ip]; !ok {
			touched[ip] = struct{}{}
		}
	}
	for ip, old := range f.foreign {
		if _, ok := now[ip]; !ok || !slices.Equal(old, holders[ip]) {
			touched[ip] = struct{}{}
		}
	}
	foreign := make(map[string][]model.Holder)
	for ip := range now {
		if hs := holders[ip]; len(hs) > 0 {
			foreign[ip] = slices.Clone(hs)
			if !slices.Equal(f.foreign[ip], hs) {
				touched[ip] = struct{}{}
			}
		}
	}
	f.foreign, f.foreignChecked = foreign, now
	if f.foreignBlocked != "" {
		f.foreignBlocked = ""
		f.enqueueRecorders()
	} else {
		for ip := range touched {
			f.enqueueEntries(f.history.watchers(ip))
		}
	}
	f.process(f.opts.Now())
	f.notify()
}

// ForeignLookupFailed records that a lookup of the other namespaces did not
// answer: the IPs no Pod was found holding read unchecked until one does,
// and a holder found before stays (an IP_TAKEN is not dropped on a
// transient error).
func (f *Fleet) ForeignLookupFailed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.foreignChecked) == 0 {
		return
	}
	f.version++
	for ip := range f.foreignChecked {
		f.enqueueEntries(f.history.watchers(ip))
	}
	f.foreignChecked = nil
	f.process(f.opts.Now())
	f.notify()
}

// holderUnchecked reports whether a dead or gone slot recording ip must say
// its holder was not looked for outside the namespace.
func (f *Fleet) holderUnchecked(ip string) bool {
	if ip == "" || f.history.hasLive(ip) {
		return false // a watched live Pod holds it: no Pod elsewhere can
	}
	if f.foreignBlocked != "" {
		return true
	}
	if !f.foreignTracked {
		return false
	}
	_, ok := f.foreignChecked[ip]
	return !ok
}

// enqueueRecorders queues every sandbox that records an IP for derivation.
func (f *Fleet) enqueueRecorders() {
	for _, e := range f.sandboxes {
		if e.sb != nil && slices.ContainsFunc(e.sb.Slots, func(sl model.Slot) bool { return sl.RecordedIP != "" }) {
			f.enqueueEntry(e)
		}
	}
}

// ForeignCandidates lists the recorded IPs whose holder may live in a
// namespace the Fleet does not watch: those of slots whose Pod is dead,
// gone or elsewhere (no watched Pod answers for them), and those held by a
// foreign Pod (to notice it go). Sorted, each once; read only (the list is
// kept for the next call, until the fleet changes).
func (f *Fleet) ForeignCandidates() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.foreignCands != nil && f.foreignCandsAt == f.version {
		return f.foreignCands
	}
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
				if sl.RecordedIP != "" && !f.history.hasLive(sl.RecordedIP) {
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
	f.foreignCands, f.foreignCandsAt = out, f.version
	return out
}
