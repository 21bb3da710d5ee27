package model

import (
	"slices"
	"strconv"
	"testing"
)

func TestIndexOneManyOne(t *testing.T) {
	x := newIndex[string]()
	get := func(k string) []string { return slices.Collect(x.all(k)) }
	x.add("ip", "a")
	x.add("ip", "a") // once
	if got := get("ip"); !slices.Equal(got, []string{"a"}) || len(x.many) != 0 {
		t.Fatalf("one value: %q (many %v)", got, x.many)
	}
	x.add("ip", "b")
	x.add("ip", "c")
	x.add("ip", "b")
	if got := get("ip"); !slices.Equal(got, []string{"a", "b", "c"}) || len(x.one) != 0 {
		t.Fatalf("three values in insertion order: %q (one %v)", got, x.one)
	}
	held := x.values("ip")
	x.remove("ip", "a")
	if got := get("ip"); !slices.Equal(got, []string{"b", "c"}) || !slices.Equal(held, []string{"a", "b", "c"}) {
		t.Fatalf("after removing a: %q; the list handed out before became %q", got, held)
	}
	x.remove("ip", "c")
	if got := get("ip"); !slices.Equal(got, []string{"b"}) || len(x.many) != 0 || x.one["ip"] != "b" {
		t.Fatalf("back to one value: %q (one %v many %v)", got, x.one, x.many)
	}
	x.remove("ip", "zzz") // absent: nothing happens
	x.remove("other", "b")
	if !x.has("ip") || x.keys() != 1 {
		t.Fatalf("has %v keys %d", x.has("ip"), x.keys())
	}
	x.remove("ip", "b")
	if x.has("ip") || x.keys() != 0 || x.values("ip") != nil || len(get("ip")) != 0 {
		t.Fatal("empty key still answers")
	}
}

// Ranging over a key while its values are removed (a Pod's sandboxes being
// unlinked) sees the list as it was when the range began.
func TestIndexRemoveWhileRanging(t *testing.T) {
	x := newIndex[string]()
	for _, v := range []string{"a", "b", "c", "d"} {
		x.add("k", v)
	}
	var seen []string
	for v := range x.all("k") {
		seen = append(seen, v)
		x.remove("k", v)
	}
	if !slices.Equal(seen, []string{"a", "b", "c", "d"}) || x.has("k") {
		t.Fatalf("seen %q, left %v %v", seen, x.one, x.many)
	}
	// Stopping early works for both layouts.
	x.add("one", "a")
	for range x.all("one") {
		break
	}
	x.add("k", "a")
	x.add("k", "b")
	n := 0
	for range x.all("k") {
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
	x := newIndex[int]()
	const n = 4 * minShrink
	for i := range n {
		x.add(strconv.Itoa(i), i)
	}
	before := x.one
	for i := range n - minShrink/2 {
		x.remove(strconv.Itoa(i), i)
	}
	if x.keys() != minShrink/2 || x.peak >= n {
		t.Fatalf("%d keys, peak %d after removing all but %d of %d", x.keys(), x.peak, minShrink/2, n)
	}
	x.one["probe"] = -1 // made anew: no longer the map of before
	if _, ok := before["probe"]; ok {
		t.Fatal("the map was not made anew")
	}
	delete(x.one, "probe")
	for i := n - minShrink/2; i < n; i++ {
		if got := slices.Collect(x.all(strconv.Itoa(i))); !slices.Equal(got, []int{i}) {
			t.Fatalf("key %d: %v after the shrink", i, got)
		}
	}
}
