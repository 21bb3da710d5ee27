package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: writes from several goroutines all land, whole, and
// String can be read meanwhile (run with -race to see the lock matter).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("ab\n")) //nolint:errcheck // never fails
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); len(got) != 8*100*3 || strings.Count(got, "ab\n") != 800 {
		t.Fatalf("got %d bytes, %d whole writes; want 2400 and 800", len(got), strings.Count(got, "ab\n"))
	}
}
