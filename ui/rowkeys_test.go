package ui

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/sandscope/sandscope/model"
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

// A batch fills the rows it was given, in any order, with their own keys,
// all cut from one block.
func TestKeyBatchFillsItsRows(t *testing.T) {
	rows := keyTestRows(5)
	keys := make([]string, len(rows))
	keys[1], keys[3] = "kept-1", "kept-3"
	var b keyBatch
	for _, j := range []int{4, 0, 2} {
		b.add(j, rows[j])
	}
	b.fill(keys)
	for j, want := range []string{model.RowKey(rows[0]), "kept-1", model.RowKey(rows[2]), "kept-3", model.RowKey(rows[4])} {
		if keys[j] != want {
			t.Fatalf("keys[%d] = %q, want %q", j, keys[j], want)
		}
	}
	if !contiguous([]string{keys[4], keys[0], keys[2]}) {
		t.Fatal("the batch's keys are not cut from one block")
	}
}

// Keys are packed once more than a quarter of them were composed since the
// last pack, and packing keeps every key's text.
func TestPackKeys(t *testing.T) {
	rows := keyTestRows(40)
	keys := make([]string, len(rows))
	for i, sb := range rows {
		keys[i] = model.RowKey(sb)
	}
	if packKeys(keys, 10) {
		t.Fatal("packed with 10 of 40 keys composed")
	}
	if contiguous(keys) {
		t.Fatal("keys allocated one by one read as packed: the check proves nothing")
	}
	if !packKeys(keys, 11) {
		t.Fatal("did not pack with 11 of 40 keys composed")
	}
	for i, sb := range rows {
		if keys[i] != model.RowKey(sb) {
			t.Fatalf("keys[%d] = %q after packing, want %q", i, keys[i], model.RowKey(sb))
		}
	}
	if !contiguous(keys) {
		t.Fatal("packed keys are not one block")
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
		if len(sv.keys) != len(sv.rows) {
			t.Fatalf("%s: %d keys for %d rows", step, len(sv.keys), len(sv.rows))
		}
		for j, sb := range sv.rows {
			if sv.keys[j] != model.RowKey(sb) {
				t.Fatalf("%s: keys[%d] = %q, want %q", step, j, sv.keys[j], model.RowKey(sb))
			}
		}
	}
	check("first build")
	if !contiguous(sv.keys) {
		t.Fatal("the first build's keys are not one block")
	}
	snap := src.snap
	for i := range 60 {
		name := snap.SandboxAt(i * 3).Name()
		snap = withSandbox(snap, name, func(b model.Sandbox) model.Sandbox { b.State = model.StateDead; return b })
		src.set(snap)
		a.liveRefresh()
	}
	check("60 sandboxes replaced")
	removed := model.NewSnapshot(snap.Version+1, snap.Status, snap.Sandboxes()[10:], nil, nil)
	src.set(removed)
	a.liveRefresh()
	check("ten removed")
}
