package ui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Random churn over three contexts through real Fleets: sandboxes replaced,
// deleted, re-created and new in another namespace, contexts disconnected
// and reconnected, leaving the view and coming back, the namespace scope
// switched. After every update the rowset holds what a fresh one built
// from the same fleets holds, keeps its invariants, and its events say
// exactly what happened to every row.
func TestRowsetChurn(t *testing.T) {
	const n = 10
	name, ip, now := churnName, churnIP, churnNow
	contexts := []string{"a", "b", "c"}
	fleets := make([]*fleet.Fleet, len(contexts))
	for k := range fleets {
		fleets[k] = churnFleet(contexts[k], "team-rl", n)
	}
	inView := []bool{true, true, true}
	nsScope := ""
	var live rowset
	kinds := map[string]int{}
	rng := rand.New(rand.NewPCG(21, 5))
	for step := range 600 {
		k, i := rng.IntN(len(fleets)), rng.IntN(n)
		f := fleets[k]
		switch rng.IntN(40) {
		case 0:
			f.DeleteBatchSandbox("team-rl", name(i))
		case 1:
			f.UpsertBatchSandbox(fleetSandbox("team-rl", name(i), now, ip(i)))
		case 2:
			f.UpsertBatchSandbox(fleetSandbox("batch", name(i), now, ip(i+100)))
		case 3:
			f.DeleteBatchSandbox("batch", name(i))
		case 4:
			lost := now
			f.SetStatus(model.SourceStatus{Context: contexts[k], Synced: true, DisconnectedSince: &lost})
		case 5:
			f.SetStatus(model.SourceStatus{Context: contexts[k], Synced: true})
		case 6:
			inView[k] = !inView[k]
		case 7:
			nsScope = []string{"", "team-rl", "batch"}[rng.IntN(3)]
		default:
			f.UpsertPod(model.SlimPod(churnedPod(rng, "team-rl", name(i), ip(i), now)))
		}
		var view []Fleet
		for k, f := range fleets {
			if inView[k] {
				view = append(view, Fleet{Context: contexts[k], Snap: f.Snapshot()})
			}
		}
		if len(view) == 0 {
			inView[0] = true
			view = []Fleet{{Context: contexts[0], Snap: fleets[0].Snapshot()}}
		}
		multi := len(view) > 1
		where := fmt.Sprintf("step %d", step)
		before := rowsOf(&live)
		ev := live.update(view, nsScope, multi)
		kinds[checkEvents(t, where, before, &live, ev)]++
		checkRowset(t, where, &live)
		var fresh rowset
		fresh.update(view, nsScope, multi)
		sameRows(t, where, &live, &fresh)
	}
	for _, kind := range []string{"none", "changed", "renumbered", "reset"} {
		if kinds[kind] < 5 {
			t.Fatalf("updates by kind %v: too few %q for the test to prove much", kinds, kind)
		}
	}
}

// A sandbox replaced in place is reported changed, and only it: the view
// sorts again around that row alone. The same snapshots again, or a status
// that moved alone, report nothing.
func TestRowsetReportsOnlyWhatChanged(t *testing.T) {
	snap := incidentSnapshot()
	var s rowset
	if ev := s.update([]Fleet{{Snap: snap}}, "", false); !ev.reset {
		t.Fatalf("first update %+v, want a reset", ev)
	}
	if ev := s.update([]Fleet{{Snap: snap}}, "", false); ev.reset || ev.renumbered || len(ev.changed) > 0 {
		t.Fatalf("the same snapshot again: %+v", ev)
	}
	moved := fleet.NewSnapshot(snap.Version+1, snap.Status, snap.Sandboxes(), snap.Pods(), snap.Pools)
	moved.Status.AsOf = t0
	if ev := s.update([]Fleet{{Snap: moved}}, "", false); ev.reset || ev.renumbered || len(ev.changed) > 0 {
		t.Fatalf("a status-only snapshot: %+v", ev)
	}
	restarted := withSandbox(moved, "sbx-b", func(b model.Sandbox) model.Sandbox { b.Restarts = 4; return b })
	before := rowsOf(&s)
	ev := s.update([]Fleet{{Snap: restarted}}, "", false)
	if checkEvents(t, "sbx-b restarted", before, &s, ev); len(ev.changed) != 1 || s.sandboxes[ev.changed[0]].Name() != "sbx-b" {
		t.Fatalf("sbx-b restarted: changed %v", ev.changed)
	}
	if s.tally.total != 4 {
		t.Fatalf("tally %+v", s.tally)
	}
}

