package codec

import (
	"fmt"
	"testing"
)

func TestInternCache(t *testing.T) {
	var c internCache
	buf := []byte("node-a")
	s := c.bytes(buf)
	copy(buf, "XXXXXX") // a decoder's buffer is reused for the next frame
	if s != "node-a" {
		t.Fatalf("interned %q, want node-a: it shares the caller's buffer", s)
	}
	if again := c.bytes([]byte("node-a")); again != "node-a" {
		t.Fatalf("second lookup = %q", again)
	}
	if c.bytes(nil) != "" {
		t.Error("empty bytes did not read as the empty string")
	}
	for i := range 3 * internCacheMax {
		want := fmt.Sprintf("image-%d", i)
		if got := c.bytes([]byte(want)); got != want {
			t.Fatalf("bytes(%q) = %q", want, got)
		}
		if len(c.m) > internCacheMax {
			t.Fatalf("the cache holds %d strings, more than %d", len(c.m), internCacheMax)
		}
	}
	var none *internCache
	if got := none.bytes([]byte("phase")); got != "phase" {
		t.Errorf("a nil cache interned %q", got)
	}
}
