package kube

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Only a consistent read that answers proves the data fresh: one that fails
// or does not answer within the budget marks the connection lost and leaves
// AsOf at the last proof, whatever else the server still answers.
func TestProbeOnceProvesFreshness(t *testing.T) {
	t.Parallel()
	w := NewWatcher(&Clients{}, WatcherOptions{})
	w.health.proving()
	w.informers = append(w.informers, &watchedInformer{resource: "pods", hasSynced: func() bool { return true }})
	podsUp := func() bool { return w.Watches()[0].Up }
	ctx := t.Context()

	w.probeOnce(ctx, func(context.Context) error { return nil })
	proof := w.Status().AsOf
	if proof.IsZero() || w.Status().DisconnectedSince != nil {
		t.Fatalf("after an answered read: %+v", w.Status())
	}

	// The server answers other requests (here: the informers' keys), but
	// the storage read fails.
	w.health.answered("pods", 200, true)
	w.probeOnce(ctx, func(context.Context) error { return errors.New("etcdserver: request timed out") })
	st := w.Status()
	if st.DisconnectedSince == nil || !st.AsOf.Equal(proof) {
		t.Fatalf("after a failed read: disconnected since %v, AsOf %v (want %v)", st.DisconnectedSince, st.AsOf, proof)
	}
	if podsUp() {
		t.Errorf("pods watch up while the storage read fails")
	}

	// A read that never answers: lost within the budget, not at the
	// request timeout.
	w.health.provenFresh(time.Now())
	proof = w.Status().AsOf
	start := time.Now()
	w.probeOnce(ctx, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	if took := time.Since(start); took > freshBudget+time.Second {
		t.Errorf("an unanswered read took %s, budget %s", took, freshBudget)
	}
	if st := w.Status(); st.DisconnectedSince == nil || !st.AsOf.Equal(proof) {
		t.Fatalf("after an unanswered read: disconnected since %v, AsOf %v (want %v)", st.DisconnectedSince, st.AsOf, proof)
	}

	w.probeOnce(ctx, func(context.Context) error { return nil })
	if st := w.Status(); st.DisconnectedSince != nil || !st.AsOf.After(proof) || !podsUp() {
		t.Fatalf("after the storage answered again: pods up %v, %+v", podsUp(), st)
	}
}