// churnNow is the clock of the churn tests' fleets.
var churnNow = time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)

// churnName and churnIP are sandbox i of a churn test and its address.
func churnName(i int) string { return fmt.Sprintf("sbx-%02d", i) }
func churnIP(i int) string   { return fmt.Sprintf("10.0.0.%d", i) }

// churnFleet is context ctx's synced fleet of n running sandboxes in ns,
// churnName(0) to churnName(n-1), each with its Pod.
func churnFleet(ctx, ns string, n int) *fleet.Fleet {
	f := fleet.New(fleet.Options{Now: func() time.Time { return churnNow }})
	f.SetStatus(model.SourceStatus{Context: ctx, Synced: true})
	for i := range n {
		f.UpsertBatchSandbox(fleetSandbox(ns, churnName(i), churnNow, churnIP(i)))
		f.UpsertPod(model.SlimPod(fleetPod(ns, churnName(i), "uid-"+churnName(i), churnIP(i), churnNow)))
	}
	return f
}

// rowsBefore is what the rows were before an update: each row's sandbox
// and context.
type rowsBefore struct {
	sandboxes []*model.Sandbox
	contexts  []string
}

func rowsOf(s *rowset) rowsBefore {
	b := rowsBefore{sandboxes: slices.Clone(s.sandboxes), contexts: make([]string, s.len())}
	for j := range b.contexts {
		b.contexts[j] = s.contextOf(j)
	}
	return b
}

// checkEvents fails unless ev says exactly how the rows went from before
// to s, and returns its kind.
func checkEvents(t *testing.T, where string, before rowsBefore, s *rowset, ev rowEvents) string {
	t.Helper()
	if ev.reset {
		if ev.renumbered || len(ev.changed) > 0 || len(ev.added) > 0 {
			t.Fatalf("%s: a reset with other events: %+v", where, ev)
		}
		return "reset"
	}
	var wantChanged, wantAdded []int
	if !ev.renumbered {
		if s.len() != len(before.sandboxes) || len(ev.added) > 0 {
			t.Fatalf("%s: rows in place went from %d to %d (added %v)", where, len(before.sandboxes), s.len(), ev.added)
		}
		for j, sb := range s.sandboxes {
			if sb != before.sandboxes[j] {
				wantChanged = append(wantChanged, j)
			}
		}
	} else {
		if len(ev.oldToNew) != len(before.sandboxes) {
			t.Fatalf("%s: %d old rows renumbered, there were %d", where, len(ev.oldToNew), len(before.sandboxes))
		}
		hit := make([]bool, s.len())
		for i, nj := range ev.oldToNew {
			old, ctx := before.sandboxes[i], before.contexts[i]
			if nj < 0 {
				for j, sb := range s.sandboxes {
					if sb.Key == old.Key && s.contextOf(j) == ctx {
						t.Fatalf("%s: %s in %q reported removed, still row %d", where, old.Key, ctx, j)
					}
				}
				continue
			}
			if hit[nj] || s.sandboxes[nj].Key != old.Key || s.contextOf(int(nj)) != ctx {
				t.Fatalf("%s: old row %d (%s in %q) went to row %d (%s in %q)", where, i, old.Key, ctx, nj,
					s.sandboxes[nj].Key, s.contextOf(int(nj)))
			}
			hit[nj] = true
			if s.sandboxes[nj] != old {
				wantChanged = append(wantChanged, int(nj))
			}
		}
		for j := range hit {
			if !hit[j] {
				wantAdded = append(wantAdded, j)
			}
		}
		slices.Sort(wantChanged)
	}
	if !slices.Equal(ev.changed, wantChanged) || !slices.Equal(ev.added, wantAdded) {
		t.Fatalf("%s: changed %v added %v, want changed %v added %v", where, ev.changed, ev.added, wantChanged, wantAdded)
	}
	switch {
	case ev.renumbered:
		return "renumbered"
	case len(ev.changed) > 0:
		return "changed"
	}
	return "none"
}

