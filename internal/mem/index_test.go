package mem

import (
	"slices"
	"strconv"
	"testing"
)

func TestIndexOneManyOne(t *testing.T) {
	x := NewIndex[string]()
	get := func(k string) []string { return slices.Collect(x.All(k)) }
	x.Add("ip", "a")
	x.Add("ip", "a") // once
	if got := get("ip"); !slices.Equal(got, []string{"a"}) || len(x.many) != 0 {
		t.Fatalf("one value: %q (many %v)", got, x.many)
	}
	x.Add("ip", "b")
	x.Add("ip", "c")
	x.Add("ip", "b")
	if got := get("ip"); !slices.Equal(got, []string{"a", "b", "c"}) || len(x.one) != 0 {
		t.Fatalf("three values in insertion order: %q (one %v)", got, x.one)
	}
	held := x.Values("ip")
	x.Remove("ip", "a")
	if got := get("ip"); !slices.Equal(got, []string{"b", "c"}) || !slices.Equal(held, []string{"a", "b", "c"}) {
		t.Fatalf("after removing a: %q; the list handed out before became %q", got, held)
	}
	x.Remove("ip", "c")
	if got := get("ip"); !slices.Equal(got, []string{"b"}) || len(x.many) != 0 || x.one["ip"] != "b" {
		t.Fatalf("back to one value: %q (one %v many %v)", got, x.one, x.many)
	}
	x.Remove("ip", "zzz") // absent: nothing happens
	x.Remove("other", "b")
	if !x.Has("ip") || x.Keys() != 1 {
		t.Fatalf("has %v keys %d", x.Has("ip"), x.Keys())
	}
	x.Remove("ip", "b")
	if x.Has("ip") || x.Keys() != 0 || x.Values("ip") != nil || len(get("ip")) != 0 {
		t.Fatal("empty key still answers")
	}
}

// Ranging over a key while its values are removed (a Pod's sandboxes being
// unlinked) sees the list as it was when the range began.
func TestIndexRemoveWhileRanging(t *testing.T) {
	x := NewIndex[string]()
	for _, v := range []string{"a", "b", "c", "d"} {
		x.Add("k", v)
	}
	var seen []string
	for v := range x.All("k") {
		seen = append(seen, v)
		x.Remove("k", v)
	}
	if !slices.Equal(seen, []string{"a", "b", "c", "d"}) || x.Has("k") {
		t.Fatalf("seen %q, left %v %v", seen, x.one, x.many)
	}
	// Stopping early works for both layouts.
	x.Add("one", "a")
	for range x.All("one") {
		break
	}
	x.Add("k", "a")
	x.Add("k", "b")
	n := 0
	for range x.All("k") {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("ranged %d times after break", n)
	}
}

// A map that has shrunk to a quarter of its peak is made anew, keeping
// every key left.
func TestIndexShrinks(t *testing.T) {
	x := NewIndex[int]()
	const n = 4 * minShrink
	for i := range n {
		x.Add(strconv.Itoa(i), i)
	}
	before := x.one
	for i := range n - minShrink/2 {
		x.Remove(strconv.Itoa(i), i)
	}
	if x.Keys() != minShrink/2 || x.peak >= n {
		t.Fatalf("%d keys, peak %d after removing all but %d of %d", x.Keys(), x.peak, minShrink/2, n)
	}
	x.one["probe"] = -1 // made anew: no longer the map of before
	if _, ok := before["probe"]; ok {
		t.Fatal("the map was not made anew")
	}
	delete(x.one, "probe")
	for i := n - minShrink/2; i < n; i++ {
		if got := slices.Collect(x.All(strconv.Itoa(i))); !slices.Equal(got, []int{i}) {
			t.Fatalf("key %d: %v after the shrink", i, got)
		}
	}
}

func TestIndexReserveKeepsWhatItHolds(t *testing.T) {
	x := NewIndex[int]()
	x.Reserve(100) // empty: sized
	x.Add("a", 1)
	x.Add("b", 2)
	x.Add("b", 3)
	x.Reserve(1000) // holds keys: left as it is
	if got := x.Values("a"); len(got) != 1 || got[0] != 1 {
		t.Errorf("a = %v after Reserve, want [1]", got)
	}
	if got := x.Values("b"); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("b = %v after Reserve, want [2 3]", got)
	}
}
