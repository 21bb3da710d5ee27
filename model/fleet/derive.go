package fleet

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/forensics"
)

// maxSlots bounds the slots of one sandbox whatever its annotations claim.
const maxSlots = 1024

// slotSpec is what a source says about one slot before the Pods are consulted.
type slotSpec struct {
	ip  string // recorded address
	pod string // linked Pod name
	// foreign names the sandbox the Pod belongs to now when that is another
	// one (a pooled Pod the Pool handed on); "" when it is this sandbox's.
	foreign string
}

// rowWithSlot is a derived row and room for its slot, allocated as one:
// nearly every sandbox has one slot, and the two took two objects (128 and
// 96 bytes) for each derivation, which the collector then marks one by
// one; together they fill the 224-byte size class exactly. A row with more
// slots, or none, is allocated alone.
type rowWithSlot struct {
	sb   model.Sandbox
	slot [1]model.Slot
}

// derive recomputes one sandbox from its source and the current Pods, and
// re-links it in the Pod and IP indexes. The previous *Sandbox is replaced,
// never modified.
func (f *Fleet) derive(e *sbEntry, now time.Time) {
	var specs []slotSpec
	// The row's Meta points into its source, not at a copy. That keeps it
	// immutable only because sources are: an update hands the Fleet a new
	// object (Upsert* replace e.bs, e.ag, pe.pod, never edit them), and kube/
	// hands in objects decoded or slimmed afresh for each event that neither
	// client-go nor sandscope writes to afterwards.
	// The row is filled in head until its slots are known: see rowWithSlot.
	head := model.Sandbox{Key: e.key}
	// The notices gather in scratch on the stack and the row gets a copy
	// of exactly their number: grown by append, the list left every
	// smaller array it outgrew as garbage, and kept unused room.
	var noticeBuf [4]model.Notice
	notices := noticeBuf[:0]
	var engineReady bool
	var expire *time.Time
	expireField := ""
	orphan := e.orphan()
	switch {
	case orphan:
		specs = f.orphanSlots(e)
		head.Meta, head.EnginePhase = f.orphanMeta(e, specs), model.PhaseDeleted
	case e.engine() == model.EngineBatchSandbox:
		b := e.bs
		specs = f.batchSlots(e)
		head.Meta, head.EnginePhase = &b.ObjectMeta, b.Phase
		head.Pool, head.ExpireTime = b.PoolRef(), b.ExpireTime
		expire, expireField = b.ExpireTime, "spec.expireTime"
		notices = append(notices, b.Notices()...)
		if n := taskNotice(b); n != nil {
			notices = append(notices, *n)
		}
		if len(b.Endpoints) > len(specs) {
			notices = append(notices, model.BadAnnotation(osv1.AnnotationEndpoints, fmt.Sprintf(
				"%d addresses for %d slots (spec.replicas %d); the rest ignored", len(b.Endpoints), len(specs), b.Replicas)))
		}
	case e.engine() == model.EngineAgent:
		a := e.ag
		specs = f.agentSlots(e)
		head.Meta, head.ExpireTime = &a.ObjectMeta, a.ShutdownTime
		head.Pool = a.AgentOwner(model.KindSandboxWarmPool) // a free warm-pool member
		head.EnginePhase = "NotReady"
		for _, c := range a.Conditions {
			if c.Type == "Ready" {
				engineReady = c.Status == "True"
				if engineReady {
					head.EnginePhase = "Ready"
				} else if c.Reason != "" {
					head.EnginePhase = c.Reason
				}
			}
		}
		expire, expireField = a.ShutdownTime, "spec.shutdownTime"
		notices = append(notices, a.Notices...)
		if e.selErr != "" {
			notices = append(notices, model.Notice{Code: model.CodeBadAnnotation, Severity: model.SeverityWarning,
				Message:  "status.selector " + strconv.Quote(e.selStr) + " does not parse: " + e.selErr,
				Evidence: []model.Evidence{{Kind: model.Observed, Text: "status.selector " + strconv.Quote(e.selStr)}}})
		}
	case e.engine() == model.EnginePod:
		pe := f.podAt(e.ns(), e.name())
		if pe == nil {
			return // ensurePlain removes it
		}
		p := pe.pod
		head.Meta, head.EnginePhase = &p.ObjectMeta, string(p.Status.Phase)
		bound := e.boundFor(e.name())
		// A plain Pod has no engine record: its recorded address is the first
		// IP seen for the Pod first bound. Kubernetes never changes a live
		// Pod's IP, so a different IP later means a re-creation (UID_CHANGED
		// wins) or a status rewrite (IP_STALE, which is then true). Once set
		// it is kept in the entry's last row, the one place it is read from.
		ip := ""
		if e.sb != nil && len(e.sb.Slots) > 0 {
			ip = e.sb.Slots[0].RecordedIP
		}
		if ip == "" && (bound == "" || bound == p.UID) {
			ip = p.Status.PodIP
		}
		specs = []slotSpec{{ip: ip, pod: e.name()}}
	}

	var due time.Time
	var sb *model.Sandbox
	var room []model.Slot
	if len(specs) == 1 {
		row := &rowWithSlot{sb: head}
		sb, room = &row.sb, row.slot[:]
	} else {
		sb = new(model.Sandbox)
		*sb = head // a copy: head's address would take it to the heap as well
	}
	sb.Slots, due = f.buildSlots(e, specs, room, now)
	f.relink(e, specs)

	primary := sb.PrimarySlot()
	primaryForeign := len(specs) > 0 && specs[0].foreign != ""
	sb.State = effectiveState(sb.DeletingSince() != nil, sb.EnginePhase, primary, primaryForeign)
	if !orphan && e.engine() == model.EngineAgent {
		sb.State = agentState(e.ag, sb.State)
	}

	for i := range sb.Slots {
		sl := &sb.Slots[i]
		if n, ok := identityNotice(sl, e.key); ok {
			notices = append(notices, n)
		}
		if sl.Stuck != nil {
			n := stuckNotice(sl)
			if orphan {
				n.Message += "; its " + engineKind(e.engine()) + " " + e.name() + " is deleted"
				n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Observed,
					Text: engineKind(e.engine()) + " " + e.ns() + "/" + e.name() + " not found; the Pod names it as its owner"})
			}
			notices = append(notices, n)
		}
		if orphan && sl.Stuck == nil && sl.Pod != nil && sl.Pod.DeletionTimestamp == nil {
			notices = append(notices, orphanLiveNotice(e, sl.Pod))
		}
	}
	if !orphan && forensics.RecreationApplies(sb) { // a deleted sandbox's row has no engine record to compare with
		for i := range sb.Slots {
			if n, ok := forensics.RecreatedNotice(sb.CreatedAt(), readySince(e), &sb.Slots[i]); ok {
				notices = append(notices, n)
			}
		}
	}
	if n, next := objectStuck(sb.DeletingSince(), sb.Finalizers(), now, f.opts.StuckAfter); n != nil {
		notices = append(notices, *n)
	} else {
		due = earliest(due, next)
	}
	notices = appendStateNotices(notices, e.engine(), sb.EnginePhase, engineReady, sb.State, primary)

	seen := make([]*model.Pod, 0, len(sb.Slots))
	for i := range sb.Slots {
		p := sb.Slots[i].Pod
		if p == nil || slices.Contains(seen, p) {
			continue
		}
		seen = append(seen, p)
		rn, total := restartNotices(p)
		sb.Restarts += total
		notices = append(notices, rn...)
		if orphan {
			continue // nothing will run in a deleted sandbox: its readiness and start command are moot
		}
		if i == 0 {
			if n := execReadyNotice(e.engine(), p); n != nil {
				notices = append(notices, *n)
			}
		}
		spec, st := p.Main()
		if e.engine() == model.EngineBatchSandbox && taskRunsCommand(e.bs) {
			continue // the task runs the user's command; the keep-alive is by design
		}
		if ok, keepAlive := keepAliveOnly(spec); ok {
			if ref := imageKey(spec, st); ref != "" {
				if n := entrypointNotice(p.Name, spec, keepAlive, ref, f.needImage(ref, e.key)); n != nil {
					notices = append(notices, *n)
				}
			}
		}
	}
	n, next := expiryNotice(expireField, expire, sb.CreatedAt(), now, f.opts.ExpiringWithin)
	if n != nil {
		notices = append(notices, *n)
	}
	due = earliest(due, next)
	slices.SortStableFunc(notices, func(a, b model.Notice) int { return b.Severity.Rank() - a.Severity.Rank() })
	if len(notices) > 0 {
		sb.Notices = append(make([]model.Notice, 0, len(notices)), notices...)
	}

	e.sb = sb
	f.publish(e)
	var dueNanos int64
	if !due.IsZero() {
		dueNanos = due.UnixNano()
	}
	if dueNanos != 0 && dueNanos != e.due {
		f.timers.push(timer{due: due, key: e.key})
	}
	e.due = dueNanos
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// buildSlots resolves each slot's Pod, binds first UIDs and derives identity.
// due is the next time a linked Pod becomes stuck Terminating. The slots
// go into room (zeroed) when it is long enough, else into a new list.
func (f *Fleet) buildSlots(e *sbEntry, specs []slotSpec, room []model.Slot, now time.Time) ([]model.Slot, time.Time) {
	if len(specs) == 0 {
		e.bound = nil
		return nil, time.Time{}
	}
	var due time.Time
	var slots []model.Slot
	if len(specs) <= len(room) {
		slots = room[:len(specs):len(specs)]
	} else {
		slots = make([]model.Slot, len(specs))
	}
	var holderRoom [2]model.Holder
	for i, sp := range specs {
		var pod *model.Pod
		if sp.pod != "" {
			if pe := f.podAt(e.ns(), sp.pod); pe != nil {
				pod = pe.pod
			}
		}
		bound := e.boundFor(sp.pod)
		if bound == "" && pod != nil && sp.foreign == "" {
			e.bound = append(e.bound, boundUID{pod: sp.pod, uid: pod.UID})
			bound = pod.UID
		}
		facts := slotFacts{RecordedIP: sp.ip, PodName: sp.pod, BoundUID: bound, Pod: pod, Holders: f.holders(sp.ip, holderRoom[:0])}
		facts.ForeignSandbox = sp.foreign
		id, h := deriveIdentity(facts)
		sl := model.Slot{Index: int32(i), RecordedIP: sp.ip, PodName: sp.pod, BoundUID: string(bound), Identity: id, Holder: h}
		if (id == model.IdentityPodDead || id == model.IdentityPodGone) && f.holderUnchecked(sp.ip) {
			sl.NamespaceOnly = true
		}
		if sp.foreign == "" {
			sl.Pod = pod
			var next time.Time
			sl.Stuck, next = stuckInfo(pod, now, f.opts.StuckAfter)
			due = earliest(due, next)
		}
		slots[i] = sl
	}
	// Forget bindings of Pods no longer named by any slot, so memory stays flat.
	if len(e.bound) > len(specs) {
		e.bound = slices.DeleteFunc(e.bound, func(b boundUID) bool {
			return !slices.ContainsFunc(specs, func(sp slotSpec) bool { return sp.pod == b.pod })
		})
	}
	return slots, due
}

