package fleet

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model/modeltest"
)

func TestSummarizeStuck(t *testing.T) {
	now := ft0.Add(time.Hour)
	var pods []StuckPod
	for i := range 10 { // deleted 1..10 minutes ago
		pods = append(pods, StuckPod{Pod: "p" + itoa(i), Node: []string{"node-1", "node-1", "node-2", ""}[i%4],
			Image: []string{"img-a", "img-b"}[i%2], DeletingSince: now.Add(-time.Duration(i+1) * time.Minute), PodInitializing: i != 3})
	}
	s := SummarizeStuck(pods, now)
	if s.Pods != 10 || s.PodInitializing != 9 || s.AgeMedian != 300 || s.AgeP90 != 540 {
		t.Errorf("summary %+v: want 10 pods, 9 initializing, median 300 s, p90 540 s", s)
	}
	if want := []Count{{"node-1", 6}, {"(unbound)", 2}, {"node-2", 2}}; !reflect.DeepEqual(s.TopNodes, want) {
		t.Errorf("top nodes %v", s.TopNodes)
	}
	if want := []Count{{"img-a", 5}, {"img-b", 5}}; !reflect.DeepEqual(s.TopImages, want) {
		t.Errorf("top images %v", s.TopImages)
	}
	if e := SummarizeStuck(nil, now); e.Pods != 0 || e.TopNodes == nil || e.TopImages == nil {
		t.Errorf("empty summary %+v: lists must be [] in JSON", e)
	}
}

// The header's and the summary's counts come from the same rows.
func TestStuckPodsOfSnapshot(t *testing.T) {
	f, clock := newSyncedFleet(t)
	f.UpsertPod(sandboxPod("a", "ua", "", modeltest.Initializing, modeltest.DeletingAt(ft0, 30)))
	f.UpsertPod(sandboxPod("b", "ub", "10.0.0.2", modeltest.DeletingAt(ft0, 30)))
	f.UpsertPod(sandboxPod("c", "uc", "10.0.0.3"))
	clock.now = ft0.Add(10 * time.Minute)
	f.Tick()
	got := StuckPodsOf(f.Snapshot())
	if len(got) != 2 || got[0].Pod != "a-0" || !got[0].PodInitializing || got[1].Pod != "b-0" || got[1].PodInitializing ||
		got[0].Node != "node-1" || got[0].Image != "python:3.12" || got[0].Sandbox != bsKey("a") {
		t.Errorf("stuck pods %+v", got)
	}
	n, init := f.Snapshot().Sandbox(bsKey("a")).StuckPods()
	if n != 1 || init != 1 {
		t.Errorf("row a StuckPods = %d, %d", n, init)
	}
}

// The timers come out of their heap in the order they are due, whatever
// the order they went in.
func TestTimerHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var h timerHeap
	for i := range 500 {
		h.push(timer{due: ft0.Add(time.Duration(r.IntN(1000)) * time.Second), key: strconv.Itoa(i)})
		if r.IntN(4) == 0 { // pops between pushes, as Tick runs between derives
			h.pop()
		}
	}
	last := time.Time{}
	for len(h) > 0 {
		tm := h.pop()
		if tm.due.Before(last) {
			t.Fatalf("timer due %s popped after one due %s", tm.due, last)
		}
		last = tm.due
	}
}
