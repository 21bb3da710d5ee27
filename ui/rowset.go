package ui

import (
	"math"
	"slices"
	"strings"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/query"
)

// rowset is the rows of the sandboxes view: every sandbox in view, one
// block per context, each block in Key order (the Snapshot contract), with
// what the view keeps per row (its cells' widths and its filter key) and
// the header's counts over them. It follows the fleets snapshot by
// snapshot at the cost of what changed, and says what it did as row
// events, through which the view carries its sort order, filter and cursor
// (as k9s's table model emits row events to its table view).
type rowset struct {
	// parts are the fleets the rows were built from, one per context in
	// view; the rows of parts[p] are sandboxes[starts[p]:starts[p+1]], and
	// discs[p] says they were masked (disconnected). With one context these
	// are one fleet and the rows are exactly its own.
	parts   []Fleet
	discs   []bool
	starts  []int
	multi   bool   // built with context-prefixed keys, for a CONTEXT column
	built   bool   // the first update has been made
	nsScope string // the namespace the rows were picked for ("" = all)

	sandboxes []*model.Sandbox
	widths    []cellWidths     // widths[j] of sandboxes[j]'s cells
	keys      []string         // keys[j]: sandboxes[j]'s filter key, packed (rowkeys.go)
	keyBytes  []query.KeyBytes // keyBytes[j]: the bytes and hex pairs keys[j] holds, 16 bytes a row
	stale     int              // keys replaced or dropped since they were last packed
	// natural is each column's widest cell, an upper bound: replacing rows
	// only widens it, a merge measures it again.
	natural [nSandboxCols]int
	// severalNS: the rows are of more than one namespace, so that only the
	// NAMESPACE column tells apart rows of the same name. A replaced row
	// keeps its Key, and so its namespace: only a merge changes this.
	severalNS bool
	tally     tally // the header's counts over the rows
}

// rowEvents is what one update did to the rows. Indexes in added and
// changed are after the update. With none of the fields set the rows are
// as they were (the snapshots may have moved on in their status only).
type rowEvents struct {
	// reset: every row is new (the first update, or a CONTEXT column came
	// or went and so every key changed); nothing carries over.
	reset bool
	// renumbered: sandboxes were added or removed (or the rows were
	// compared whole), so row indexes moved: oldToNew[i] is where the row
	// at index i went, -1 when it was removed.
	renumbered bool
	oldToNew   []int32
	// added are the rows new in this update (only when renumbered).
	added []int
	// changed are the rows whose sandbox was replaced: their sort fields
	// may differ.
	changed []int
}

// cellWidths is the byte length of each of one row's formatted cells,
// capped at 255 (no column is drawn wider than 40). The rowset keeps these
// and not the cells: only the rows on screen are formatted, as they are
// drawn, where cells kept for every row held 780 bytes a row at 50,000
// sandboxes; the widths let a merge size the columns without formatting
// the whole fleet again.
type cellWidths [nSandboxCols]uint8

func widthsOf(sb *model.Sandbox, disc bool) cellWidths {
	cells := sandboxCells(sb, disc)
	var w cellWidths
	for k, cell := range cells {
		w[k] = uint8(min(len(cell), math.MaxUint8))
	}
	return w
}

// rowCount is one sandbox's part in the header's counts. A sandbox never
// changes, so the part it added is worked out from it again when it goes.
type rowCount struct {
	identity         model.IdentityState
	running          bool
	stuck, stuckInit int  // Pods stuck Terminating, and of those still in PodInitializing
	stuckObject      bool // the sandbox object itself, on finalizers
}

func countOf(sb *model.Sandbox) rowCount {
	c := rowCount{identity: sb.Identity(), running: sb.State == model.StateRunning}
	c.stuck, c.stuckInit = sb.StuckPods()
	c.stuckObject = sb.StuckObject()
	return c
}

// tally is the header's counts over a set of rows, kept up to date as rows
// come, change and go, so a live refresh does not recount the fleet.
type tally struct {
	total, running, stuck, stuckInit, stuckObjects int
	identity                                       map[model.IdentityState]int
}

func (t *tally) add(c rowCount, sign int) {
	if t.identity == nil {
		t.identity = map[model.IdentityState]int{}
	}
	t.total += sign
	if c.running {
		t.running += sign
	}
	t.stuck += sign * c.stuck
	t.stuckInit += sign * c.stuckInit
	if c.stuckObject {
		t.stuckObjects += sign
	}
	t.identity[c.identity] += sign
}

// len is the number of rows.
func (s *rowset) len() int { return len(s.sandboxes) }