// relink updates the Pod and IP indexes after a sandbox's slots changed. It
// runs before e.sb is replaced: the IPs e watched are those of its last row.
func (f *Fleet) relink(e *sbEntry, specs []slotSpec) {
	// Within a sandbox the Pods are told apart by name (they share its
	// namespace): the keys are looked up or made only for the links that
	// change, which in the usual derivation none does.
	var oldBuf, newBuf, oldIPBuf, newIPBuf [smallSetMax]string
	oldNames := e.linkedNames(oldBuf[:0])
	newNames := distinctNames(len(specs), func(i int) string { return specs[i].pod }, newBuf[:0])
	// Nested scans are the cheapest for the one or few slots of almost
	// every sandbox; past a handful, sets keep relinking linear.
	oldSet, newSet := stringSet(oldNames), stringSet(newNames)
	for _, n := range oldNames {
		if !newSet.has(n) {
			k := f.internPodKey(e.ns(), n)
			f.unlinkPod(k, e)
			f.afterLinkChange(k, e)
		}
	}
	for _, n := range newNames {
		if !oldSet.has(n) {
			k := f.internPodKey(e.ns(), n)
			f.linkPod(k, e)
			f.afterLinkChange(k, e)
		}
	}
	oldIPs := oldIPBuf[:0]
	for ip := range e.watchedIPs() {
		oldIPs = append(oldIPs, ip)
	}
	newIPs := distinctNames(len(specs), func(i int) string { return specs[i].ip }, newIPBuf[:0])
	oldIPSet, newIPSet := stringSet(oldIPs), stringSet(newIPs)
	for _, ip := range oldIPs {
		if !newIPSet.has(ip) {
			f.history.removeWatch(ip, e) // once per IP: a second remove finds nothing
		}
	}
	for _, ip := range newIPs {
		if !oldIPSet.has(ip) {
			f.history.addWatch(ip, e)
		}
	}
}

