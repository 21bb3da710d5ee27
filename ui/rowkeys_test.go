package ui

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
)

func keyTestRows(n int) []*model.Sandbox {
	rows := make([]*model.Sandbox, n)
	for i := range rows {
		name := fmt.Sprintf("Sbx-%03d", i)
		rows[i] = &model.Sandbox{Key: "bsbx/ns/" + name, Meta: &model.ObjectMeta{Namespace: "ns", Name: name},
			State: model.StateRunning, Slots: []model.Slot{{PodName: name + "-0", RecordedIP: fmt.Sprintf("10.0.0.%d", i)}}}
	}
	return rows
}

// blocks counts the runs of keys that sit back to back in memory: the
// blocks they were cut from, at most.
func blocks(keys []string) int {
	n := min(len(keys), 1)
	for j := 1; j < len(keys); j++ {
		if !contiguous(keys[j-1 : j+1]) {
			n++
		}
	}
	return n
}

// contiguous reports whether the keys sit back to back in one block.
func contiguous(keys []string) bool {
	for i := 1; i < len(keys); i++ {
		prev := unsafe.Pointer(unsafe.StringData(keys[i-1]))
		if unsafe.Add(prev, len(keys[i-1])) != unsafe.Pointer(unsafe.StringData(keys[i])) {
			return false
		}
	}
	return true
}

// A writer fills the rows it was given, in any order, with their own keys,
// cut from one block while they fit in it.
func TestKeyWriterFillsItsRows(t *testing.T) {
	rows := keyTestRows(5)
	keys := make([]string, len(rows))
	keys[1], keys[3] = "kept-1", "kept-3"
	w := keyWriter{keys: keys}
	for _, j := range []int{4, 0, 2} {
		w.add(j, "", rows[j])
	}
	w.flush()
	for j, want := range []string{query.RowKey(rows[0]), "kept-1", query.RowKey(rows[2]), "kept-3", query.RowKey(rows[4])} {
		if keys[j] != want {
			t.Fatalf("keys[%d] = %q, want %q", j, keys[j], want)
		}
	}
	if !contiguous([]string{keys[4], keys[0], keys[2]}) {
		t.Fatal("the writer's keys are not cut from one block")
	}
}

// Blocks start small and double up to keyBlockSize: many keys are cut from
// few blocks, and a block is never much larger than what it holds.
func TestKeyWriterBlocks(t *testing.T) {
	rows := keyTestRows(3000)
	keys := make([]string, len(rows))
	w := keyWriter{keys: keys}
	for j, sb := range rows {
		w.add(j, "", sb)
	}
	w.flush()
	total := 0
	for j := range keys {
		if keys[j] != query.RowKey(rows[j]) {
			t.Fatalf("keys[%d] = %q", j, keys[j])
		}
		total += len(keys[j])
	}
	// 3000 keys of about 40 bytes: blocks of 256, 256, 512, ... 64 KB.
	if n := blocks(keys); n > 12 {
		t.Fatalf("%d keys (%d bytes) in %d blocks", len(keys), total, n)
	}
	small := keyWriter{keys: make([]string, 2)}
	small.add(0, "", rows[0])
	small.add(1, "", rows[1])
	if c := small.b.Cap(); c > firstKeyBlock {
		t.Fatalf("two keys took a %d-byte block", c)
	}
}

// Keys are packed once more than a quarter of them went stale since the
// last pack, and packing keeps every key's text.
func TestPackKeys(t *testing.T) {
	rows := keyTestRows(40)
	keys := make([]string, len(rows))
	for i, sb := range rows {
		keys[i] = query.RowKey(sb)
	}
	if packKeys(keys, 10) {
		t.Fatal("packed with 10 of 40 keys stale")
	}
	if n := blocks(keys); n < len(keys)/2 {
		t.Fatalf("keys allocated one by one read as %d blocks: the check proves nothing", n)
	}
	if !packKeys(keys, 11) {
		t.Fatal("did not pack with 11 of 40 keys stale")
	}
	for i, sb := range rows {
		if keys[i] != query.RowKey(sb) {
			t.Fatalf("keys[%d] = %q after packing, want %q", i, keys[i], query.RowKey(sb))
		}
	}
	if n := blocks(keys); n > 5 { // 40 keys of 40 bytes: blocks of 256, 256, 512 and 1024 bytes
		t.Fatalf("packed keys are in %d blocks", n)
	}
}

// The view's keys stay each row's own through rebuilds and in-place
// replacements, packed or not.
func TestViewKeysFollowRows(t *testing.T) {
	src := &fakeSource{snap: bigSnapshot(200)}
	a := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	a.Init()
	sv := a.stack[0].(*sandboxesView)
	check := func(step string) {
		t.Helper()
		if len(sv.rows.keys) != sv.rows.len() {
			t.Fatalf("%s: %d keys for %d rows", step, len(sv.rows.keys), sv.rows.len())
		}
		for j, sb := range sv.rows.sandboxes {
			if sv.rows.keys[j] != query.RowKey(sb) {
				t.Fatalf("%s: keys[%d] = %q, want %q", step, j, sv.rows.keys[j], query.RowKey(sb))
			}
		}
	}
	check("first build")
	if sv.rows.stale != 0 {
		t.Fatalf("%d keys stale after the first build", sv.rows.stale)
	}
	firstKeys := slices.Clone(sv.rows.keys)
	if n := blocks(sv.rows.keys); n > 8 { // 200 keys of 70 bytes: blocks of 256 bytes to 8 KB
		t.Fatalf("the first build's keys are in %d blocks", n)
	}
	snap := src.snap
	for i := range 60 {
		name := snap.SandboxAt(i * 3).Name()
		snap = withSandbox(snap, name, func(b model.Sandbox) model.Sandbox { b.State = model.StateDead; return b })
		src.set(snap)
		a.liveRefresh()
	}
	check("60 sandboxes replaced")
	// 60 of 200 replaced: more than a quarter went stale, so the keys were
	// packed once, at the 51st, and the ones left alone were copied then.
	if sv.rows.stale != 9 || unsafe.StringData(sv.rows.keys[1]) == unsafe.StringData(firstKeys[1]) {
		t.Fatalf("after 60 replacements: %d stale, row 1's key moved %v", sv.rows.stale,
			unsafe.StringData(sv.rows.keys[1]) != unsafe.StringData(firstKeys[1]))
	}
	removed := fleet.NewSnapshot(snap.Version+1, snap.Status, snap.Sandboxes()[10:], nil, nil)
	src.set(removed)
	a.liveRefresh()
	check("ten removed")
}
