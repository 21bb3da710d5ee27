package mem

import (
	"fmt"
	"slices"
	"testing"
)

// A shared list never changes; a write after a share copies the chunk it
// lands in and nothing else.
func TestChunkedCopiesOnlyTheChunkWritten(t *testing.T) {
	n := 2*ChunkSize + 100
	type item struct{ key string }
	flat := make([]*item, n)
	for i := range flat {
		flat[i] = &item{key: fmt.Sprint(i)}
	}
	var c Chunked[item]
	c.Reset(flat)
	first := c.Share()
	before := slices.Clone(first.All())

	changed := &item{key: "changed"}
	c.Set(ChunkSize+7, changed)
	c.Set(ChunkSize+8, changed) // same chunk, same share: no second copy
	if got := first.All(); !slices.Equal(got, before) {
		t.Fatal("a write changed a shared list")
	}
	second := c.Share()
	if second.At(ChunkSize+7) != changed || second.At(ChunkSize+8) != changed || c.At(ChunkSize+7) != changed {
		t.Fatal("the write is not in the next share")
	}
	if &second.chunks[0][0] != &first.chunks[0][0] || &second.chunks[2][0] != &first.chunks[2][0] {
		t.Error("chunks nobody wrote were copied")
	}
	if &second.chunks[1][0] == &first.chunks[1][0] {
		t.Error("the written chunk is shared with the older list")
	}
	if second.Same(&first) || !second.Same(&second) {
		t.Error("same() is wrong")
	}
	third := c.Share()
	if !third.Same(&second) {
		t.Error("a share with no write in between is not the same list")
	}
	want := slices.Clone(before)
	want[ChunkSize+7], want[ChunkSize+8] = changed, changed
	if got := third.All(); !slices.Equal(got, want) || len(c.Flat()) != n {
		t.Fatal("contents after the writes are wrong")
	}
}
