package model

import (
	"testing"
	"unsafe"

	"github.com/sandscope/sandscope/model/modeltest"
)

// The fleet holds a Pod and a BatchSandbox per sandbox; a ContainerStatus
// is allocated per container in a Pod's status. The limits are the size
// classes they fit today: put a field most objects leave empty in the rare
// part rather than raise a limit (docs/design.md, "Compact model records").
func TestCachedStructsFitTheirSizeClass(t *testing.T) {
	modeltest.FitSizeClasses(t,
		// The status fields few Pods set and the deletion grace, inline,
		// took 88 bytes: the 416 class.
		modeltest.SizeClass{Name: "Pod", Size: unsafe.Sizeof(Pod{}), Class: 320},
		// Pool, allocation, parse notices, task and late Ready inline took
		// 64 bytes: the 288 class.
		modeltest.SizeClass{Name: "BatchSandbox", Size: unsafe.Sizeof(BatchSandbox{}), Class: 240},
		modeltest.SizeClass{Name: "AgentSandbox", Size: unsafe.Sizeof(AgentSandbox{}), Class: 288},
		// The whole last state (three pointers) took 104 bytes: the 112
		// class per container.
		modeltest.SizeClass{Name: "ContainerStatus", Size: unsafe.Sizeof(ContainerStatus{}), Class: 96},
		// A derived row, allocated per sandbox and per change: copies of
		// its source's metadata took 272 bytes (the 288 class).
		modeltest.SizeClass{Name: "Sandbox", Size: unsafe.Sizeof(Sandbox{}), Class: 144},
		// Its slot, one per sandbox nearly always: Index is an int32 that
		// shares its word with NamespaceOnly.
		modeltest.SizeClass{Name: "Slot", Size: unsafe.Sizeof(Slot{}), Class: 96},
	)
}