// update follows the fleets to their current snapshots, keeping the
// sandboxes of namespace nsScope only ("" = every namespace) and, when
// multi, prefixing each filter key with its context.
func (s *rowset) update(fleets []Fleet, nsScope string, multi bool) rowEvents {
	if len(fleets) == 0 {
		return rowEvents{}
	}
	// Snapshots are immutable: the same pointers mean nothing changed. (The
	// version alone is not enough: ":ctx" and ":ns" start a new fleet whose
	// versions count from the beginning again.)
	if s.built && s.multi == multi && s.nsScope == nsScope && sameFleets(s.parts, fleets) {
		return rowEvents{}
	}
	sameLayout := s.built && s.multi == multi && s.nsScope == nsScope && sameContexts(s.parts, fleets) && s.sameDiscs(fleets)
	// Only the status moved (the server answered, the clock ticked): the
	// fleets hand out the same sandboxes, so the rows stand as they are.
	if sameLayout && s.sameSandboxes(fleets) {
		s.parts = append(s.parts[:0], fleets...)
		return rowEvents{}
	}
	// Only sandboxes replaced in place, none added or removed: the fleets
	// name their positions, so the update costs what changed, not the fleet.
	if sameLayout && nsScope == "" {
		if positions, ok := s.changedSince(fleets); ok {
			s.parts = append(s.parts[:0], fleets...)
			return rowEvents{changed: s.replace(positions)}
		}
	}
	return s.merge(fleets, nsScope, multi)
}

// sameDiscs: every fleet is as connected as when the rows were built.
func (s *rowset) sameDiscs(fleets []Fleet) bool {
	for p, f := range fleets {
		if discOf(f.Snap) != s.discs[p] {
			return false
		}
	}
	return true
}

// sameSandboxes: every fleet hands out the same sandboxes as the rows'.
func (s *rowset) sameSandboxes(fleets []Fleet) bool {
	for p, f := range fleets {
		if !f.Snap.SameSandboxes(s.parts[p].Snap) {
			return false
		}
	}
	return true
}

// changedSince lists the rows whose sandboxes the fleets replaced in place
// since the rows' snapshots (Snapshot.ChangedSince), when every fleet can
// tell; ok is false when one cannot, and the rows must be compared.
func (s *rowset) changedSince(fleets []Fleet) (positions []int, ok bool) {
	for p, f := range fleets {
		if f.Snap.SameSandboxes(s.parts[p].Snap) {
			continue
		}
		changed, ok := f.Snap.ChangedSince(s.parts[p].Snap)
		if !ok {
			return nil, false
		}
		if positions == nil && s.starts[p] == 0 {
			positions = changed // one fleet (the usual case): its positions are the rows'
			continue
		}
		for _, j := range changed {
			positions = append(positions, s.starts[p]+j)
		}
	}
	return positions, true
}

// replace takes the sandboxes at positions of the rows from the current
// snapshots (s.parts), the only ones that may differ from the rows (see
// Snapshot.ChangedSince), and returns those that did, reusing positions.
// Column widths only grow here; a merge lets them shrink.
func (s *rowset) replace(positions []int) (changed []int) {
	changed = positions[:0]
	for _, j := range positions {
		p := s.partOf(j)
		sb, old := s.parts[p].Snap.SandboxAt(j-s.starts[p]), s.sandboxes[j]
		if old == sb {
			continue
		}
		s.sandboxes[j] = sb
		s.tally.add(countOf(old), -1)
		s.tally.add(countOf(sb), 1)
		s.widths[j], s.keys[j] = widthsOf(sb, s.discs[p]), rowKey(s.keyPrefix(p), sb)
		s.keyBytes[j] = query.BytesOf(s.keys[j])
		s.stale++
		for k, l := range s.widths[j] {
			s.natural[k] = max(s.natural[k], int(l))
		}
		changed = append(changed, j)
	}
	if packKeys(s.keys, s.stale) {
		s.stale = 0
	}
	return changed
}

