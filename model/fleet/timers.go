package fleet

import (
	"container/heap"
	"time"
)

// Tick re-derives the sandboxes whose notices depend on the clock (a Pod
// becoming stuck Terminating, an expiry coming close), and only those: they
// wait in a heap ordered by the time they change. Call it every few seconds.
func (f *Fleet) Tick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	changed := false
	for len(f.timers) > 0 && !f.timers[0].due.After(now) {
		t := heap.Pop(&f.timers).(timer)
		if e := f.sandboxes[t.key]; e != nil && e.due == t.due.UnixNano() {
			e.due = 0
			if !changed {
				f.version++
				changed = true
			}
			f.enqueue(t.key)
		}
	}
	if changed {
		f.process(now)
		f.notify()
	}
	f.history.prune(now)
}

type timer struct {
	due time.Time
	key string
}

type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }

func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *timerHeap) Push(x any) { *h = append(*h, x.(timer)) }

func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
