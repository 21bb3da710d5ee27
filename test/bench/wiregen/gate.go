package wiregen

import (
	"context"
	"sync"
)

// stallGate holds requests and streams while the generator is stalled.
type stallGate struct {
	mu      sync.Mutex
	stalled bool
	resume  chan struct{} // closed when the stall ends
}

func (g *stallGate) init() { g.resume = make(chan struct{}) }

func (g *stallGate) set(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if on == g.stalled {
		return
	}
	g.stalled = on
	if on {
		g.resume = make(chan struct{})
	} else {
		close(g.resume)
	}
}

func (g *stallGate) on() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stalled
}

// wait returns once the generator is not stalled (true) or ctx ends (false).
func (g *stallGate) wait(ctx context.Context) bool {
	g.mu.Lock()
	stalled, resume := g.stalled, g.resume
	g.mu.Unlock()
	if !stalled {
		return true
	}
	select {
	case <-resume:
		return true
	case <-ctx.Done():
		return false
	}
}

// broadcast sends live events to every open watch that takes them.
type broadcast struct {
	mu     sync.Mutex
	subs   map[chan []byte]struct{}
	closed bool
}

func (b *broadcast) init() { b.subs = map[chan []byte]struct{}{} }

func (b *broadcast) subscribe() (<-chan []byte, func()) {
	ch := make(chan []byte, 1024)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(ch)
		return ch, func() {}
	}
	b.subs[ch] = struct{}{}
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.subs[ch]; ok {
			delete(b.subs, ch)
			close(ch)
		}
	}
}

// send queues ev for every subscriber; a subscriber 1,024 events behind
// loses it (as a real server ends a watch that cannot keep up; the
// measurement then counts the update as not seen).
func (b *broadcast) send(ev []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

func (b *broadcast) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for ch := range b.subs {
		delete(b.subs, ch)
		close(ch)
	}
}
