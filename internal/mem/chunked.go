package mem

import (
	"slices"
	"sync"
)

// ChunkSize is how many elements a write after a share copies, instead of
// the whole list.
const ChunkSize = 512

// Chunked is the writer's side of a published list (the fleet's sandboxes
// and Pods): a list of pointers cut into fixed-size chunks that readers
// share. A reader takes the chunks as they are (Share); a later write copies
// only the chunk it lands in, and the chunk index, once per share. So an
// update between two snapshots costs one chunk's copy, however long the
// list, where a flat list shared with the last snapshot had to be copied
// whole.
type Chunked[T any] struct {
	chunks [][]*T
	n      int
	// gen counts shares; a chunk (or the index) is ours to write when it was
	// copied since the last share.
	gen      uint64
	chunkGen []uint64
	indexGen uint64
}

// Reset replaces the contents with flat, which it takes over: the chunks
// are windows on flat's array, so the caller must not use flat afterwards
// (the fleet hands over the list it has just built: copying it again would
// be one more pass over the whole list).
func (c *Chunked[T]) Reset(flat []*T) {
	c.n = len(flat)
	c.chunks = make([][]*T, 0, (len(flat)+ChunkSize-1)/ChunkSize)
	for i := 0; i < len(flat); i += ChunkSize {
		end := min(i+ChunkSize, len(flat))
		c.chunks = append(c.chunks, flat[i:end:end])
	}
	c.gen++
	c.indexGen = c.gen
	c.chunkGen = make([]uint64, len(c.chunks))
	for i := range c.chunkGen {
		c.chunkGen[i] = c.gen
	}
}

// Len is the length of the list.
func (c *Chunked[T]) Len() int { return c.n }

// At is the element at position i.
func (c *Chunked[T]) At(i int) *T { return c.chunks[i/ChunkSize][i%ChunkSize] }

// Set writes position i, copying what a reader still shares.
func (c *Chunked[T]) Set(i int, v *T) {
	k := i / ChunkSize
	if c.indexGen != c.gen {
		c.chunks, c.chunkGen = slices.Clone(c.chunks), slices.Clone(c.chunkGen)
		c.indexGen = c.gen
	}
	if c.chunkGen[k] != c.gen {
		c.chunks[k] = slices.Clone(c.chunks[k])
		c.chunkGen[k] = c.gen
	}
	c.chunks[k][i%ChunkSize] = v
}

// Flat returns the contents as one new slice.
func (c *Chunked[T]) Flat() []*T {
	out := make([]*T, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}

// Share hands the current contents to a reader: from now on they are
// read only, and the next write to a chunk copies it first.
func (c *Chunked[T]) Share() SharedList[T] {
	c.gen++
	return SharedList[T]{chunks: c.chunks, n: c.n, once: new(sync.Once)}
}

// SharedList is a reader's read-only list: the chunks shared with a Chunked
// at the time, or a plain slice (PlainList). The plain slice of a chunked
// list is built on first use.
type SharedList[T any] struct {
	chunks [][]*T
	n      int
	once   *sync.Once
	flat   []*T
}

// PlainList is a SharedList of flat, which it keeps: flat must not change.
func PlainList[T any](flat []*T) SharedList[T] {
	return SharedList[T]{n: len(flat), flat: flat}
}

// Len is the length of the list.
func (l *SharedList[T]) Len() int { return l.n }

// At is the element at position i.
func (l *SharedList[T]) At(i int) *T {
	if l.chunks == nil {
		return l.flat[i]
	}
	return l.chunks[i/ChunkSize][i%ChunkSize]
}

// All returns the list as one slice, read only; built once.
func (l *SharedList[T]) All() []*T {
	if l.chunks == nil {
		return l.flat
	}
	l.once.Do(func() {
		l.flat = make([]*T, 0, l.n)
		for _, ch := range l.chunks {
			l.flat = append(l.flat, ch...)
		}
	})
	return l.flat
}

// Same reports whether l and o hold the same list (a status-only snapshot shares its
// predecessor's).
func (l *SharedList[T]) Same(o *SharedList[T]) bool {
	if l.n != o.n {
		return false
	}
	if l.n == 0 {
		return true
	}
	if l.chunks != nil && o.chunks != nil {
		return &l.chunks[0] == &o.chunks[0]
	}
	return l.chunks == nil && o.chunks == nil && &l.flat[0] == &o.flat[0]
}
