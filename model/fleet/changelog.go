package fleet

import (
	"slices"
	"sort"
)

// maxChangeLog bounds the change log: past it the log starts over, and a
// reader older than that compares the lists itself (once).
const maxChangeLog = 1 << 14

// changeLog records which positions of the published sandbox list were
// replaced in place, so that a reader holding an older Snapshot catches up by
// looking at those positions only, instead of comparing every row: at 50,000
// sandboxes and 100 updates a second, that is the difference between a few
// rows and the whole fleet per redraw.
//
// A log is valid for one layout (which sandbox sits at which position): an
// add or a remove starts a new layout and a new log. Entries are only ever
// appended, so Snapshots share the backing array, each seeing its prefix.
type changeLog struct {
	layout  *layout  // identity of the layout; nil: no log (masked lists)
	from    uint64   // the log holds every change with a version above this
	entries []change // in version order
}

// layout is compared by address only.
type layout struct{ _ byte }

type change struct {
	ver uint64
	pos int32
}

// restart begins a new layout at version ver: positions logged so far mean
// nothing in it.
func (l *changeLog) restart(ver uint64) {
	l.layout, l.from, l.entries = &layout{}, ver, nil
}

// add logs that position pos was replaced at version ver.
func (l *changeLog) add(ver uint64, pos int) {
	if len(l.entries) >= maxChangeLog {
		// Forget; readers from before ver compare the lists themselves.
		l.from, l.entries = ver, nil
	}
	l.entries = append(l.entries, change{ver: ver, pos: int32(pos)})
}

// ChangedSince lists the positions of s.Sandboxes() that may hold another
// sandbox than the same position of prev.Sandboxes(), when the fleet can tell
// without comparing the lists: both come from the same Fleet, no sandbox
// was added or removed in between, and the log reaches back to prev. ok is
// false otherwise, and the caller compares the lists itself. The positions
// are sorted and distinct; an unchanged sandbox may be among them.
func (s *Snapshot) ChangedSince(prev *Snapshot) (positions []int, ok bool) {
	if prev == nil || s.changes.layout == nil || prev.changes.layout != s.changes.layout ||
		prev.Version < s.changes.from || prev.Version > s.Version || prev.NumSandboxes() != s.NumSandboxes() {
		return nil, false
	}
	log := s.changes.entries
	first := sort.Search(len(log), func(i int) bool { return log[i].ver > prev.Version })
	positions = make([]int, 0, len(log)-first)
	for _, c := range log[first:] {
		positions = append(positions, int(c.pos))
	}
	slices.Sort(positions)
	return slices.Compact(positions), true
}
