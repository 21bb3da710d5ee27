package fleet

import "iter"

// The sandboxes whose slots name a Pod are its links. Nearly every Pod
// exists and has one, which its entry keeps (podEntry.link), where it costs
// nothing, rather than an index entry, which costs a map slot. podLinks has
// the links of every other key: those of a Pod named by several sandboxes,
// or that does not exist.

// linksOf yields the sandboxes whose slots name the Pod key, in the order
// they linked it.
func (f *Fleet) linksOf(key string) iter.Seq[*sbEntry] {
	if pe := f.pods[key]; pe != nil && pe.link != nil {
		return func(yield func(*sbEntry) bool) { yield(pe.link) }
	}
	return f.podLinks.All(key)
}

// enqueueLinks queues the sandboxes whose slots name the Pod key, reading
// a Pod's own link directly: linksOf's iterator over it is a closure, an
// allocation for every Pod event.
func (f *Fleet) enqueueLinks(key string) {
	if pe := f.pods[key]; pe != nil && pe.link != nil {
		f.enqueueEntry(pe.link)
		return
	}
	f.enqueueEntries(f.podLinks.All(key))
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
