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
	if !f.ipLive.Has(ip) {
		return f.foreign[ip]
	}
	out = out[:0]
	for pe := range f.ipLive.All(ip) {
		since := f.history.time(pe.since)
		// Since is the Pod's start when it was first seen already holding
		// the IP with a startTime; otherwise it is when sandscope saw it.
		started := pe.pod.Status.StartTime != nil && pe.pod.Status.StartTime.Time.Equal(since)
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
	f.foreignCands, f.foreignCandsAt = out, f.version
	return out
}
