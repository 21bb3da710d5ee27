package fleet

import (
	"slices"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// A sandbox's one owned Pod is kept in its entry, not in the index; a
// second one, or the sandbox's absence, puts them in the index; and
// whichever holds them, ownedBy reads the same Pods.
func TestOwnedPodInEntryOrIndex(t *testing.T) {
	// Not synced yet: a Pod listed before its sandbox makes no row then
	// (ensureOrphan), so its ownership has no entry to go to.
	f := New(Options{Now: func() time.Time { return ft0 }})
	owned := func(key string) []string {
		var names []string
		for pe := range f.ownedBy(key) {
			names = append(names, pe.name())
		}
		return names
	}
	check := func(what string, inIndex int, want ...string) {
		t.Helper()
		if got := owned(bsKey("a")); !slices.Equal(got, want) {
			t.Errorf("%s: owned %v, want %v", what, got, want)
		}
		if got := f.bsOwned.Keys(); got != inIndex {
			t.Errorf("%s: %d keys in the index, want %d", what, got, inIndex)
		}
	}
	f.UpsertPod(sandboxPod("a", "u0", "10.0.0.1")) // before its sandbox
	check("Pod first", 1, "a-0")
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1", "10.0.0.2"))
	check("sandbox after", 0, "a-0")
	second := model.SlimPod(modeltest.RunningPod("a-1", "u1", "10.0.0.2", modeltest.OwnedBy("a", 1)))
	f.UpsertPod(second)
	check("second Pod", 1, "a-0", "a-1")
	f.DeletePod(second)
	check("second Pod gone", 0, "a-0")
	f.SetStatus(model.SourceStatus{Synced: true})
	if sb := mustSandbox(t, f, bsKey("a")); sb.Slots[0].PodName != "a-0" || sb.Slots[0].Pod == nil {
		t.Errorf("slot 0 lost its Pod: %+v", sb.Slots[0])
	}
	f.DeleteBatchSandbox(ns, "a") // its Pod keeps the deleted sandbox's row, and the row its Pod
	check("sandbox deleted", 0, "a-0")
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
	check("sandbox back", 0, "a-0")
	f.DeleteBatchSandbox(ns, "a")
	f.DeletePod(sandboxPod("a", "u0", "10.0.0.1")) // the row goes with its last Pod
	check("both gone", 0)
	if _, ok := f.sandboxes[bsKey("a")]; ok {
		t.Errorf("the deleted sandbox's row outlived its Pods")
	}
}
