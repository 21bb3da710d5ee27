package ui

import (
	"strings"

	"github.com/sandscope/sandscope/model"
)

// The sandboxes view keeps every row's filter key (model.AppendRowKey), as
// model.Filter.Apply needs them: composing a key reads the sandbox, its
// slots and its Pod, and at 50,000 rows those cache misses took a fresh
// filter's first keystroke from 0.6 ms to 20 ms (BenchmarkFilterKeystroke).
// A string allocated per key held 290 bytes a row there (the binary's heap
// profile), so keys are packed: each is a substring of a shared block, and
// the keys composed in one rebuild share one new block.

// keyBatch composes the keys of one rebuild's new or replaced rows into one
// block.
type keyBatch struct {
	buf  []byte
	rows []int // positions in keys to fill, in buf's order
	ends []int // ends[k]: where rows[k]'s key ends in buf
}

func (b *keyBatch) add(row int, sb *model.Sandbox) {
	b.buf = model.AppendRowKey(b.buf, sb)
	b.rows = append(b.rows, row)
	b.ends = append(b.ends, len(b.buf))
}

// fill sets the batch's keys in keys, as substrings of one string.
func (b *keyBatch) fill(keys []string) {
	block := string(b.buf)
	start := 0
	for k, row := range b.rows {
		keys[row] = block[start:b.ends[k]]
		start = b.ends[k]
	}
}

// packKeys copies keys into one block when enough of them live outside the
// last packed one, and reports whether it did. A key keeps its whole block
// alive, so without packing, blocks from many rebuilds would be held for a
// few of their keys each; composed counts the keys made since the last pack
// and bounds that waste to a quarter of the fleet's keys.
func packKeys(keys []string, composed int) bool {
	if composed <= len(keys)/4 {
		return false
	}
	total := 0
	for _, k := range keys {
		total += len(k)
	}
	var b strings.Builder
	b.Grow(total)
	for _, k := range keys {
		b.WriteString(k)
	}
	block, start := b.String(), 0
	for i, k := range keys {
		keys[i] = block[start : start+len(k)]
		start += len(k)
	}
	return true
}
