package fleet

import (
	"testing"
	"unsafe"

	"github.com/sandscope/sandscope/model/modeltest"
)

// The Fleet's own records, allocated once per sandbox, per Pod and per IP:
// the limits are the size classes they fit today (see model/sizes_test.go).
func TestEntriesFitTheirSizeClass(t *testing.T) {
	modeltest.FitSizeClasses(t,
		// The agent fields and the watched IPs as fields of every entry
		// took 136 bytes (the 144 class), times as time.Time 16 more each.
		modeltest.SizeClass{Name: "sbEntry", Size: unsafe.Sizeof(sbEntry{}), Class: 112},
		// Its IP as a field took it to the 64 class. Its one link is kept
		// here, in room it had anyway, rather than as an index entry
		// (about 45 bytes of map).
		modeltest.SizeClass{Name: "podEntry", Size: unsafe.Sizeof(podEntry{}), Class: 48},
		// One holding inline, its Pod named by the fleet's key (one string,
		// not two), times as Unix ns, no per-IP LRU links.
		modeltest.SizeClass{Name: "ipRecord", Size: unsafe.Sizeof(ipRecord{}), Class: 96},
	)
}
