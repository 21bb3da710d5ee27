package ui

import (
	"strings"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/query"
)

// The sandboxes view keeps every row's filter key (query.AppendRowKey), as
// query.Filter.Apply needs them: composing a key reads the sandbox, its
// slots and its Pod, and at 50,000 rows those cache misses took a fresh
// filter's first keystroke from 0.6 ms to 20 ms (BenchmarkFilterKeystroke).
// A string allocated per key held 290 bytes a row there (the binary's heap
// profile), so keys are packed: each is a substring of a 64 KB block.

// Keys are cut from blocks that double in size as a writer writes more,
// from firstKeyBlock to keyBlockSize: a rebuild that composes two keys (a
// live update adding a sandbox) takes a block about their size, one that
// composes 50,000 never grows one large buffer by copying, and the unused
// tail of the last block is at most about the keys written before it.
const (
	firstKeyBlock = 256
	keyBlockSize  = 64 << 10
)

// keyWriter writes keys into keys[row], packed into blocks written through a
// strings.Builder, whose String() hands its buffer over without a copy.
type keyWriter struct {
	keys    []string
	sets    []query.KeyBytes // sets[row]: keys[row]'s bytes, set by add; nil = not kept
	b       strings.Builder
	scratch []byte
	rows    []int // rows whose keys are in b, in b's order
	ends    []int // ends[k]: where rows[k]'s key ends in b
	written int   // keys written
	bytes   int   // bytes of keys written
}

// add composes sb's key into keys[row], after prefix (see keyPrefix).
func (w *keyWriter) add(row int, prefix string, sb *model.Sandbox) {
	w.scratch = query.AppendRowKey(append(w.scratch[:0], prefix...), sb)
	if w.sets != nil {
		w.sets[row] = query.BytesOf(w.scratch)
	}
	w.reserve(len(w.scratch))
	w.b.Write(w.scratch)
	w.record(row, len(w.scratch))
}

// copyKey moves keys[row] into the current block.
func (w *keyWriter) copyKey(row int) {
	w.reserve(len(w.keys[row]))
	w.b.WriteString(w.keys[row])
	w.record(row, len(w.keys[row]))
}

func (w *keyWriter) reserve(n int) {
	if w.b.Cap()-w.b.Len() < n {
		w.flush()
		w.b.Grow(max(min(max(w.bytes, firstKeyBlock), keyBlockSize), n))
	}
}

func (w *keyWriter) record(row, n int) {
	w.rows = append(w.rows, row)
	w.bytes += n
	w.ends = append(w.ends, w.b.Len())
	w.written++
}

// flush sets the keys of the current block and starts a new one. Call it
// once done, too.
func (w *keyWriter) flush() {
	if len(w.rows) == 0 {
		return
	}
	block, start := w.b.String(), 0
	for k, row := range w.rows {
		w.keys[row] = block[start:w.ends[k]]
		start = w.ends[k]
	}
	w.b = strings.Builder{}
	w.rows, w.ends = w.rows[:0], w.ends[:0]
}

// keyPrefix is what a row's key starts with in a table of several
// contexts: its context, lower-cased as the rest of the key, so that the
// filter matches the context's name too. "" with one context.
func keyPrefix(context string) string {
	if context == "" {
		return ""
	}
	return strings.ToLower(context) + " "
}

// rowKey is one row's key as add composes it, in a string of its own.
func rowKey(prefix string, sb *model.Sandbox) string {
	if prefix == "" {
		return query.RowKey(sb)
	}
	return string(query.AppendRowKey([]byte(prefix), sb))
}

// packKeys copies keys into fresh blocks when more than a quarter of them
// are stale, and reports whether it did. A key keeps its whole block alive:
// stale counts the keys replaced or dropped since the last pack, whose bytes
// a block may still hold for the keys beside them. Keys composed for new
// rows are not stale: the first build writes every key into blocks it
// fills, and packing them again would only copy them (it did, at 50,000
// rows: 5 MB copied at the moment the fleet synced).
func packKeys(keys []string, stale int) bool {
	if stale <= len(keys)/4 {
		return false
	}
	w := keyWriter{keys: keys}
	for row := range keys {
		w.copyKey(row)
	}
	w.flush()
	return true
}
