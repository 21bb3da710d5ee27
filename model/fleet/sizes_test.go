package fleet

import (
	"testing"
	"unsafe"
)

// The Fleet's own record of each sandbox and each Pod, allocated once per
// object: the limits are the size classes they fit today (see
// model/sizes_test.go).
func TestEntriesFitTheirSizeClass(t *testing.T) {
	for _, c := range []struct {
		name        string
		size, class uintptr
	}{
		{"sbEntry", unsafe.Sizeof(sbEntry{}), 112},
		{"podEntry", unsafe.Sizeof(podEntry{}), 48},
	} {
		if c.size > c.class {
			t.Errorf("%s is %d bytes: it no longer fits the %d-byte size class it is allocated in", c.name, c.size, c.class)
		}
	}
}
