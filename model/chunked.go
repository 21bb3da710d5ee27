package model

import (
	"slices"
	"sync"
)

// chunkSize is how many elements a write after a Snapshot copies: 512
// pointers, 4 KB, instead of the whole list (400 KB at 50,000 sandboxes).
const chunkSize = 512

// chunked is the Fleet's side of a published list: a list of pointers cut
// into fixed-size chunks that Snapshots share. A Snapshot takes the chunks
// as they are (share); a later write copies only the chunk it lands in, and
// the chunk index, once per Snapshot. So a Pod update between two Snapshots
// costs a 4 KB copy at most, however big the fleet, where a flat list
// shared with the last Snapshot had to be copied whole.
type chunked[T any] struct {
	chunks [][]*T
	n      int
	// gen counts shares; a chunk (or the index) is ours to write when it was
	// copied since the last share.
	gen      uint64
	chunkGen []uint64
	indexGen uint64
}

// reset replaces the contents with flat, which it takes over: the chunks
// are windows on flat's array, so the caller must not use flat afterwards
// (mergeOrders hands over the list splice just built; copying it again
// would be a third pass over the fleet per Snapshot after an add).
func (c *chunked[T]) reset(flat []*T) {
	c.n = len(flat)
	c.chunks = make([][]*T, 0, (len(flat)+chunkSize-1)/chunkSize)
	for i := 0; i < len(flat); i += chunkSize {
		end := min(i+chunkSize, len(flat))
		c.chunks = append(c.chunks, flat[i:end:end])
	}
	c.gen++
	c.indexGen = c.gen
	c.chunkGen = make([]uint64, len(c.chunks))
	for i := range c.chunkGen {
		c.chunkGen[i] = c.gen
	}
}

func (c *chunked[T]) len() int { return c.n }

func (c *chunked[T]) at(i int) *T { return c.chunks[i/chunkSize][i%chunkSize] }

// set writes position i, copying what a Snapshot still shares.
func (c *chunked[T]) set(i int, v *T) {
	k := i / chunkSize
	if c.indexGen != c.gen {
		c.chunks, c.chunkGen = slices.Clone(c.chunks), slices.Clone(c.chunkGen)
		c.indexGen = c.gen
	}
	if c.chunkGen[k] != c.gen {
		c.chunks[k] = slices.Clone(c.chunks[k])
		c.chunkGen[k] = c.gen
	}
	c.chunks[k][i%chunkSize] = v
}

// flat returns the contents as one new slice.
func (c *chunked[T]) flat() []*T {
	out := make([]*T, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}

// share hands the current contents to a Snapshot: from now on they are
// read only, and the next write to a chunk copies it first.
func (c *chunked[T]) share() snapList[T] {
	c.gen++
	return snapList[T]{chunks: c.chunks, n: c.n, once: new(sync.Once)}
}

// snapList is a Snapshot's read-only list: the chunks shared with the Fleet
// at the time, or a plain slice (NewSnapshot). The plain slice of a chunked
// list is built on first use.
type snapList[T any] struct {
	chunks [][]*T
	n      int
	once   *sync.Once
	flat   []*T
}

func plainList[T any](flat []*T) snapList[T] {
	return snapList[T]{n: len(flat), flat: flat}
}

func (l *snapList[T]) at(i int) *T {
	if l.chunks == nil {
		return l.flat[i]
	}
	return l.chunks[i/chunkSize][i%chunkSize]
}

// all returns the list as one slice, read only; built once.
func (l *snapList[T]) all() []*T {
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

// same: a and b hold the same list (a status-only Snapshot shares its
// predecessor's).
func (l *snapList[T]) same(o *snapList[T]) bool {
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
