package query

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
)

// The sort by state puts what an operator must act on first, every state
// has its own place, and a state the ranking does not know (the zero state,
// or one added to model without a rank) goes last rather than first.
func TestSortByStateRanksEveryState(t *testing.T) {
	want := []model.EffectiveState{
		model.StateDead, model.StateGone, model.StateFailed, model.StateTerminating, model.StateUnknown,
		model.StateStarting, model.StatePending, model.StateRunning, model.StateSuspended, model.StateExpired,
		0, // no state set
	}
	var rows []*model.Sandbox
	for s := model.EffectiveState(1); !strings.HasPrefix(s.String(), "EffectiveState("); s++ {
		if r := stateOrder(s); r == 0 || r == unranked {
			t.Fatalf("state %s has no rank of its own (%d)", s, r)
		}
		rows = append(rows, &model.Sandbox{Key: "bsbx/team/" + s.String(), State: s})
	}
	rows = append(rows, &model.Sandbox{Key: "bsbx/team/none"})
	if len(rows) != len(want) {
		t.Fatalf("model has %d states, the test knows %d: rank the new one in stateRank and here", len(rows), len(want))
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[len(idx)-1-i] = i // reversed, so no order comes for free
	}
	Sort(rows, idx, SortOrder{Key: SortState})
	var got []model.EffectiveState
	for _, i := range idx {
		got = append(got, rows[i].State)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted by state: %v, want %v", got, want)
	}
}

// BenchmarkSort is a sort key pressed over 150,000 rows: the order is
// built from the rows' own (Key) order and sorted whole, as the view does.
func BenchmarkSort(b *testing.B) {
	const n = 150_000
	at := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	rows := make([]*model.Sandbox, n)
	for i := range rows {
		ns, name := fmt.Sprintf("team-%02d", i%20), fmt.Sprintf("sandbox-%06d", i*7919%n)
		rows[i] = &model.Sandbox{
			Key:   "bsbx/" + ns + "/" + name,
			Meta:  model.ObjectMeta{Namespace: ns, Name: name}.WithCreated(at.Add(time.Duration(i*7919%n) * time.Second)),
			State: model.EffectiveState(1 + i%10), Restarts: int32(i % 4),
			Slots: []model.Slot{{Identity: model.IdentityOK}},
		}
	}
	slices.SortFunc(rows, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
	idx := make([]int, n)
	for _, k := range SortKeys {
		b.Run(string(k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range idx {
					idx[i] = i
				}
				Sort(rows, idx, SortOrder{Key: k})
			}
		})
	}
}

// Inserting rows into a sorted order gives what sorting all of them gives,
// whatever the sort key, direction, ties and the rows' count.
func TestInsertIsSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	for round := range 300 {
		n := 1 + rng.IntN(60)
		rows := make([]*model.Sandbox, n)
		for i := range rows {
			ns, name := fmt.Sprintf("ns-%d", rng.IntN(3)), fmt.Sprintf("sb-%d", rng.IntN(20))
			rows[i] = &model.Sandbox{
				Key:   string([]model.Engine{model.EngineBatchSandbox, model.EngineAgent}[rng.IntN(2)]) + "/" + ns + "/" + name,
				Meta:  model.ObjectMeta{Namespace: ns, Name: name}.WithCreated(at.Add(time.Duration(rng.IntN(5)) * time.Minute)),
				State: model.EffectiveState(rng.IntN(12)), Restarts: int32(rng.IntN(3)),
			}
		}
		o := SortOrder{Key: SortKeys[rng.IntN(len(SortKeys))], Desc: rng.IntN(2) == 0}
		perm := rng.Perm(n)
		k := rng.IntN(n + 1)
		idx, add := slices.Clone(perm[k:]), slices.Clone(perm[:k])
		Sort(rows, idx, o)
		got := Insert(rows, idx, add, o)
		want := slices.Clone(perm)
		Sort(rows, want, o)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, %+v: inserting %v into %v gave %v, want %v", round, o, perm[:k], idx, got, want)
		}
	}
}

// A large order by age, state or restarts is sorted on its field read once
// a row (SortOrder.num): it must be exactly the order of the comparator that
// sorts a small one, for every key and direction, with ties on every field,
// a row never created and rows whose slots disagree on identity.
func TestSortOnReadFieldsIsTheComparatorsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	at := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	identities := []model.IdentityState{model.IdentityOK, model.IdentityIPTaken, model.IdentityPodDead, model.IdentityUnknown, model.IdentityUnassigned}
	n := decorateFrom + rng.IntN(500)
	rows := make([]*model.Sandbox, n)
	for i := range rows {
		ns, name := fmt.Sprintf("ns-%d", rng.IntN(4)), fmt.Sprintf("sb-%d", rng.IntN(300))
		meta := &model.ObjectMeta{Namespace: ns, Name: name}
		if rng.IntN(10) > 0 {
			meta = meta.WithCreated(at.Add(time.Duration(rng.IntN(30)) * time.Second))
		}
		var slots []model.Slot
		for range rng.IntN(3) {
			slots = append(slots, model.Slot{Identity: identities[rng.IntN(len(identities))]})
		}
		rows[i] = &model.Sandbox{
			Key:  string([]model.Engine{model.EngineBatchSandbox, model.EngineAgent, model.EnginePod}[rng.IntN(3)]) + "/" + ns + "/" + name,
			Meta: meta, State: model.EffectiveState(rng.IntN(12)), Restarts: int32(rng.IntN(4)), Slots: slots,
		}
	}
	for _, key := range append(slices.Clone(SortKeys), "", "unknown") {
		for _, desc := range []bool{false, true} {
			o := SortOrder{Key: key, Desc: desc}
			got := rng.Perm(n)
			want := slices.Clone(got)
			slices.SortFunc(want, o.total(rows))
			Sort(rows, got, o)
			if !slices.Equal(got, want) {
				i := 0
				for got[i] == want[i] {
					i++
				}
				t.Fatalf("%+v: at %d the read fields put %s (%d), the comparator %s (%d)", o, i, rows[got[i]].Key, got[i], rows[want[i]].Key, want[i])
			}
		}
	}
}
