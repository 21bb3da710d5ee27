package model

import (
	"testing"
	"unsafe"
)

// The informer caches hold a Pod and a BatchSandbox per sandbox, and the
// allocator rounds each object up to its size class (runtime/sizeclasses.go:
// ... 240, 256, 288, 320, 352, 384, 416 ...); a ContainerStatus is allocated per
// container in a Pod's status. The limits are the classes they fit today: a
// field that pushes one over costs every sandbox 32 bytes or more. Put a
// field most objects leave empty in the rare part rather than raise a limit.
func TestCachedStructsFitTheirSizeClass(t *testing.T) {
	for _, c := range []struct {
		name        string
		size, class uintptr
	}{
		{"Pod", unsafe.Sizeof(Pod{}), 320},
		{"BatchSandbox", unsafe.Sizeof(BatchSandbox{}), 240},
		{"AgentSandbox", unsafe.Sizeof(AgentSandbox{}), 288},
		{"ContainerStatus", unsafe.Sizeof(ContainerStatus{}), 96},
		// A derived row, allocated per sandbox and per change, and its
		// slot (one per sandbox, nearly always).
		{"Sandbox", unsafe.Sizeof(Sandbox{}), 144},
		{"Slot", unsafe.Sizeof(Slot{}), 96},
	} {
		if c.size > c.class {
			t.Errorf("%s is %d bytes: it no longer fits the %d-byte size class it is allocated in; "+
				"put a field most objects leave empty in the rare part", c.name, c.size, c.class)
		}
	}
}
