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
		t := f.timers.pop()
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

// timerHeap is a container/heap of timers, pushed and popped through push
// and pop: heap.Push and heap.Pop pass each timer as an interface value, an
// allocation per sandbox derived.
type timerHeap []timer

func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	heap.Fix(h, len(*h)-1)
}

func (h *timerHeap) pop() timer {
	old := *h
	t, n := old[0], len(old)-1
	old[0], old[n] = old[n], timer{}
	*h = old[:n]
	if n > 0 {
		heap.Fix(h, 0)
	}
	return t
}

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
