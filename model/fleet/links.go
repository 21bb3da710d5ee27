package fleet

import "iter"

// The sandboxes whose slots name a Pod are its links. Nearly every Pod
// exists and has one, which its entry keeps (podEntry.link), where it costs
// nothing, rather than an index entry, which costs a map slot. podLinks has
// the links of every other key: those of a Pod named by several sandboxes,
// or that does not exist.

// eachLink calls yield with each sandbox whose slots name the Pod key, in
// the order they linked it, until yield returns false. It takes a callback
// rather than returning an iterator: an iterator over a Pod's own link is a
// closure that outlives the call, an allocation for every Pod event, where
// a callback the caller passes stays on its stack.
func (f *Fleet) eachLink(key string, yield func(*sbEntry) bool) {
	if pe := f.pods[key]; pe != nil && pe.link != nil {
		yield(pe.link)
		return
	}
	for e := range f.podLinks.All(key) {
		if !yield(e) {
			return
		}
	}
}

// linksOf is eachLink as an iterator.
func (f *Fleet) linksOf(key string) iter.Seq[*sbEntry] {
	return func(yield func(*sbEntry) bool) { f.eachLink(key, yield) }
}

// enqueueLinks queues the sandboxes whose slots name the Pod key.
func (f *Fleet) enqueueLinks(key string) {
	f.eachLink(key, func(e *sbEntry) bool {
		f.enqueueEntry(e)
		return true
	})
}

// hasLinks reports whether a sandbox's slot names the Pod key.
func (f *Fleet) hasLinks(key string) bool {
	if pe := f.pods[key]; pe != nil && pe.link != nil {
		return true
	}
	return f.podLinks.Has(key)
}

// addLink notes that e's slots name the Pod key, once.
func (f *Fleet) addLink(key string, e *sbEntry) {
	pe := f.pods[key]
	switch {
	case pe == nil:
		f.podLinks.Add(key, e)
	case pe.link == e:
	case pe.link != nil: // a second link: both go to the index, in order
		f.podLinks.Add(key, pe.link)
		f.podLinks.Add(key, e)
		pe.link = nil
	case f.podLinks.Has(key):
		f.podLinks.Add(key, e)
	default:
		pe.link = e
	}
}

// removeLink undoes addLink.
func (f *Fleet) removeLink(key string, e *sbEntry) {
	pe := f.pods[key]
	if pe != nil && pe.link == e {
		pe.link = nil
		return
	}
	f.podLinks.Remove(key, e)
	if pe != nil {
		f.settleLink(pe)
	}
}

// settleLink moves an existing Pod's only link from the index to its entry.
func (f *Fleet) settleLink(pe *podEntry) {
	if e, ok := f.podLinks.Lone(pe.key); ok {
		f.podLinks.Remove(pe.key, e)
		pe.link = e
	}
}

func (f *Fleet) unlinkPod(podKey string, e *sbEntry) {
	f.removeLink(podKey, e)
	if !f.hasLinks(podKey) {
		if pe := f.pods[podKey]; pe != nil {
			pe.linked = false
			f.dropPod(pe)
		}
	}
}

func (f *Fleet) linkPod(podKey string, e *sbEntry) {
	f.addLink(podKey, e)
	if pe := f.pods[podKey]; pe != nil {
		pe.linked = true
		if !pe.inOrder {
			pe.inOrder, pe.pending = true, true
			f.pendingPods = append(f.pendingPods, pe)
		}
	}
}
