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

func TestTuneMemoryForWatch(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	synced := func(context.Context) error { return nil }
	var ratioWhileLoading int
	loading := func(context.Context) error { ratioWhileLoading = gcPercent(); return errors.New("context canceled") }

	debug.SetGCPercent(100)
	tuneMemoryForWatch(context.Background(), loading)
	if ratioWhileLoading != watchGCPercent {
		t.Fatalf("while loading: GC percent %d, want %d", ratioWhileLoading, watchGCPercent)
	}
	tuneMemoryForWatch(context.Background(), synced)
	if got := gcPercent(); got != watchGCPercent {
		t.Fatalf("after the sync: GC percent %d, want %d", got, watchGCPercent)
	}

	debug.SetGCPercent(100)
	t.Setenv("GOGC", "200")
	tuneMemoryForWatch(context.Background(), synced)
	if got := gcPercent(); got != 100 {
		t.Fatalf("with GOGC set: GC percent changed to %d", got)
	}
}
