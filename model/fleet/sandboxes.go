package fleet

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/sandscope/sandscope/model"
)

// UpsertBatchSandbox records an added or updated BatchSandbox.
func (f *Fleet) UpsertBatchSandbox(b *model.BatchSandbox) {
	if b == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	// Looked up before its key is made: an update, the usual event, then
	// makes no key to throw away.
	e := f.sandboxAt(model.EngineBatchSandbox, b.Namespace, b.Name)
	var oldAlloc []string
	if e == nil {
		e = &sbEntry{key: model.SandboxKey(model.EngineBatchSandbox, b.Namespace, b.Name)}
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
	f.enqueue(e.key)
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
	f.enqueueLinks(k)
	f.enqueueAll(f.claims.All(k))
	if pe := f.pods[k]; pe != nil && pe.ip() != "" {
		f.enqueueEntries(f.history.watchers(pe.ip()))
	}
	f.ensurePlain(ns, name)
}

// DeleteBatchSandbox records a BatchSandbox's deletion.
func (f *Fleet) DeleteBatchSandbox(namespace, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.sandboxAt(model.EngineBatchSandbox, namespace, name)
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
	for _, pe := range f.ownedPods(model.SandboxKey(model.EngineBatchSandbox, namespace, name)) {
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
	e := f.sandboxAt(model.EngineAgent, namespace, name)
	if e == nil || e.ag == nil {
		return
	}
	f.version++
	f.noteMemberGone(e.ag, f.opts.Now())
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
	for pe := range f.ownedBy(e.key) {
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

func (f *Fleet) addSandbox(e *sbEntry) {
	f.sandboxes[e.key] = e
	if e.engine() != model.EnginePod {
		f.settleOwned(e)
	}
	f.enqueue(e.key)
}

// removeSandbox drops a sandbox and its links; the Pods it linked are re-examined.
func (f *Fleet) removeSandbox(e *sbEntry) {
	delete(f.sandboxes, e.key)
	f.unsettleOwned(e)
	delete(f.masked, e)
	e.removed = true
	if e.inOrder && !e.pending {
		f.removedSbs = append(f.removedSbs, e)
	}
	if e.engine() == model.EngineAgent {
		f.unregisterSelector(e)
	}
	var buf [smallSetMax]string
	for _, name := range e.linkedNames(buf[:0]) {
		pk := f.internPodKey(e.ns(), name)
		f.unlinkPod(pk, e)
		if pe := f.pods[pk]; pe != nil {
			f.enqueueEntries(f.history.watchers(pe.ip()))
		}
	}
	for ip := range e.watchedIPs() {
		f.history.removeWatch(ip, e)
	}
}
