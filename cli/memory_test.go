package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
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
	var ratioWhileLoading int
	loading := func(context.Context) error { ratioWhileLoading = gcPercent(); return errors.New("context canceled") }

	debug.SetGCPercent(100)
	tuneMemoryForWatch(context.Background(), loading)
	if ratioWhileLoading != loadGCPercent {
		t.Fatalf("while loading: GC percent %d, want %d", ratioWhileLoading, loadGCPercent)
	}
	ratioWhileLoading = 0
	synced := func(context.Context) error { ratioWhileLoading = gcPercent(); return nil }
	tuneMemoryForWatch(context.Background(), synced)
	if ratioWhileLoading != loadGCPercent {
		t.Fatalf("while loading to a sync: GC percent %d, want %d", ratioWhileLoading, loadGCPercent)
	}
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