// distinctNames appends to buf the distinct non-empty strings of at(0..n-1),
// in order.
func distinctNames(n int, at func(int) string, buf []string) []string {
	var seen map[string]struct{} // past smallSetMax
	if n > smallSetMax {
		seen = make(map[string]struct{}, n)
	}
	for i := range n {
		s := at(i)
		if s == "" {
			continue
		}
		if seen != nil {
			if _, dup := seen[s]; dup {
				continue
			}
			seen[s] = struct{}{}
		} else if slices.Contains(buf, s) {
			continue
		}
		buf = append(buf, s)
	}
	return buf
}

// linkedNames appends to buf the names of the Pods e's slots link: those
// its last row's slots name, each once (relink linked them from the same
// specs, which name each slot's Pod as the row does). An entry keeps no
// list of its own.
func (e *sbEntry) linkedNames(buf []string) []string {
	if e.sb == nil {
		return buf
	}
	slots := e.sb.Slots
	return distinctNames(len(slots), func(i int) string { return slots[i].PodName }, buf)
}

// smallSet answers membership by a scan up to smallSetMax strings, by a map
// beyond.
type smallSet struct {
	s []string
	m map[string]struct{}
}

const smallSetMax = 8

func stringSet(ss []string) smallSet {
	if len(ss) <= smallSetMax {
		return smallSet{s: ss}
	}
	m := make(map[string]struct{}, len(ss))
	for _, s := range ss {
		m[s] = struct{}{}
	}
	return smallSet{m: m}
}

