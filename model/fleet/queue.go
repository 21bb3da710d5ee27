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
// ipWatch: removeSandbox takes an entry out of them).
func (f *Fleet) enqueueEntries(es iter.Seq[*sbEntry]) {
	for e := range es {
		f.enqueueEntry(e)
	}
}

// process re-derives the queued sandboxes. A sandbox is derived at most
// twice per event: links depend only on sources and Pods, so a second pass
// only refreshes the names of holders.
func (f *Fleet) process(now time.Time) {
	f.passGen++
	for i := 0; i < len(f.queue); i++ {
		e := f.queue[i]
		f.queue[i] = nil
		e.queued = false
		if e.removed {
			continue
		}
		if e.passGen != f.passGen {
			e.passGen, e.passes = f.passGen, 0
		}
		if e.passes >= 2 {
			continue
		}
		e.passes++
		f.derive(e, now)
	}
	if cap(f.queue) > 1024 {
		f.queue = nil // do not keep a burst's worth of queue around
	} else {
		f.queue = f.queue[:0]
	}
}
