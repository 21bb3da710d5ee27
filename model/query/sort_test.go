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

func BenchmarkSortByState(b *testing.B) {
	const n = 150_000
	rows := make([]*model.Sandbox, n)
	for i := range rows {
		rows[i] = &model.Sandbox{Key: "bsbx/team/sb-" + strings.Repeat("x", i%7), State: model.EffectiveState(1 + i%10)}
	}
	idx := make([]int, n)
	b.ReportAllocs()
	for b.Loop() {
		for i := range idx {
			idx[i] = (i * 7919) % n // the same scrambled order each round
		}
		Sort(rows, idx, SortOrder{Key: SortState})
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