func (x smallSet) has(s string) bool {
	if x.m != nil {
		_, ok := x.m[s]
		return ok
	}
	return slices.Contains(x.s, s)
}

// watchedIPs yields the recorded IPs e is among the watchers of: those of
// the slots of its last row (relink indexed them from the same specs). An
// IP recorded by several slots comes once per slot.
func (e *sbEntry) watchedIPs() iter.Seq[string] {
	return func(yield func(string) bool) {
		if e.sb == nil {
			return
		}
		for i := range e.sb.Slots {
			if ip := e.sb.Slots[i].RecordedIP; ip != "" && !yield(ip) {
				return
			}
		}
	}
}

// afterLinkChange: the sandboxes recording a Pod's IP name its sandbox as the
// holder; when what the Pod belongs to changes, they are re-derived.
func (f *Fleet) afterLinkChange(podKey string, except *sbEntry) {
	pe := f.pods[podKey]
	if pe == nil {
		return
	}
	ip := pe.ip()
	if ip == "" {
		return
	}
	for e := range f.history.watchers(ip) {
		if e != except {
			f.enqueueEntry(e)
		}
	}
	f.history.setSandbox(ip, string(pe.pod.UID), f.podSandboxKey(pe))
}

// batchSlots lays out a BatchSandbox's slots. Non-pooled: slot i is the Pod
// with pod-index i (named <name>-<i>), recorded address endpoints[i]. Pooled:
// the alloc-status Pods (minus released) in order ↔ endpoints entries; when
// alloc-status is absent, the Pods labelled with the sandbox's name.
func (f *Fleet) batchSlots(e *sbEntry) []slotSpec {
	b := e.bs
	ep := func(i int) string {
		if i < len(b.Endpoints) {
			return b.Endpoints[i]
		}
		return ""
	}
	if b.PoolRef() != "" || len(b.AllocatedPods()) > 0 {
		names := b.AllocatedPods()
		fromClaims := len(names) > 0
		if !fromClaims {
			var buf [4]string // scratch: a pooled sandbox has a Pod or a few
			names = buf[:0]
			for pe := range f.ownedBy(e.key) {
				names = append(names, pe.name())
			}
			slices.Sort(names)
		}
		n := min(max(len(names), len(b.Endpoints)), replicaCap(b))
		specs := f.newSpecs(n)
		for i := range specs {
			specs[i].ip = ep(i)
			if i < len(names) {
				specs[i].pod = names[i]
				if fromClaims {
					specs[i].foreign = f.pooledPodOwner(e, names[i])
				}
			}
		}
		return specs
	}
	// Slot i is the first Pod (in ownedBy's order) with index i, so a Pod
	// is put in its slot as it is found, the slots growing as far as the
	// highest index.
	specs := f.newSpecs(0)
	for pe := range f.ownedBy(e.key) { // read only: no copy per derivation
		if i := podIndex(pe.pod, b.Name); i >= 0 && i < maxSlots {
			if i >= len(specs) {
				specs = f.growSpecs(i + 1)
			}
			if specs[i].pod == "" {
				specs[i].pod = pe.name()
			}
		}
	}
	// spec.replicas slots, more only for Pods this sandbox owns (a scale
	// down in progress); endpoints entries past them are not slots.
	specs = f.growSpecs(min(max(len(specs), int(b.Replicas)), maxSlots))
	for i := range specs {
		specs[i].ip = ep(i)
		if specs[i].pod == "" {
			specs[i].pod = f.defaultPodName(e, i)
		}
	}
	return specs
}

