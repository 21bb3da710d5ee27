package model

import (
	"testing"
	"unsafe"
)

// The fleet holds a Pod and a BatchSandbox per sandbox, and the allocator
// rounds each object up to its size class (runtime/sizeclasses.go: ... 96,
// 112, 128, 144, ..., 240, 256, 288, 320, 352, 384, 416 ...); a
// ContainerStatus is allocated per container in a Pod's status. The limits
// are the classes they fit today: a field that pushes one over costs every
// sandbox 16 bytes or more. Put a field most objects leave empty in the rare
// part rather than raise a limit (docs/design.md, "Compact model records").
func TestCachedStructsFitTheirSizeClass(t *testing.T) {
	for _, c := range []struct {
		name        string
		size, class uintptr
	}{
		// The status fields few Pods set and the deletion grace, inline,
		// took 88 bytes: the 416 class.
		{"Pod", unsafe.Sizeof(Pod{}), 320},
		// Pool, allocation, parse notices, task and late Ready inline took
		// 64 bytes: the 288 class.
		{"BatchSandbox", unsafe.Sizeof(BatchSandbox{}), 240},
		{"AgentSandbox", unsafe.Sizeof(AgentSandbox{}), 288},
		// The whole last state (three pointers) took 104 bytes: the 112
		// class per container.
		{"ContainerStatus", unsafe.Sizeof(ContainerStatus{}), 96},
		// A derived row, allocated per sandbox and per change: copies of
		// its source's metadata took 272 bytes (the 288 class).
		{"Sandbox", unsafe.Sizeof(Sandbox{}), 144},
		// Its slot, one per sandbox nearly always: Index is an int32 that
		// shares its word with NamespaceOnly.
		{"Slot", unsafe.Sizeof(Slot{}), 96},
	} {
		if c.size > c.class {
			t.Errorf("%s is %d bytes: it no longer fits the %d-byte size class it is allocated in; "+
				"put a field most objects leave empty in the rare part", c.name, c.size, c.class)
		}
	}
}
