package fleet

import (
	"iter"
	"strings"

	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// The Pods that name an engine's sandbox as their owner (controller owner
// references, the BatchSandbox name label) are its owned Pods. Nearly
// every sandbox exists and owns one Pod, which its entry keeps
// (sbEntry.owned), where it costs a word the entry had room for, rather
// than an index entry, which cost a map slot per sandbox. bsOwned and
// agOwned have the owned Pods of every other key: those of a sandbox that
// owns several, or that does not exist (yet, or any more: orphans.go).
// This mirrors the Pods' links (links.go).

// ownedIndex is the index of engine eng's owned Pods.
func (f *Fleet) ownedIndex(eng model.Engine) *mem.Index[*podEntry] {
	if eng == model.EngineAgent {
		return &f.agOwned
	}
	return &f.bsOwned
}

// addOwned notes that pe names engine eng's sandbox ns/name as its owner, once.
func (f *Fleet) addOwned(eng model.Engine, ns, name string, pe *podEntry) {
	idx := f.ownedIndex(eng)
	e := f.sandboxAt(eng, ns, name)
	switch {
	case e == nil:
		idx.Add(model.SandboxKey(eng, ns, name), pe)
	case e.owned == pe:
	case e.owned != nil: // a second Pod: both go to the index, in order
		idx.Add(e.key, e.owned)
		idx.Add(e.key, pe)
		e.owned = nil
	case idx.Has(e.key):
		idx.Add(e.key, pe)
	default:
		e.owned = pe
	}
}

// removeOwned undoes addOwned.
func (f *Fleet) removeOwned(eng model.Engine, ns, name string, pe *podEntry) {
	e := f.sandboxAt(eng, ns, name)
	if e == nil {
		f.ownedIndex(eng).Remove(model.SandboxKey(eng, ns, name), pe)
		return
	}
	if e.owned == pe {
		e.owned = nil
		return
	}
	f.ownedIndex(eng).Remove(e.key, pe)
	f.settleOwned(e)
}

// settleOwned moves an existing sandbox's only owned Pod from the index to
// its entry.
func (f *Fleet) settleOwned(e *sbEntry) {
	idx := f.ownedIndex(e.engine())
	if pe, ok := idx.Lone(e.key); ok {
		idx.Remove(e.key, pe)
		e.owned = pe
	}
}

// unsettleOwned moves a sandbox's owned Pod from its entry, which is going
// away, to the index, which keeps the owned Pods of sandboxes that do not
// exist.
func (f *Fleet) unsettleOwned(e *sbEntry) {
	if e.owned != nil {
		f.ownedIndex(e.engine()).Add(e.key, e.owned)
		e.owned = nil
	}
}

// ownedBy yields the Pods that name the sandbox key as their owner, in the
// order they did. The body must not add or remove owned Pods.
func (f *Fleet) ownedBy(key string) iter.Seq[*podEntry] {
	return func(yield func(*podEntry) bool) {
		e := f.sandboxes[key]
		if e != nil && e.owned != nil {
			yield(e.owned)
			return
		}
		eng, _, _ := strings.Cut(key, "/")
		for pe := range f.ownedIndex(model.Engine(eng)).All(key) {
			if !yield(pe) {
				return
			}
		}
	}
}

// ownedPods is ownedBy as a new list.
func (f *Fleet) ownedPods(key string) []*podEntry {
	var out []*podEntry
	for pe := range f.ownedBy(key) {
		out = append(out, pe)
	}
	return out
}