// newSpecs is the Fleet's slot scratch, zeroed, at length n. It is valid
// until the next derivation: nothing keeps a slotSpec past derive.
func (f *Fleet) newSpecs(n int) []slotSpec {
	f.specScratch = f.specScratch[:0]
	return f.growSpecs(n)
}

// growSpecs lengthens the slot scratch to n when it is shorter, the new
// entries zero.
func (f *Fleet) growSpecs(n int) []slotSpec {
	s := f.specScratch
	if old := len(s); n > old {
		s = slices.Grow(s, n-old)[:n]
		clear(s[old:])
	}
	f.specScratch = s
	return s
}

// defaultPodName is the name of the Pod a non-pooled BatchSandbox's slot i
// expects, <name>-<i>, while no Pod it owns has that index. The name is
// built in scratch and a string kept only for the row: the Pod's own when
// a Pod has that name, else the one the last row's slot already holds,
// else a new one.
func (f *Fleet) defaultPodName(e *sbEntry, i int) string {
	buf := append(append(f.nameScratch[:0], e.bs.Name...), '-')
	buf = strconv.AppendInt(buf, int64(i), 10)
	f.nameScratch = buf
	if pe := f.podAtBytes(e.ns(), buf); pe != nil {
		return pe.name()
	}
	if e.sb != nil && i < len(e.sb.Slots) && e.sb.Slots[i].PodName == string(buf) {
		return e.sb.Slots[i].PodName
	}
	return string(buf)
}

// podAtBytes is podAt for a name in bytes.
func (f *Fleet) podAtBytes(ns string, name []byte) *podEntry {
	var buf [128]byte
	k := append(append(append(buf[:0], ns...), '/'), name...)
	return f.pods[string(k)]
}

// pooledPodOwner names the sandbox a Pod that e's alloc-status lists
// belongs to now, when that is not e: the newest BatchSandbox whose
// alloc-status lists it too (the Pool handed it on while e's allocation
// still names it), or the BatchSandbox its name label points at (newer
// controllers label allocated pool Pods). "" when it is still e's.
func (f *Fleet) pooledPodOwner(e *sbEntry, pod string) string {
	key := nn(e.ns(), pod)
	newest := f.newestClaims(key)
	if len(newest) > 0 && (len(newest) > 1 || newest[0] != e.key) {
		// Another sandbox claimed it later, or as late (creation times have
		// whole seconds): lean strict and hold it for that one.
		for _, c := range newest {
			if c != e.key {
				return c
			}
		}
	}
	if pe := f.pods[key]; pe != nil {
		if v, ok := pe.pod.Labels.Lookup(osv1.LabelBatchSandboxName); ok && v != "" && v != e.bs.Name {
			return model.SandboxKey(model.EngineBatchSandbox, e.ns(), v)
		}
	}
	return ""
}

// replicaCap is how many slots a pooled BatchSandbox may have: its
// spec.replicas (the CRD defaults it to 1). The annotations are the
// tenant's to write; one that lists a thousand other tenants' IPs must not
// get a thousand slots, each re-derived whenever one of those Pods changes.
func replicaCap(b *model.BatchSandbox) int {
	return min(max(int(b.Replicas), 1), maxSlots)
}

// orphanSlots lays out a deleted sandbox's row: one slot per Pod still
// naming it, by name. There is no engine record left, so no recorded address.
func (f *Fleet) orphanSlots(e *sbEntry) []slotSpec {
	var names []string
	for pe := range f.ownedBy(e.key) {
		names = append(names, pe.name())
	}
	slices.Sort(names)
	specs := make([]slotSpec, 0, min(len(names), maxSlots))
	for _, n := range names[:min(len(names), maxSlots)] {
		specs = append(specs, slotSpec{pod: n})
	}
	return specs
}

