package fleet

import (
	"testing"
	"unsafe"
)

// The Fleet's own records, allocated once per sandbox, per Pod and per IP:
// the limits are the size classes they fit today (see model/sizes_test.go).
func TestEntriesFitTheirSizeClass(t *testing.T) {
	for _, c := range []struct {
		name        string
		size, class uintptr
	}{
		// The agent fields and the watched IPs as fields of every entry
		// took 136 bytes (the 144 class), times as time.Time 16 more each.
		{"sbEntry", unsafe.Sizeof(sbEntry{}), 112},
		// Its IP as a field took it to the 64 class. Its one link is kept
		// here, in room it had anyway, rather than as an index entry
		// (about 45 bytes of map).
		{"podEntry", unsafe.Sizeof(podEntry{}), 48},
		// One holding inline, its Pod named by the fleet's key (one string,
		// not two), times as Unix ns, no per-IP LRU links.
		{"ipRecord", unsafe.Sizeof(ipRecord{}), 96},
	} {
		if c.size > c.class {
			t.Errorf("%s is %d bytes: it no longer fits the %d-byte size class it is allocated in", c.name, c.size, c.class)
		}
	}
}
