package model

import (
	"fmt"
	"slices"
	"testing"
)

// A shared list never changes; a write after a share copies the chunk it
// lands in and nothing else.
func TestChunkedCopiesOnlyTheChunkWritten(t *testing.T) {
	n := 2*chunkSize + 100
	flat := make([]*Sandbox, n)
	for i := range flat {
		flat[i] = &Sandbox{Key: fmt.Sprint(i)}
	}
	var c chunked[Sandbox]
	c.reset(flat)
	first := c.share()
	before := slices.Clone(first.all())

	changed := &Sandbox{Key: "changed"}
	c.set(chunkSize+7, changed)
	c.set(chunkSize+8, changed) // same chunk, same share: no second copy
	if got := first.all(); !slices.Equal(got, before) {
		t.Fatal("a write changed a shared list")
	}
	second := c.share()
	if second.at(chunkSize+7) != changed || second.at(chunkSize+8) != changed || c.at(chunkSize+7) != changed {
		t.Fatal("the write is not in the next share")
	}
	if &second.chunks[0][0] != &first.chunks[0][0] || &second.chunks[2][0] != &first.chunks[2][0] {
		t.Error("chunks nobody wrote were copied")
	}
	if &second.chunks[1][0] == &first.chunks[1][0] {
		t.Error("the written chunk is shared with the older list")
	}
	if second.same(&first) || !second.same(&second) {
		t.Error("same() is wrong")
	}
	third := c.share()
	if !third.same(&second) {
		t.Error("a share with no write in between is not the same list")
	}
	want := slices.Clone(before)
	want[chunkSize+7], want[chunkSize+8] = changed, changed
	if got := third.all(); !slices.Equal(got, want) || len(c.flat()) != n {
		t.Fatal("contents after the writes are wrong")
	}
}

// Through the Fleet: updates in place after a Snapshot leave it as it was,
// at a size that spans several chunks.
func TestSnapshotsStayImmutableAcrossChunks(t *testing.T) {
	f, _ := newSyncedFleet(t)
	n := 3 * chunkSize
	for i := range n {
		f.UpsertBatchSandbox(batchSandbox(fmt.Sprintf("s%04d", i), fmt.Sprintf("10.0.%d.%d", i/250, i%250)))
	}
	old := f.Snapshot()
	kept := slices.Clone(old.Sandboxes())
	for _, i := range []int{3, chunkSize + 1, n - 1} {
		name := fmt.Sprintf("s%04d", i)
		f.UpsertPod(SlimPod(runningPod(name+"-0", "u"+name, fmt.Sprintf("10.0.%d.%d", i/250, i%250), ownedBy(name, 0))))
	}
	now := f.Snapshot()
	if !slices.Equal(old.Sandboxes(), kept) {
		t.Fatal("an older Snapshot changed")
	}
	positions, ok := now.ChangedSince(old)
	if !ok || !slices.Equal(positions, []int{3, chunkSize + 1, n - 1}) {
		t.Fatalf("ChangedSince = %v, %v", positions, ok)
	}
	for i := range n {
		if changedHere := slices.Contains(positions, i); (now.SandboxAt(i) != old.SandboxAt(i)) != changedHere {
			t.Fatalf("position %d: changed %v, listed %v", i, now.SandboxAt(i) != old.SandboxAt(i), changedHere)
		}
	}
}
