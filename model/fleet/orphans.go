package fleet

import (
	"slices"
	"strings"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

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
	_, rest, _ := strings.Cut(key, "/")
	_, name, _ := strings.Cut(rest, "/")
	for pe := range f.ownedBy(key) {
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
	var room ownerNames
	bs, ag := podOwners(p, &room)
	for _, b := range bs {
		f.ensureOrphan(model.EngineBatchSandbox, ns, b)
	}
	for _, a := range ag {
		f.ensureOrphan(model.EngineAgent, ns, a)
	}
}

func (f *Fleet) ensureOrphan(eng model.Engine, ns, name string) {
	// Looked up before a key is made: a Pod listed before its sandbox made
	// one to throw away.
	e := f.sandboxAt(eng, ns, name)
	switch {
	case e == nil && !f.status.Synced:
		// The initial lists are still arriving: a Pod listed before its
		// sandbox would get a row derived only to be replaced. The rows of
		// the sandboxes still missing at the sync are made then (addOrphans).
	case e == nil:
		key := model.SandboxKey(eng, ns, name)
		if !f.orphanWanted(key) {
			return
		}
		e = &sbEntry{key: key}
		if eng == model.EngineAgent {
			e.agentLink = &agentLink{}
		}
		f.addSandbox(e)
	case e.orphan() && !f.orphanWanted(e.key):
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