// checkRowset fails unless s holds its invariants over the fleets it was
// last updated with: each context's block is its snapshot's sandboxes in
// scope, in order; every row's widths and key are its sandbox's; the tally
// is a count from scratch; no column is narrower than its cells.
func checkRowset(t *testing.T, where string, s *rowset) {
	t.Helper()
	if len(s.starts) != len(s.parts)+1 || s.starts[0] != 0 || s.starts[len(s.parts)] != s.len() ||
		len(s.widths) != s.len() || len(s.keys) != s.len() || len(s.discs) != len(s.parts) {
		t.Fatalf("%s: %d rows, %d widths, %d keys, starts %v over %d parts", where, s.len(), len(s.widths), len(s.keys), s.starts, len(s.parts))
	}
	var count tally
	for p, f := range s.parts {
		var want []*model.Sandbox
		for _, sb := range f.Snap.Sandboxes() {
			if s.nsScope == "" || sb.Namespace() == s.nsScope {
				want = append(want, sb)
			}
		}
		if got := s.sandboxes[s.starts[p]:s.starts[p+1]]; !slices.Equal(got, want) {
			t.Fatalf("%s: context %q's rows are not its snapshot's", where, f.Context)
		}
		if s.discs[p] != discOf(f.Snap) {
			t.Fatalf("%s: context %q masked %v, disconnected %v", where, f.Context, s.discs[p], discOf(f.Snap))
		}
		for j := s.starts[p]; j < s.starts[p+1]; j++ {
			sb := s.sandboxes[j]
			if s.widths[j] != widthsOf(sb, s.discs[p]) || s.keys[j] != rowKey(s.keyPrefix(p), sb) {
				t.Fatalf("%s: row %d (%s in %q): widths %v key %q, want %v %q", where, j, sb.Key, f.Context,
					s.widths[j], s.keys[j], widthsOf(sb, s.discs[p]), rowKey(s.keyPrefix(p), sb))
			}
			for k, w := range s.widths[j] {
				if s.natural[k] < int(w) {
					t.Fatalf("%s: column %d is %d wide, row %d's cell %d", where, k, s.natural[k], j, w)
				}
			}
			count.add(countOf(sb), 1)
		}
	}
	sameTally(t, where, s.tally, count)
}

// sameRows fails unless got (updated live) holds what want (built fresh
// from the same fleets) holds.
func sameRows(t *testing.T, where string, got, want *rowset) {
	t.Helper()
	if !slices.Equal(got.starts, want.starts) || !slices.Equal(got.discs, want.discs) || !sameFleets(got.parts, want.parts) {
		t.Fatalf("%s: parts %v %v, want %v %v", where, got.starts, got.discs, want.starts, want.discs)
	}
	if got.len() != want.len() {
		t.Fatalf("%s: %d rows, want %d", where, got.len(), want.len())
	}
	for j := range want.sandboxes {
		if got.sandboxes[j] != want.sandboxes[j] || got.widths[j] != want.widths[j] || got.keys[j] != want.keys[j] {
			t.Fatalf("%s: row %d (%s) differs", where, j, want.sandboxes[j].Key)
		}
	}
	sameTally(t, where, got.tally, want.tally)
	for k := range want.natural {
		if got.natural[k] < want.natural[k] {
			t.Fatalf("%s: column %d width %d, narrower than its cells (%d)", where, k, got.natural[k], want.natural[k])
		}
	}
}

func sameTally(t *testing.T, where string, got, want tally) {
	t.Helper()
	if got.total != want.total || got.running != want.running || got.stuck != want.stuck ||
		got.stuckInit != want.stuckInit || got.stuckObjects != want.stuckObjects {
		t.Fatalf("%s: tally %+v, want %+v", where, got, want)
	}
	for _, m := range []map[model.IdentityState]int{got.identity, want.identity} {
		for id := range m {
			if got.identity[id] != want.identity[id] {
				t.Fatalf("%s: %s counted %d, want %d", where, id, got.identity[id], want.identity[id])
			}
		}
	}
}
