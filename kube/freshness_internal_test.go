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

// The probes and ticks of every watcher in a process fall on the same
// instants of the wall clock, whenever each watcher started: a TUI over
// several contexts then draws their freshness in one frame, not one each.
func TestProbesAndTicksKeepTheWallClock(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC) // a multiple of probeEvery
	for _, c := range []struct {
		after  time.Duration // since base
		probe  time.Duration // want untilNextProbe
		tick   time.Duration // want untilOnTheClock(…, 1s, 500ms)
		reason string
	}{
		{0, 2 * time.Second, 500 * time.Millisecond, "on the clock"},
		{300 * time.Millisecond, 1700 * time.Millisecond, 200 * time.Millisecond, "a read that took 300 ms"},
		{1200 * time.Millisecond, 2800 * time.Millisecond, 300 * time.Millisecond, "less than half a period left: the one after"},
		{1900*time.Millisecond + 7, 2100*time.Millisecond - 7, 600*time.Millisecond - 7, "just before a multiple"},
	} {
		now := base.Add(c.after)
		if got := untilNextProbe(now, 0); got != c.probe {
			t.Errorf("%s: next probe in %s, want %s", c.reason, got, c.probe)
		}
		if got := untilOnTheClock(now, time.Second, 500*time.Millisecond); got != c.tick {
			t.Errorf("%s: next tick in %s, want %s", c.reason, got, c.tick)
		}
		// A process's phase shifts its probes by that much, and no more.
		const phase = 700 * time.Millisecond
		if got, want := untilNextProbe(now.Add(phase), phase), c.probe; got != want {
			t.Errorf("%s, phase %s: next probe in %s, want %s", c.reason, phase, got, want)
		}
	}
}

// Processes probe at phases of their own, spread over the period: a fleet
// of operators' sandscopes does not reach the API server all at once.
func TestProbePhaseSpreadsProcesses(t *testing.T) {
	t.Parallel()
	const pids = 64
	buckets := make(map[time.Duration]int)
	for pid := 1000; pid < 1000+pids; pid++ {
		p := probePhase(pid)
		if p < 0 || p >= probeEvery {
			t.Fatalf("pid %d: phase %s outside [0, %s)", pid, p, probeEvery)
		}
		buckets[p/(probeEvery/8)]++
	}
	for b, n := range buckets {
		if n > pids/4 {
			t.Errorf("%d of %d consecutive pids probe in the same eighth of the period (%d): not spread", n, pids, b)
		}
	}
	if len(buckets) < 6 {
		t.Errorf("consecutive pids fall in %d of 8 eighths of the period, want at least 6", len(buckets))
	}
}
