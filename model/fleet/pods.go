package fleet

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
)

// HoldsIP reports whether a Pod still holds its podIP on the network (it
// has one and is not Failed or Succeeded; a Terminating Pod still does).
func HoldsIP(p *model.Pod) bool { return podLive(p) }

// SandboxKeyOfPod is the key of the sandbox a Pod names as its own, seen
// without a fleet: its BatchSandbox or agent Sandbox owner, else its own
// plain-Pod key when it carries the sandbox id label; "" when none.
func SandboxKeyOfPod(p *model.Pod) string {
	var room ownerNames
	bs, ag := podOwners(p, &room)
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

// UpsertPod records an added or updated Pod and re-derives the sandboxes it touches.
func (f *Fleet) UpsertPod(p *model.Pod) {
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	now := f.opts.Now()
	pe := f.podAt(p.Namespace, p.Name)
	var old *model.Pod
	var oldSandbox string // the sandbox the Pod belonged to, as holders name it
	if pe == nil {
		pe = &podEntry{key: nn(p.Namespace, p.Name), pod: p}
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
			if start, ok := p.Status.StartTime(); ok && old == nil && f.unknown && start.Before(now) {
				// Seen in the initial list already holding its IP: it has held it
				// since about its start, not since sandscope started.
				since = start
			}
			// Read back through the history's time (holders), in the location
			// open is about to note under the history's lock.
			pe.since = since.UnixNano()
			f.history.addLive(newIP, pe)
			f.history.open(newIP, pe.key, string(p.UID), "", since, f.version)
		}
	}

	f.enqueueLinks(pe.key)
	// The sandboxes recording the IP show its holder (name, UID, since,
	// sandbox). An update that changes none of them, a status change, the
	// usual event, does not re-derive them: any sandbox may record any IPs,
	// a thousand other tenants' among them.
	sameHolder := old != nil && oldIP == newIP && old.UID == p.UID
	if !sameHolder {
		f.enqueueEntries(f.history.watchers(oldIP))
		f.enqueueEntries(f.history.watchers(newIP))
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
	pe.linked = f.hasLinks(pe.key)
	if !pe.inOrder && pe.linked {
		pe.inOrder, pe.pending = true, true
		f.pendingPods = append(f.pendingPods, pe)
	}
	if newIP != "" {
		sbx := f.podSandboxKey(pe)
		f.history.setSandbox(newIP, string(p.UID), sbx)
		if sameHolder && sbx != oldSandbox { // it changed hands: its holders say so
			f.enqueueEntries(f.history.watchers(newIP))
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
	pe := f.podAt(p.Namespace, p.Name)
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
		f.enqueueEntries(f.history.watchers(ip))
	}
	pe.removed = true
	f.dropPod(pe)
	f.enqueueLinks(pe.key)
	f.enqueueCandidates(pe, pe.pod)
	f.ensurePlain(pe.ns(), pe.name())
	f.ensureOrphans(pe.ns(), pe.pod)
	f.process(now)
	f.notify()
}

func (f *Fleet) dropLive(pe *podEntry, ip string) { f.history.removeLive(ip, pe) }

// ownerNames is room for the owners podOwners lists: a Pod has one or two,
// and a caller's array keeps them off the heap (podOwners runs several
// times for every Pod event).
type ownerNames [4]string

// podOwners lists the BatchSandbox and agent Sandbox names a Pod declares
// itself part of (controller owner references and the BatchSandbox name
// label), in room (reused, and read only until its next use).
func podOwners(p *model.Pod, room *ownerNames) (bsbx []string, agents []string) {
	if p == nil {
		return nil, nil
	}
	bsbx, agents = room[:0:2], room[2:2:4]
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
	var oldRoom, newRoom ownerNames
	ob, oa := podOwners(old, &oldRoom)
	nb, na := podOwners(new, &newRoom)
	for _, o := range ob {
		if !slices.Contains(nb, o) || new == nil {
			f.removeOwned(model.EngineBatchSandbox, pe.ns(), o, pe)
		}
	}
	for _, o := range nb {
		f.addOwned(model.EngineBatchSandbox, pe.ns(), o, pe)
	}
	for _, o := range oa {
		if !slices.Contains(na, o) || new == nil {
			f.removeOwned(model.EngineAgent, pe.ns(), o, pe)
		}
	}
	for _, o := range na {
		f.addOwned(model.EngineAgent, pe.ns(), o, pe)
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
	var room ownerNames
	bs, ag := podOwners(p, &room)
	for _, b := range bs {
		f.enqueueAt(model.EngineBatchSandbox, pe.ns(), b)
	}
	for _, a := range ag {
		f.enqueueAt(model.EngineAgent, pe.ns(), a)
	}
	f.enqueueAll(f.claims.All(pe.key))
	f.enqueueAll(slices.Values(f.agentsMatching(pe.ns(), p.Labels)))
	f.enqueueAt(model.EnginePod, pe.ns(), pe.name())
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
	pe := f.podAt(ns, name)
	should := pe != nil && f.opts.PodSelector.Matches(pe.pod.Labels) && !f.claimed(pe)
	e := f.sandboxAt(model.EnginePod, ns, name)
	switch {
	case should && e == nil:
		e = &sbEntry{key: model.SandboxKey(model.EnginePod, ns, name)}
		f.addSandbox(e)
	case !should && e != nil:
		f.removeSandbox(e)
	}
}

// podSandboxKey names the sandbox a Pod belongs to: its controlling
// BatchSandbox, else the newest BatchSandbox that allocated it, else its
// agent Sandbox, else its own plain-Pod sandbox; "" when none is known. It
// returns the entry's own key string: the IP history and slot holders keep
// it, and a freshly built copy would cost one allocation per Pod.
func (f *Fleet) podSandboxKey(pe *podEntry) string {
	var room ownerNames
	bs, ag := podOwners(pe.pod, &room)
	for _, b := range bs {
		if e := f.sandboxAt(model.EngineBatchSandbox, pe.ns(), b); e != nil {
			return e.key
		}
	}
	if k := f.primaryClaim(pe.key); k != "" {
		return k
	}
	for _, a := range ag {
		if e := f.sandboxAt(model.EngineAgent, pe.ns(), a); e != nil {
			return e.key
		}
	}
	if ks := f.agentsMatching(pe.ns(), pe.pod.Labels); len(ks) > 0 {
		slices.Sort(ks)
		return ks[0]
	}
	if e := f.sandboxAt(model.EnginePod, pe.ns(), pe.name()); e != nil {
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
		t := e.bs.Created()
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
		switch t := e.bs.Created(); {
		case len(best) == 0 || t.After(bestT):
			best, bestT = append(best[:0], k), t
		case t.Equal(bestT):
			best = append(best, k)
		}
	}
	slices.Sort(best)
	return best
}