// merge builds the rows again from the fleets, pairing each context's new
// rows with its old ones: unchanged sandboxes (the same pointer) keep their
// widths and keys, and the events say where every old row went.
func (s *rowset) merge(fleets []Fleet, nsScope string, multi bool) rowEvents {
	reset := !s.built || s.multi != multi // a CONTEXT column comes or goes: every key changes
	if reset {
		*s = rowset{}
	}
	oldParts, oldDiscs, oldStarts := s.parts, s.discs, s.starts
	s.built, s.nsScope, s.multi = true, nsScope, multi
	s.parts, s.discs = slices.Clone(fleets), make([]bool, len(fleets))
	total := 0
	for p, f := range fleets {
		s.discs[p] = discOf(f.Snap)
		total += f.Snap.NumSandboxes()
	}
	// The rowset owns its rows (replace writes them in place), so it
	// copies them out of the snapshots, one context after the other.
	rows := make([]*model.Sandbox, 0, total)
	starts := make([]int, len(fleets)+1)
	for p, f := range fleets {
		starts[p] = len(rows)
		for i := range f.Snap.NumSandboxes() {
			if sb := f.Snap.SandboxAt(i); nsScope == "" || sb.Namespace() == nsScope {
				rows = append(rows, sb)
			}
		}
	}
	starts[len(fleets)] = len(rows)
	// Within a context both the old and the new rows are sorted by Key (the
	// Snapshot contract), so one merge pass pairs them. Sandboxes are
	// immutable, so what a replaced or dropped one added to the tally is
	// counted again from it.
	oldRows, oldWidths, oldKeys, oldBytes := s.sandboxes, s.widths, s.keys, s.keyBytes
	ev := rowEvents{reset: reset, renumbered: !reset, oldToNew: make([]int32, len(oldRows))}
	drop := func(i int) {
		ev.oldToNew[i] = -1
		s.tally.add(countOf(oldRows[i]), -1)
		s.stale++
	}
	widths := make([]cellWidths, len(rows))
	keys := make([]string, len(rows))
	keyBytes := make([]query.KeyBytes, len(rows))
	batch := keyWriter{keys: keys, sets: keyBytes} // the keys of new and replaced rows
	paired := make([]bool, len(oldParts))
	var nat [nSandboxCols]int
	severalNS := false
	for p, f := range fleets {
		i, end, discChanged := 0, 0, false // the old rows of the same context: oldRows[i:end]
		if q := slices.IndexFunc(oldParts, func(o Fleet) bool { return o.Context == f.Context }); q >= 0 && !paired[q] {
			paired[q] = true
			i, end, discChanged = oldStarts[q], oldStarts[q+1], oldDiscs[q] != s.discs[p]
		}
		disc, prefix := s.discs[p], keyPrefix(contextIf(multi, f))
		for j := starts[p]; j < starts[p+1]; j++ {
			sb := rows[j]
			severalNS = severalNS || sb.Namespace() != rows[0].Namespace()
			for i < end && oldRows[i] != sb && oldRows[i].Key < sb.Key {
				drop(i)
				i++
			}
			switch {
			case i < end && (oldRows[i] == sb || oldRows[i].Key == sb.Key):
				ev.oldToNew[i] = int32(j)
				if old := oldRows[i]; old != sb {
					s.tally.add(countOf(old), -1)
					s.tally.add(countOf(sb), 1)
					widths[j] = widthsOf(sb, disc)
					batch.add(j, prefix, sb)
					ev.changed = append(ev.changed, j)
					s.stale++
				} else {
					widths[j], keys[j], keyBytes[j] = oldWidths[i], oldKeys[i], oldBytes[i]
					if discChanged {
						widths[j] = widthsOf(sb, disc)
					}
				}
				i++
			default:
				widths[j] = widthsOf(sb, disc)
				batch.add(j, prefix, sb)
				s.tally.add(countOf(sb), 1)
				if !reset {
					ev.added = append(ev.added, j)
				}
			}
			for k, l := range widths[j] { // byte length: a cheap upper bound
				nat[k] = max(nat[k], int(l))
			}
		}
		for ; i < end; i++ {
			drop(i)
		}
	}
	for q := range oldParts { // contexts no longer in view
		if !paired[q] {
			for i := oldStarts[q]; i < oldStarts[q+1]; i++ {
				drop(i)
			}
		}
	}
	nat[colAge] = 4
	batch.flush()
	if packKeys(keys, s.stale) {
		s.stale = 0
	}
	s.sandboxes, s.widths, s.keys, s.keyBytes, s.natural, s.starts = rows, widths, keys, keyBytes, nat, starts
	s.severalNS = severalNS
	return ev
}

// find is the row of the sandbox with key in context kctx (any context
// when the rows are of one), or -1. Each context's rows are in Key order.
func (s *rowset) find(kctx, key string) int {
	for p, f := range s.parts {
		if s.multi && f.Context != kctx {
			continue
		}
		rows := s.sandboxes[s.starts[p]:s.starts[p+1]]
		if i, ok := slices.BinarySearchFunc(rows, key, func(sb *model.Sandbox, k string) int {
			return strings.Compare(sb.Key, k)
		}); ok {
			return s.starts[p] + i
		}
	}
	return -1
}

// partOf is the fleet row j belongs to.
func (s *rowset) partOf(j int) int {
	p := 0
	for p+1 < len(s.parts) && j >= s.starts[p+1] {
		p++
	}
	return p
}

// contextOf is the context row j was read from.
func (s *rowset) contextOf(j int) string { return s.parts[s.partOf(j)].Context }

// keyPrefix is what the filter keys of fleet p's rows start with.
func (s *rowset) keyPrefix(p int) string { return keyPrefix(contextIf(s.multi, s.parts[p])) }

// contextIf is f's context when the rows are of several contexts, else "".
func contextIf(multi bool, f Fleet) string {
	if !multi {
		return ""
	}
	return f.Context
}
