package fleet

import (
	"iter"
	"time"

	"github.com/sandscope/sandscope/model"
)

func (f *Fleet) enqueue(key string) {
	if e := f.sandboxes[key]; e != nil {
		f.enqueueEntry(e)
	}
}

// enqueueAt queues engine e's sandbox ns/name, if known, without building
// its key (sandboxAt).
func (f *Fleet) enqueueAt(e model.Engine, ns, name string) {
	if sb := f.sandboxAt(e, ns, name); sb != nil {
		f.enqueueEntry(sb)
	}
}

func (f *Fleet) enqueueEntry(e *sbEntry) {
	if !e.removed && !e.queued {
		e.queued = true
		f.queue = append(f.queue, e)
	}
}

func (f *Fleet) enqueueAll(keys iter.Seq[string]) {
	for k := range keys {
		f.enqueue(k)
	}
}

// enqueueEntries queues the sandboxes an index of entries yields (podLinks,
// the IPs' watchers: removeSandbox takes an entry out of them).
func (f *Fleet) enqueueEntries(es iter.Seq[*sbEntry]) {
	for e := range es {
		f.enqueueEntry(e)
	}
}

// process re-derives the queued sandboxes. A sandbox is derived at most
// twice per event: links depend only on sources and Pods, so a second pass
// only refreshes the names of holders. The count lives in the entry only
// during the call (reset at its end for the entries it derived), so an
// entry keeps no event number to tell a stale count from a current one.
func (f *Fleet) process(now time.Time) {
	for i := 0; i < len(f.queue); i++ {
		e := f.queue[i]
		f.queue[i] = nil
		e.queued = false
		if e.removed || e.passes >= 2 {
			continue
		}
		if e.passes == 0 {
			f.passed = append(f.passed, e)
		}
		e.passes++
		f.derive(e, now)
	}
	for _, e := range f.passed {
		e.passes = 0
	}
	clear(f.passed)
	f.passed = trimQueue(f.passed)
	f.queue = trimQueue(f.queue)
}

// trimQueue empties q, keeping its array unless a burst grew it: a burst's
// worth of queue is not kept around.
func trimQueue(q []*sbEntry) []*sbEntry {
	if cap(q) > 1024 {
		return nil
	}
	return q[:0]
}
