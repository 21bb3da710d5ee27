package ui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/query"
)

// A live refresh, whether the rowset replaces only the rows the fleet names
// (no sandbox added or removed) or merges the rows again, must leave the
// view exactly as a full rebuild from the same snapshot would: rows, their
// widths, keys and header counts (sameRows), sort order and visible rows.
// Random churn through a real Fleet, under several sort orders, with and
// without the problems filter.
func TestPartialRefreshMatchesFullRebuild(t *testing.T) {
	const ns, n = "team-rl", 30
	name, ip, now := churnName, churnIP, churnNow
	for _, sortKey := range []query.SortKey{query.SortName, query.SortState, query.SortRestarts} {
		for _, problems := range []bool{false, true} {
			f := churnFleet("", ns, n)
			src := &fakeSource{snap: f.Snapshot()}
			open := func() (*App, *sandboxesView) {
				a := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
				a.Init()
				v := a.stack[0].(*sandboxesView)
				if sortKey != v.sort.Key {
					v.setSort(sortKey, a.c)
				}
				if problems {
					v.filter.ProblemsOnly = true
					v.refilter()
				}
				return a, v
			}
			a, live := open()
			rng := rand.New(rand.NewPCG(uint64(len(sortKey)), 7))
			partial := 0
			for step := range 200 {
				i := rng.IntN(n)
				switch rng.IntN(12) {
				case 0:
					f.DeleteBatchSandbox(ns, name(i))
				case 1:
					f.UpsertBatchSandbox(fleetSandbox(ns, name(i), now, ip(i)))
				default:
					f.UpsertPod(model.SlimPod(churnedPod(rng, ns, name(i), ip(i), now)))
				}
				next := f.Snapshot()
				if _, ok := next.ChangedSince(a.c.snap); ok {
					partial++
				}
				src.set(next)
				a.liveRefresh()
				_, fresh := open()
				where := fmt.Sprintf("sort %s, problems %v, step %d", sortKey, problems, step)
				sameView(t, where, live, fresh)
			}
			if partial < 100 {
				t.Fatalf("sort %s: only %d of 200 refreshes could be partial; the test proves little", sortKey, partial)
			}
		}
	}
}

// churnedPod is sandbox name's Pod after a random status write: failed
// (OOM), restarted, or as it was.
func churnedPod(rng *rand.Rand, ns, name, ip string, now time.Time) *corev1.Pod {
	p := fleetPod(ns, name, "uid-"+name, ip, now)
	switch rng.IntN(3) {
	case 0:
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
	case 1:
		p.Status.ContainerStatuses[0].RestartCount = int32(rng.IntN(4))
	}
	return p
}

// sameView: got (refreshed live) shows what want (built fresh) does: the
// same rows (sameRows), in the same order, the same ones visible.
func sameView(t *testing.T, where string, got, want *sandboxesView) {
	t.Helper()
	sameRows(t, where, &got.rows, &want.rows)
	keysOf := func(v *sandboxesView, idx []int) []string {
		out := make([]string, len(idx))
		for i, ri := range idx {
			out[i] = v.rows.sandboxes[ri].Key
		}
		return out
	}
	if g, w := keysOf(got, got.order), keysOf(want, want.order); !slices.Equal(g, w) {
		t.Fatalf("%s: order\n got %v\nwant %v", where, g, w)
	}
	if g, w := keysOf(got, got.visible), keysOf(want, want.visible); !slices.Equal(g, w) {
		t.Fatalf("%s: visible\n got %v\nwant %v", where, g, w)
	}
}
