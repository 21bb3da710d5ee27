package query

import (
	"cmp"
	"math"
	"slices"

	"github.com/sandscope/sandscope/model"
)

// SortKey names a column the fleet can be sorted by.
type SortKey string

// The columns the fleet can be sorted by.
const (
	SortName     SortKey = "name"
	SortAge      SortKey = "age"
	SortState    SortKey = "state"
	SortRestarts SortKey = "restarts"
)

// SortKeys lists the supported sort keys in help order.
var SortKeys = []SortKey{SortName, SortAge, SortState, SortRestarts}

// stateRank puts the states an operator must act on first. It is indexed
// by the state, since a sort by state at 150,000 rows asks it millions of
// times; the zero state (none set) and any state it does not list sort last.
var stateRank = [...]uint8{
	0:               unranked,
	model.StateDead: 1, model.StateGone: 2, model.StateFailed: 3, model.StateTerminating: 4, model.StateUnknown: 5,
	model.StateStarting: 6, model.StatePending: 7, model.StateRunning: 8, model.StateSuspended: 9, model.StateExpired: 10,
}

const unranked = 255

func stateOrder(s model.EffectiveState) uint8 {
	if int(s) < len(stateRank) {
		return stateRank[s]
	}
	return unranked
}

// SortOrder is a sort key and direction.
type SortOrder struct {
	Key  SortKey
	Desc bool
}

// Sort orders idx (positions into rows) in place. Every comparison ends on
// Key, then on the position (rows of several fleets, one per cluster
// context, may share a Key), so the order is total: rows never swap places
// between two live updates unless their sort field changed, and stability
// is free. Passing the previous order in idx makes a sort cheap:
// pattern-defeating quicksort finishes nearly sorted input in close to
// linear time.
//
// name: namespace/name. age: newest first. state: worst identity first, then
// worst effective state. restarts: most first. Desc reverses the primary field
// (and, for name, the Key that breaks its ties: the whole name).
func Sort(rows []*model.Sandbox, idx []int, o SortOrder) {
	if len(idx) < decorateFrom || !o.numeric() {
		slices.SortFunc(idx, o.total(rows))
		return
	}
	// A large order by age, state or restarts is sorted on the field read
	// once a row, kept beside the rows' keys: the comparator reads the field
	// through two pointers, and for state works out the identity's rank
	// from the slots, millions of times for a fleet of 150,000. (By name the
	// rows come nearly in order already, Key order, and the comparator is
	// cheap.)
	num, keys := make([]int64, len(rows)), make([]string, len(rows))
	for _, i := range idx {
		num[i], keys[i] = o.num(rows[i]), rows[i].Key
	}
	slices.SortFunc(idx, func(a, b int) int {
		c := cmp.Compare(num[a], num[b])
		if o.Desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(keys[a], keys[b]), cmp.Compare(a, b))
	})
}

// decorateFrom is the order's length from which Sort reads a numeric sort
// field once a row rather than in every comparison.
const decorateFrom = 1024

// numeric: o's field is a number (num), not a name.
func (o SortOrder) numeric() bool {
	return o.Key == SortAge || o.Key == SortState || o.Key == SortRestarts
}

// num is sb's numeric sort field, ordered as compare orders it (smaller
// first).
func (o SortOrder) num(sb *model.Sandbox) int64 {
	switch o.Key {
	case SortAge: // newest first
		if t := sb.CreatedAt(); !t.IsZero() {
			return -t.UnixNano()
		}
		return math.MaxInt64 // never created: the oldest
	case SortState: // worst identity first, then worst state
		return int64(-sb.Identity().Rank())<<8 | int64(stateOrder(sb.State))
	default: // restarts, most first
		return -int64(sb.Restarts)
	}
}

// total is the order Sort leaves positions into rows in: compare's, then
// the position.
func (o SortOrder) total(rows []*model.Sandbox) func(a, b int) int {
	compare := o.compare()
	return func(a, b int) int {
		if c := compare(rows[a], rows[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
}

// Insert puts the rows add (positions into rows, none of them in idx) into
// idx, which Sort sorted by o, each at its place, and returns it: the order
// Sort gives all of them. idx's array is written, and grown when it has no
// room; add is sorted. A live update that brings a few new rows (or takes
// out the few that left their places and puts them back) costs a binary
// search a row and one move of the rows behind it, where sorting the whole
// order again cost up to a hundred milliseconds at 150,000 rows.
func Insert(rows []*model.Sandbox, idx, add []int, o SortOrder) []int {
	if len(add) == 0 {
		return idx
	}
	order := o.total(rows)
	slices.SortFunc(add, order)
	n := len(idx)
	idx = slices.Grow(idx, len(add))[:n+len(add)]
	// From the last new row back: each goes where it belongs among the
	// rows not yet passed, which move up to make room for it and for the
	// new rows still to come before them.
	end := n
	for j := len(add) - 1; j >= 0; j-- {
		at, _ := slices.BinarySearchFunc(idx[:end], add[j], order)
		copy(idx[at+j+1:], idx[at:end])
		idx[at+j] = add[j]
		end = at
	}
	return idx
}

// InOrderAround reports whether idx is sorted by o at the given positions:
// each one against its neighbours. When only the rows at those positions
// changed since idx was last sorted (rows may also have been removed), that
// is enough to know the whole order still holds, since every other adjacent
// pair kept its fields and sortedness is a property of adjacent pairs. A
// live update that changes a few rows then costs a few comparisons instead
// of a sort of the fleet.
func InOrderAround(rows []*model.Sandbox, idx []int, o SortOrder, positions []int) bool {
	order := o.total(rows)
	before := func(a, b int) bool { return order(a, b) <= 0 } // a may come before b
	for _, p := range positions {
		if p > 0 && !before(idx[p-1], idx[p]) {
			return false
		}
		if p+1 < len(idx) && !before(idx[p], idx[p+1]) {
			return false
		}
	}
	return true
}

// compare is the total order Sort uses: the primary field (reversed when
// Desc), then Key.
func (o SortOrder) compare() func(a, b *model.Sandbox) int {
	primary := comparer(o.Key)
	// The name order reversed is the whole name reversed: the Key that
	// breaks its ties (the engine) turns too, or a reversed list would
	// still read agent/x before bsbx/x.
	reverseKey := o.Desc && o.Key == SortName
	return func(a, b *model.Sandbox) int {
		if c := primary(a, b); c != 0 {
			if o.Desc {
				return -c
			}
			return c
		}
		if reverseKey {
			return cmp.Compare(b.Key, a.Key)
		}
		return cmp.Compare(a.Key, b.Key)
	}
}

func comparer(k SortKey) func(a, b *model.Sandbox) int {
	switch k {
	case SortAge:
		return func(a, b *model.Sandbox) int { return b.CreatedAt().Compare(a.CreatedAt()) }
	case SortState:
		return func(a, b *model.Sandbox) int {
			if c := cmp.Compare(b.Identity().Rank(), a.Identity().Rank()); c != 0 {
				return c
			}
			return cmp.Compare(stateOrder(a.State), stateOrder(b.State))
		}
	case SortRestarts:
		return func(a, b *model.Sandbox) int { return cmp.Compare(b.Restarts, a.Restarts) }
	default:
		return func(a, b *model.Sandbox) int {
			if c := cmp.Compare(a.Namespace(), b.Namespace()); c != 0 {
				return c
			}
			return cmp.Compare(a.Name(), b.Name())
		}
	}
}
