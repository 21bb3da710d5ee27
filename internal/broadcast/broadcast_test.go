package broadcast

import (
	"context"
	"testing"
)

func TestSignalCoalesces(t *testing.T) {
	var s Signal
	ch, unsubscribe := s.Subscribe()
	other, unsubscribeOther := s.Subscribe()
	defer unsubscribeOther()
	for range 5 {
		s.Notify()
	}
	got := 0
	for len(ch) > 0 {
		<-ch
		got++
	}
	if got != 1 || len(other) != 1 {
		t.Errorf("5 notifies + the initial signal gave %d signals (other has %d), want 1 each", got, len(other))
	}
	unsubscribe()
	unsubscribe()
	s.Notify() // must not panic on the closed channel
	if _, ok := <-ch; ok {
		t.Errorf("channel still open after unsubscribe")
	}
}

// Relay passes the source's signals on, and unsubscribes when it ends.
func TestRelay(t *testing.T) {
	var from, to Signal
	out, unsubscribe := to.Subscribe()
	defer unsubscribe()
	<-out // the initial signal
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Relay(ctx, from.Subscribe, to.Notify)
	}()
	<-out // the source's initial signal, relayed
	from.Notify()
	<-out
	cancel()
	<-done
	from.mu.Lock()
	n := len(from.subs)
	from.mu.Unlock()
	if n != 0 {
		t.Errorf("%d subscriptions left on the source after Relay ended", n)
	}
}