// orphanMeta is the metadata a deleted sandbox's row can still show: its
// namespace and name, and as its creation time its oldest Pod's (the
// object's own is gone; it was created no later than its Pods). Its UID is
// unknown (the model keeps no owner UID of a Pod).
func (f *Fleet) orphanMeta(e *sbEntry, specs []slotSpec) *model.ObjectMeta {
	m := &model.ObjectMeta{Namespace: e.ns(), Name: e.name()}
	for _, sp := range specs {
		if pe := f.podAt(e.ns(), sp.pod); pe != nil {
			if t := pe.pod.Created(); m.Created().IsZero() || t.Before(m.Created()) {
				m.SetCreated(t)
			}
		}
	}
	return m
}

// engineKind is the kind of an engine's sandbox object, for messages.
func engineKind(e model.Engine) string {
	switch e {
	case model.EngineBatchSandbox:
		return "BatchSandbox"
	case model.EngineAgent:
		return "Sandbox"
	}
	return "Pod"
}

// podIndex reads a BatchSandbox Pod's index: the pod-index label, else the
// number after "<batchsandbox>-" in its name; -1 when neither says.
func podIndex(p *model.Pod, owner string) int {
	if v, ok := p.Labels.Lookup(osv1.LabelPodIndex); ok {
		if i, err := strconv.Atoi(v); err == nil && i >= 0 {
			return i
		}
	}
	// owner and the dash are cut one after the other: owner+"-" would be
	// a new string for every Pod of every derivation.
	if rest, ok := strings.CutPrefix(p.Name, owner); ok {
		if rest, ok := strings.CutPrefix(rest, "-"); ok {
			if i, err := strconv.Atoi(rest); err == nil && i >= 0 {
				return i
			}
		}
	}
	return -1
}

// agentSlots: an agent Sandbox has one slot, its Pod found through
// status.selector (or, without one, the Pod it controls / named after it).
// The recorded address is status.podIPs[0]; when the Sandbox records none,
// traffic follows the selector (its Service), so the Pod's own IP is used.
func (f *Fleet) agentSlots(e *sbEntry) []slotSpec {
	a := e.ag
	var best *podEntry
	for _, name := range f.agentCandidates(e) {
		pe := f.podAt(e.ns(), name)
		if pe == nil {
			continue
		}
		if e.sel != nil && !e.sel.Matches(pe.pod.Labels) {
			continue
		}
		if best == nil || betterAgentPod(pe.pod, best.pod) {
			best = pe
		}
	}
	if best != nil {
		e.lastPod = best.name()
	}
	rec := ""
	if len(a.PodIPs) > 0 {
		rec = a.PodIPs[0]
	} else if best != nil && a.Routed() {
		// Not when nothing routes there any more: on expiry the controller
		// wipes the status (no selector, no Service) while the Pod still
		// terminates, and no request follows its IP.
		rec = best.pod.Status.PodIP
	}
	if e.lastPod == "" && rec == "" && (a.Paused() || a.Expired()) {
		return nil // suspended or expired, nothing ever bound
	}
	return []slotSpec{{ip: rec, pod: e.lastPod}}
}

// agentState names why an agent Sandbox has no Pod when its controller
// took the Pod away on purpose: it is Suspended or Expired, not Pending
// (waiting for a Pod) nor Gone (lost one). A Pod still terminating keeps
// the sandbox Terminating.
func agentState(a *model.AgentSandbox, st model.EffectiveState) model.EffectiveState {
	if st != model.StatePending && st != model.StateGone {
		return st
	}
	switch {
	case a.Expired():
		return model.StateExpired
	case a.Paused():
		return model.StateSuspended
	}
	return st
}

// betterAgentPod prefers a Pod that is not deleting and not dead, then the newest.
func betterAgentPod(a, b *model.Pod) bool {
	ra, rb := agentPodRank(a), agentPodRank(b)
	if ra != rb {
		return ra > rb
	}
	if !a.Created().Equal(b.Created()) {
		return a.Created().After(b.Created())
	}
	return a.Name < b.Name
}

func agentPodRank(p *model.Pod) int {
	switch {
	case p.DeletionTimestamp != nil:
		return 0
	case podDead(p):
		return 1
	}
	return 2
}

// readySince is when the sandbox's engine last said Ready=True, nil when it
// does not (or, for a BatchSandbox, when that came early: see
// BatchSandbox.ReadySince).
func readySince(e *sbEntry) *time.Time {
	switch {
	case e.bs != nil:
		return e.bs.ReadySince()
	case e.ag != nil:
		for i := range e.ag.Conditions {
			if c := &e.ag.Conditions[i]; c.Type == "Ready" && c.Status == "True" && !c.LastTransitionTime.IsZero() {
				return &c.LastTransitionTime
			}
		}
	}
	return nil
}
