package mem

import (
	"iter"
	"slices"
)

// Index maps a key to a small ordered set of values (the fleet's: the
// sandboxes naming a Pod, the Pods a BatchSandbox owns). Nearly every key
// has exactly one value, so a lone value is kept in a plain map, not in a
// slice of its own as a map of slices would keep it.
//
// A Go map never gives back the memory of deleted entries, so one is made
// anew when it has shrunk to a quarter of the keys it once held (see
// Remove): keys can move out in bulk, as the fleet's links do when Pods
// listed after their sandboxes arrive.
type Index[V comparable] struct {
	one  map[string]V
	many map[string][]V // keys with two or more values, in insertion order; never also in one
	peak int            // most keys one has held since it was made
}

// minShrink: a map of fewer keys than this is never made anew.
const minShrink = 1024

// NewIndex returns an empty Index.
func NewIndex[V comparable]() Index[V] {
	return Index[V]{one: make(map[string]V), many: make(map[string][]V)}
}

// Add puts v under k, once.
func (x *Index[V]) Add(k string, v V) {
	if list, ok := x.many[k]; ok {
		if !slices.Contains(list, v) {
			x.many[k] = append(list, v)
		}
		return
	}
	if cur, ok := x.one[k]; ok {
		if cur != v {
			delete(x.one, k)
			x.many[k] = []V{cur, v}
		}
		return
	}
	x.one[k] = v
	x.peak = max(x.peak, len(x.one))
}

// Remove takes v from under k. A list handed out by values is not changed.
func (x *Index[V]) Remove(k string, v V) {
	if cur, ok := x.one[k]; ok {
		if cur == v {
			delete(x.one, k)
			x.shrink()
		}
		return
	}
	list := x.many[k]
	i := slices.Index(list, v)
	if i < 0 {
		return
	}
	if len(list) == 2 {
		delete(x.many, k)
		x.one[k] = list[1-i]
		x.peak = max(x.peak, len(x.one))
		return
	}
	// Copy on write: a caller may be ranging over the old list.
	x.many[k] = slices.Delete(slices.Clone(list), i, i+1)
}

// shrink makes one anew once it holds a quarter of its peak: copying the
// keys left costs less than the removals since the last time it was made.
func (x *Index[V]) shrink() {
	if x.peak < minShrink || len(x.one) >= x.peak/4 {
		return
	}
	one := make(map[string]V, len(x.one))
	for k, v := range x.one {
		one[k] = v
	}
	x.one, x.peak = one, len(one)
}

// Reserve makes room for n keys of lone values when x is empty, so that
// filling it from a list of known length does not grow its map step by step
// (each step rehashes every key so far, and holds the old table beside the
// new one while it does). An Index that holds keys already is left as it is.
func (x *Index[V]) Reserve(n int) {
	if len(x.one) == 0 && len(x.many) == 0 && n > 0 {
		x.one = make(map[string]V, n)
	}
}

// Has reports whether anything is under k.
func (x *Index[V]) Has(k string) bool {
	if _, ok := x.one[k]; ok {
		return true
	}
	return len(x.many[k]) > 0
}

// All yields the values under k in insertion order. The body must not add
// to or remove from k.
func (x *Index[V]) All(k string) iter.Seq[V] {
	return func(yield func(V) bool) {
		if v, ok := x.one[k]; ok {
			yield(v)
			return
		}
		for _, v := range x.many[k] {
			if !yield(v) {
				return
			}
		}
	}
}

// Values returns the values under k as a new slice (nil when none).
func (x *Index[V]) Values(k string) []V {
	if v, ok := x.one[k]; ok {
		return []V{v}
	}
	return slices.Clone(x.many[k])
}

// Lone returns the value under k when it is the only one.
func (x *Index[V]) Lone(k string) (V, bool) {
	v, ok := x.one[k]
	return v, ok
}

// EachKey yields every key with a value. The body must not change x.
func (x *Index[V]) EachKey() iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range x.one {
			if !yield(k) {
				return
			}
		}
		for k := range x.many {
			if !yield(k) {
				return
			}
		}
	}
}

// Keys is the number of keys with a value.
func (x *Index[V]) Keys() int { return len(x.one) + len(x.many) }
