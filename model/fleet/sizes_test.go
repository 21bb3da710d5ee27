package fleet

import (
	"testing"
	"unsafe"

	"github.com/sandscope/sandscope/model"
)

// What the Fleet keeps per sandbox, per Pod and per IP, and the allocator
// size class each fits today (runtime/sizeclasses.go: ... 48, 64, 96, 112,
// 128, 144, ..., 240, 256, 288, 320, 352, 384, 416 ...). The allocator
// rounds every object up to its class, so a field that pushes a struct over
// costs every sandbox the difference: put a field most objects leave empty
// in a rare part rather than raise a limit (docs/design.md, "Compact model
// records").
func TestRecordsFitTheirSizeClass(t *testing.T) {
	for _, c := range []struct {
		name        string
		size, class uintptr
	}{
		// The status fields few Pods set and the deletion grace, inline,
		// took 88 bytes: the 416 class. The termination grace as a pointer,
		// the restart policy and the conditions as a slice took 40 more:
		// the 320 class. The creationTimestamp as a time.Time and the
		// finalizers as a slice took 32 more: the 288 class.
		{"Pod", unsafe.Sizeof(model.Pod{}), 256},
		// The whole last state (three pointers) took 104 bytes: the 112
		// class, per container.
		{"ContainerStatus", unsafe.Sizeof(model.ContainerStatus{}), 96},
		// Pool, allocation, parse notices, task and late Ready inline took
		// 64 bytes: the 288 class; the metadata's creationTimestamp and
		// finalizers as above, the 240 class.
		{"BatchSandbox", unsafe.Sizeof(model.BatchSandbox{}), 208},
		{"AgentSandbox", unsafe.Sizeof(model.AgentSandbox{}), 256},
		// A derived row, allocated per sandbox and per change: copies of
		// its source's metadata took 272 bytes (the 288 class), its state
		// as a string 16 more (the 144 class).
		{"Sandbox", unsafe.Sizeof(model.Sandbox{}), 128},
		// A row and its one slot, allocated as one: the 240 class with the
		// state as a string.
		{"rowWithSlot", unsafe.Sizeof(rowWithSlot{}), 224},
		// Its slot, one per sandbox nearly always: Index is an int32 that
		// shares its word with NamespaceOnly.
		{"Slot", unsafe.Sizeof(model.Slot{}), 96},
		// The agent fields and the watched IPs as fields of every entry
		// took 136 bytes (the 144 class), times as time.Time 16 more each.
		// Its links as a list of Pod keys (read from its last row now) took
		// the 112 class, and a 16-byte list for nearly every sandbox.
		{"sbEntry", unsafe.Sizeof(sbEntry{}), 96},
		// Its IP as a field took it to the 64 class. Its one link is kept
		// here, in room it had anyway, rather than as an index entry
		// (about 45 bytes of map).
		{"podEntry", unsafe.Sizeof(podEntry{}), 48},
		// One holding inline, its Pod named by the fleet's key (one string,
		// not two), times as Unix ns, no per-IP LRU links.
		{"ipRecord", unsafe.Sizeof(ipRecord{}), 96},
		// An IP's history, its live Pod and its recording sandbox in one
		// node, under one key: three maps keyed by the IP took about 60
		// bytes more per sandbox than the two pointers.
		{"ipNode", unsafe.Sizeof(ipNode{}), 112},
	} {
		if c.size > c.class {
			t.Errorf("%s is %d bytes: it no longer fits the %d-byte size class it is allocated in; "+
				"put a field most objects leave empty in a rare part", c.name, c.size, c.class)
		}
	}
}
