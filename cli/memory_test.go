package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// A load tightens the GC ratio once its live heap is large, not before, and
// stops looking when the load ends.
func TestTightenWhenLarge(t *testing.T) {
	defer debug.SetGCPercent(gcPercent())
	debug.SetGCPercent(watchGCPercent)
	ctx, cancel := context.WithCancel(context.Background())
	var looks atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		tightenWhenLarge(ctx, func() uint64 { looks.Add(1); return largeLoadHeap - 1 }, time.Millisecond)
	}()
	for looks.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	if got := gcPercent(); got != watchGCPercent {
		t.Fatalf("below the threshold: GC percent %d", got)
	}
	cancel()
	<-done

	heap := uint64(0)
	var mu sync.Mutex
	done = make(chan struct{})
	go func() {
		defer close(done)
		tightenWhenLarge(context.Background(), func() uint64 { mu.Lock(); defer mu.Unlock(); return heap }, time.Millisecond)
	}()
	mu.Lock()
	heap = largeLoadHeap
	mu.Unlock()
	<-done // returns once it tightened, without a cancel
	if got := gcPercent(); got != largeLoadGCPercent {
		t.Fatalf("past the threshold: GC percent %d, want %d", got, largeLoadGCPercent)
	}
	runtime.GC() // the figure is the last GC's
	if liveHeapBytes() == 0 {
		t.Fatal("the runtime reports no live heap")
	}
}

// SANDSCOPE_HEAPPROFILE gets a heap profile with MemStats once synced,
// nothing when the watcher never syncs, and an unwritable path is one line
// on stderr.
func TestWriteHeapProfileAfterSync(t *testing.T) {
	synced := func(context.Context) error { return nil }
	never := func(context.Context) error { return errors.New("context canceled") }
	path := filepath.Join(t.TempDir(), "heap.txt")
	t.Setenv(heapProfileEnv, path)
	var errOut bytes.Buffer

	writeHeapProfileAfterSync(context.Background(), never, &errOut)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a watcher that never synced left a profile (stat: %v)", err)
	}
	writeHeapProfileAfterSync(context.Background(), synced, &errOut)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("heap profile:")) || !bytes.Contains(data, []byte("# runtime.MemStats")) || errOut.Len() != 0 {
		t.Fatalf("profile starts %q, stderr %q; want a text heap profile with MemStats", data[:min(len(data), 40)], errOut.String())
	}

	t.Setenv(heapProfileEnv, filepath.Join(t.TempDir(), "missing-dir", "heap.txt"))
	writeHeapProfileAfterSync(context.Background(), synced, &errOut)
	if !strings.HasPrefix(errOut.String(), "sandscope: "+heapProfileEnv+": ") || strings.Count(errOut.String(), "\n") != 1 {
		t.Fatalf("unwritable path: stderr %q, want one line naming %s", errOut.String(), heapProfileEnv)
	}
}

// SANDSCOPE_SYNCSTATS gets the runtime's CPU classes once synced, nothing
// when the watcher never syncs.
func TestWriteSyncStatsAfterSync(t *testing.T) {
	synced := func(context.Context) error { return nil }
	never := func(context.Context) error { return errors.New("context canceled") }
	path := filepath.Join(t.TempDir(), "stats.txt")
	t.Setenv(syncStatsEnv, path)
	var errOut bytes.Buffer

	writeSyncStatsAfterSync(context.Background(), never, &errOut)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a watcher that never synced left stats (stat: %v)", err)
	}
	runtime.GC()
	writeSyncStatsAfterSync(context.Background(), synced, &errOut)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != len(syncStatsMetrics) || errOut.Len() != 0 {
		t.Fatalf("stats %q, stderr %q: want one line for each of %d metrics", data, errOut.String(), len(syncStatsMetrics))
	}
	for i, line := range lines {
		name, value, ok := strings.Cut(line, " ")
		if !ok || name != syncStatsMetrics[i] {
			t.Fatalf("line %d is %q, want %s and a value", i, line, syncStatsMetrics[i])
		}
		if name == "/gc/cycles/total:gc-cycles" && value == "0" {
			t.Fatalf("%s read 0 after a forced GC", name)
		}
	}
}
