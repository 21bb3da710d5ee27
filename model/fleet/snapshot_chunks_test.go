package fleet

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// Through the Fleet: updates in place after a Snapshot leave it as it was,
// at a size that spans several chunks.
func TestSnapshotsStayImmutableAcrossChunks(t *testing.T) {
	f, _ := newSyncedFleet(t)
	n := 3 * mem.ChunkSize
	for i := range n {
		f.UpsertBatchSandbox(batchSandbox(fmt.Sprintf("s%04d", i), fmt.Sprintf("10.0.%d.%d", i/250, i%250)))
	}
	old := f.Snapshot()
	kept := slices.Clone(old.Sandboxes())
	for _, i := range []int{3, mem.ChunkSize + 1, n - 1} {
		name := fmt.Sprintf("s%04d", i)
		f.UpsertPod(model.SlimPod(modeltest.RunningPod(name+"-0", "u"+name, fmt.Sprintf("10.0.%d.%d", i/250, i%250), modeltest.OwnedBy(name, 0))))
	}
	now := f.Snapshot()
	if !slices.Equal(old.Sandboxes(), kept) {
		t.Fatal("an older Snapshot changed")
	}
	positions, ok := now.ChangedSince(old)
	if !ok || !slices.Equal(positions, []int{3, mem.ChunkSize + 1, n - 1}) {
		t.Fatalf("ChangedSince = %v, %v", positions, ok)
	}
	for i := range n {
		if changedHere := slices.Contains(positions, i); (now.SandboxAt(i) != old.SandboxAt(i)) != changedHere {
			t.Fatalf("position %d: changed %v, listed %v", i, now.SandboxAt(i) != old.SandboxAt(i), changedHere)
		}
	}
}
