package cli

import (
	"context"
	"errors"
	"runtime/debug"
	"testing"
)

// gcPercent reads the current GC ratio (SetGCPercent returns the old one).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneMemoryAfterSync(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	synced := func(context.Context) error { return nil }
	failed := func(context.Context) error { return errors.New("context canceled") }

	tuneMemoryAfterSync(context.Background(), failed)
	if got := gcPercent(); got != 100 {
		t.Fatalf("before a sync: GC percent %d, want Go's default 100", got)
	}
	tuneMemoryAfterSync(context.Background(), synced)
	if got := gcPercent(); got != steadyGCPercent {
		t.Fatalf("after the sync: GC percent %d, want %d", got, steadyGCPercent)
	}

	debug.SetGCPercent(100)
	t.Setenv("GOGC", "200")
	tuneMemoryAfterSync(context.Background(), synced)
	if got := gcPercent(); got != 100 {
		t.Fatalf("with GOGC set: GC percent changed to %d", got)
	}
}
