package kube

import "sync"

// broadcaster fans one stream of coalesced "something changed" signals out
// to any number of subscribers. Each subscriber has a channel of capacity 1:
// a signal that finds it full is merged with the one already waiting, so a
// slow reader never blocks the sender and never falls behind by more than
// one snapshot.
type broadcaster struct {
	mu   sync.Mutex
	next int
	subs map[int]chan struct{}
}

func newBroadcaster() *broadcaster {
	return &broadcaster{subs: map[int]chan struct{}{}}
}

// subscribe returns a channel that already holds one signal (so the
// subscriber takes its first snapshot at once) and a function that ends the
// subscription and closes the channel. Calling it twice is safe.
func (b *broadcaster) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	b.mu.Lock()
	id := b.next
	b.next++
	b.subs[id] = ch
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, id)
			b.mu.Unlock()
			close(ch)
		})
	}
}

// notify signals every subscriber without blocking.
func (b *broadcaster) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already waiting: coalesced
		}
	}
}
