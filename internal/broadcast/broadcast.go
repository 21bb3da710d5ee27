// Package broadcast fans one stream of coalesced "something changed"
// signals out to any number of subscribers: a kube.Watcher to its readers,
// and the TUI's sources (one per context, and the set of them) to the UI.
package broadcast

import (
	"context"
	"sync"
)

// Signal is a set of subscriptions to a change signal. Each subscriber has
// a channel of capacity 1: a signal that finds it full is merged with the
// one already waiting, so a slow reader never blocks the sender and never
// falls behind by more than one snapshot. The zero value is ready to use.
type Signal struct {
	mu   sync.Mutex
	next int
	subs map[int]chan struct{}
}

// Subscribe returns a channel that already holds one signal (so the
// subscriber takes its first snapshot at once) and a function that ends the
// subscription and closes the channel. Calling it twice is safe.
func (s *Signal) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[int]chan struct{}{}
	}
	id := s.next
	s.next++
	s.subs[id] = ch
	s.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.subs, id)
			s.mu.Unlock()
			close(ch)
		})
	}
}

// Notify signals every subscriber without blocking.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already waiting: coalesced
		}
	}
}

// Relay subscribes with subscribe and calls notify for every signal, until
// ctx ends or the subscription's channel closes; then it unsubscribes. It
// is how one source's changes become another's (a context's watcher, the
// TUI's view of that context, the set of every context).
func Relay(ctx context.Context, subscribe func() (<-chan struct{}, func()), notify func()) {
	changes, unsubscribe := subscribe()
	defer unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
			notify()
		}
	}
}
