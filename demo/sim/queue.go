package sim

import (
	"container/heap"
	"context"
	"time"
)

// The virtual clock: events ordered by virtual time, run by RunUntil.

// after schedules fn d after the current virtual time. Callers hold s.mu.
func (s *Sim) after(d time.Duration, what string, fn func(ctx context.Context) error) {
	s.seq++
	heap.Push(&s.queue, &event{at: s.now.Add(d), seq: s.seq, what: what, fn: fn})
}

// between returns a duration uniformly in [lo, hi] at millisecond resolution.
func (s *Sim) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rng.Int63n(int64((hi-lo)/time.Millisecond)+1))*time.Millisecond
}

// event is one scheduled step of the simulation.
type event struct {
	at   time.Time
	seq  uint64
	what string
	fn   func(ctx context.Context) error
}

// eventQueue orders events by virtual time, then by scheduling order, which
// makes the operation sequence independent of wall-clock jitter.
type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }

func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}

func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *eventQueue) Push(x any) { *q = append(*q, x.(*event)) }

func (q *eventQueue) Pop() any {
	old := *q
	ev := old[len(old)-1]
	*q = old[:len(old)-1]
	return ev
}

func (q eventQueue) peek() (time.Time, bool) {
	if len(q) == 0 {
		return time.Time{}, false
	}
	return q[0].at, true
}
