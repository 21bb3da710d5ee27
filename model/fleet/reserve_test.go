package fleet

import (
	"reflect"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// loadLists hands a fleet the two initial lists as kube/ does, Pods first,
// telling it each list's length first when reserve is set, and syncs it.
func loadLists(n int, reserve bool) *Fleet {
	f := New(Options{Now: func() time.Time { return ft0 }})
	if reserve {
		f.ReservePods(n)
	}
	for i := range n {
		f.UpsertPod(model.SlimPod(modeltest.FleetPod(i)))
	}
	if reserve {
		f.ReserveBatchSandboxes(n)
	}
	for i := range n {
		f.UpsertBatchSandbox(benchBatchSandbox(i))
	}
	f.SetStatus(model.SourceStatus{Synced: true})
	return f
}

func TestReservedLoadDerivesTheSameTable(t *testing.T) {
	const n = 300
	plain, reserved := loadLists(n, false).Snapshot(), loadLists(n, true).Snapshot()
	if plain.NumSandboxes() != n {
		t.Fatalf("%d sandboxes, want %d", plain.NumSandboxes(), n)
	}
	if !reflect.DeepEqual(plain.Sandboxes(), reserved.Sandboxes()) {
		t.Error("rows differ when the lists' lengths are reserved first")
	}
	if !reflect.DeepEqual(plain.Pods(), reserved.Pods()) {
		t.Error("Pods differ when the lists' lengths are reserved first")
	}
}

// A re-list also tells its length: the fleet it reaches must keep all it knows.
func TestReserveKeepsAFilledFleet(t *testing.T) {
	const n = 20
	f := loadLists(n, false)
	f.ReservePods(1000)
	f.ReserveBatchSandboxes(1000)
	if got := len(f.PodKeys()); got != n {
		t.Errorf("%d Pods after Reserve, want %d", got, n)
	}
	if got := len(f.BatchSandboxKeys()); got != n {
		t.Errorf("%d BatchSandboxes after Reserve, want %d", got, n)
	}
	f.UpsertPod(model.SlimPod(modeltest.FleetPod(0))) // an update of a known Pod re-derives its sandbox
	s := f.Snapshot()
	if s.NumSandboxes() != n {
		t.Fatalf("%d sandboxes, want %d", s.NumSandboxes(), n)
	}
	for _, sb := range s.Sandboxes() {
		if sb.PrimarySlot() == nil || sb.PrimarySlot().Pod == nil {
			t.Fatalf("%s lost its Pod", sb.Key)
		}
	}
}

// Once a Snapshot merged the initial lists, the lists of pending changes
// the reservation sized for the whole fleet are let go: they would keep a
// pointer's room for every sandbox (2.4 MB at 150,000) for as long as the
// fleet lives.
func TestMergedPendingListsLetTheLoadsRoomGo(t *testing.T) {
	const n = 4 * keptPendingCap
	f := loadLists(n, true)
	f.Snapshot()
	if c1, c2 := cap(f.pendingPods), cap(f.pendingSbs); c1 > keptPendingCap || c2 > keptPendingCap {
		t.Errorf("after the merge the pending lists keep room for %d Pods and %d sandboxes, want at most %d", c1, c2, keptPendingCap)
	}
	f.UpsertPod(model.SlimPod(modeltest.FleetPod(n)))
	f.Snapshot()
	if c := cap(f.pendingPods); c == 0 {
		t.Error("a small pending list was let go too: every change would allocate it anew")
	}
}
