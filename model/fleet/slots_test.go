package fleet

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// The slot layout is scratch the Fleet reuses from one derivation to the
// next: a layout inherits nothing from the one before (a pooled sandbox's
// foreign owners, a longer sandbox's Pods), and laying out a sandbox whose
// Pods are known allocates nothing.
func TestBatchSlotsReuseScratch(t *testing.T) {
	f, _ := newSyncedFleet(t)
	wide := batchSandbox("wide", "10.0.0.1", "10.0.0.2", "10.0.0.3")
	wide.Replicas = 3
	f.UpsertBatchSandbox(wide)
	// Its Pod of index 1 has another name: the index label says which slot.
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("other-name", "uid-w1", "10.0.0.2", modeltest.OwnedBy("wide", 1))))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("wide-2", "uid-w2", "10.0.0.3", modeltest.OwnedBy("wide", 2))))
	linkedSandbox(f, "one", "uid-o0", "10.0.1.1")
	f.UpsertBatchSandbox(pooledSandbox("pooled", ft0, []string{"pool-a-1"}, "10.0.2.1"))
	f.UpsertBatchSandbox(batchSandbox("pending", "10.0.3.1"))

	want := map[string][]slotSpec{
		"wide":    {{ip: "10.0.0.1", pod: "wide-0"}, {ip: "10.0.0.2", pod: "other-name"}, {ip: "10.0.0.3", pod: "wide-2"}},
		"one":     {{ip: "10.0.1.1", pod: "one-0"}},
		"pooled":  {{ip: "10.0.2.1", pod: "pool-a-1"}},
		"pending": {{ip: "10.0.3.1", pod: "pending-0"}},
	}
	for range 2 {
		for _, name := range []string{"wide", "one", "pooled", "wide", "pending", "one"} {
			e := f.sandboxes[bsKey(name)]
			if got := f.batchSlots(e); !slices.Equal(got, want[name]) {
				t.Errorf("%s: slots %+v, want %+v", name, got, want[name])
			}
		}
	}
	for _, name := range []string{"one", "pending"} {
		e := f.sandboxes[bsKey(name)]
		if allocs := testing.AllocsPerRun(100, func() { f.batchSlots(e) }); allocs != 0 {
			t.Errorf("%s: %v allocations per layout, want 0", name, allocs)
		}
	}
	// The name of a slot whose Pod is not there yet is the row's own string,
	// not a copy made again for every derivation.
	e := f.sandboxes[bsKey("pending")]
	if got, row := f.batchSlots(e)[0].pod, e.sb.Slots[0].PodName; unsafe.StringData(got) != unsafe.StringData(row) {
		t.Errorf("pending slot's name %q is not the row's %q", got, row)
	}
}

// A row's notices are a list of exactly their number, nil when there are
// none: the derivation gathers them in scratch and keeps no room to spare.
func TestRowNoticesExactSize(t *testing.T) {
	f, _ := newSyncedFleet(t)
	linkedSandbox(f, "one", "uid-o0", "10.0.1.1")
	f.UpsertBatchSandbox(batchSandbox("pending", "10.0.3.1"))
	f.UpsertBatchSandbox(batchSandbox("bad", "10.0.4.1", "10.0.4.2", "10.0.4.3"))
	linkedSandbox(f, "dead", "uid-d0", "10.0.5.1", modeltest.Exited(1, "Error"))
	noticed := 0
	for _, sb := range f.Snapshot().Sandboxes() {
		if len(sb.Notices) != cap(sb.Notices) {
			t.Errorf("%s: %d notices in a list of %d", sb.Key, len(sb.Notices), cap(sb.Notices))
		}
		if sb.Notices != nil && len(sb.Notices) == 0 {
			t.Errorf("%s: an empty list of notices, want nil", sb.Key)
		}
		if len(sb.Notices) > 1 {
			noticed++
		}
	}
	if noticed == 0 {
		t.Fatal("no row with several notices: the test checks nothing")
	}
}
