package ui

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// t0 is the pinned clock of every UI test.
var t0 = time.Date(2026, 11, 29, 17, 26, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// fakeSource is a Source whose snapshot the test replaces.
type fakeSource struct {
	mu   sync.Mutex
	snap *fleet.Snapshot
	subs []chan struct{}
}

func (f *fakeSource) Snapshot() *fleet.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap
}

func (f *fakeSource) Subscribe() (<-chan struct{}, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{}, 1)
	f.subs = append(f.subs, ch)
	return ch, func() {}
}

func (f *fakeSource) set(s *fleet.Snapshot) {
	f.mu.Lock()
	f.snap = s
	subs := f.subs
	f.mu.Unlock()
	for _, ch := range subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func pod(ns, name, uid, ip, node string, phase corev1.PodPhase, created time.Time) *model.Pod {
	return &model.Pod{
		ObjectMeta: *model.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}.WithCreated(created),
		Spec:       model.PodSpec{NodeName: node},
		Status: model.PodStatus{Phase: phase, PodIP: ip, ContainerStatuses: []model.ContainerStatus{{
			Name: "sandbox", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, Ready: true,
		}}},
	}
}

// incidentSnapshot is a dead sandbox whose IP a new Pod took, frozen at 17:26: sbx-a's container died at
// 17:24:44 and sbx-b's Pod got its IP at 17:25:19; plus the other shapes the
// table must show (stuck Terminating, a silent entrypoint fallback, healthy).
func incidentSnapshot() *fleet.Snapshot {
	ns := "team-rl"
	at := func(hms string) time.Time {
		t, _ := time.Parse("15:04:05", hms)
		return time.Date(2026, 11, 29, t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	}
	podA := pod(ns, "sbx-a-0", "uid-a", "10.244.1.17", "node-1", corev1.PodFailed, at("17:24:05"))
	podA.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}}
	podA.Status.ContainerStatuses[0].Ready = false
	podB := pod(ns, "sbx-b-0", "uid-b", "10.244.1.17", "node-1", corev1.PodRunning, at("17:25:19"))
	podC := pod(ns, "sbx-c-0", "uid-c", "10.244.1.30", "node-2", corev1.PodRunning, at("17:01:00"))
	podC.Status.ContainerStatuses[0].RestartCount = 3
	podD := pod("batch", "sbx-d-0", "uid-d", "10.244.2.4", "node-2", corev1.PodRunning, at("16:40:00"))
	del := metav1.NewTime(at("17:05:00"))
	podD.DeletionTimestamp = &del
	podD.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	fell := at("17:01:02")
	sbs := []*model.Sandbox{
		{
			Key: "bsbx/batch/sbx-d", EnginePhase: "Pending", State: model.StateTerminating,
			Meta: model.ObjectMeta{Namespace: "batch", Name: "sbx-d",
				Labels: model.LabelsFrom(map[string]string{"app": "eval"})}.WithCreated(at("16:40:00")),
			Slots: []model.Slot{{RecordedIP: "10.244.2.4", PodName: "sbx-d-0", BoundUID: "uid-d", Pod: podD, Identity: model.IdentityOK,
				Stuck: &model.StuckInfo{DeletingSince: del.Time, GraceSeconds: 30, PodInitializing: true}}},
			Notices: []model.Notice{{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning, Message: "Pod deleting for 21m, main container still PodInitializing"}},
		},
		{
			Key: "bsbx/team-rl/sbx-a", EnginePhase: "Succeed", State: model.StateDead,
			Meta: model.ObjectMeta{Namespace: ns, Name: "sbx-a", UID: "sbx-uid-a",
				Labels: model.LabelsFrom(map[string]string{"app": "rl"})}.WithCreated(at("17:24:05")),
			Slots: []model.Slot{{RecordedIP: "10.244.1.17", PodName: "sbx-a-0", BoundUID: "uid-a", Pod: podA, Identity: model.IdentityIPTaken,
				Holder: &model.Holder{Namespace: ns, Pod: "sbx-b-0", UID: "uid-b", Sandbox: "bsbx/team-rl/sbx-b", Since: at("17:25:19")}}},
			Notices: []model.Notice{
				{Code: model.CodeIPTaken, Severity: model.SeverityError, Message: "recorded IP 10.244.1.17 is held by team-rl/sbx-b-0",
					Pod: "sbx-a-0", Evidence: []model.Evidence{
						{Kind: model.Observed, Text: "Pod sbx-a-0 phase Failed (exit 137)"},
						{Kind: model.Observed, Text: "Pod sbx-b-0 (uid-b) has podIP 10.244.1.17"}}},
				{Code: model.CodePodDead, Severity: model.SeverityError, Message: "linked Pod sbx-a-0 is Failed"},
			},
		},
		{
			Key: "bsbx/team-rl/sbx-b", EnginePhase: "Succeed", State: model.StateRunning,
			Meta: model.ObjectMeta{Namespace: ns, Name: "sbx-b",
				Labels: model.LabelsFrom(map[string]string{"app": "rl"})}.WithCreated(at("17:25:19")),
			Slots: []model.Slot{{RecordedIP: "10.244.1.17", PodName: "sbx-b-0", BoundUID: "uid-b", Pod: podB, Identity: model.IdentityOK}},
		},
		{
			Key: "agent/team-rl/sbx-c", EnginePhase: "Ready", State: model.StateRunning, Restarts: 3,
			Meta: model.ObjectMeta{Namespace: ns, Name: "sbx-c",
				Labels: model.LabelsFrom(map[string]string{"app": "web"})}.WithCreated(at("17:01:00")),
			Slots: []model.Slot{{RecordedIP: "10.244.1.30", PodName: "sbx-c-0", BoundUID: "uid-c", Pod: podC, Identity: model.IdentityOK}},
			Notices: []model.Notice{{Code: model.CodeEntrypointNotRun, Severity: model.SeverityWarning,
				Message:  "image config unreadable; started with sleep, ENTRYPOINT/CMD will not run",
				Evidence: []model.Evidence{{Kind: model.Inferred, Text: "command is [bootstrap.sh sleep infinity]", At: &fell}}}},
		},
	}
	slices.SortFunc(sbs, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
	status := model.SourceStatus{Context: "kind-rl", Cluster: "kind-rl", Server: "https://127.0.0.1:6443",
		Synced: true, AsOf: at("17:25:59")}
	pools := []*model.Pool{{ObjectMeta: *model.ObjectMeta{Namespace: ns, Name: "rl-pool"}.WithCreated(at("12:00:00")),
		Total: 8, Allocated: 6, Available: 2, BufferMin: 2, BufferMax: 4, PoolMin: 4, PoolMax: 16, Revision: "r7"}}
	return fleet.NewSnapshot(1, status, sbs, []*model.Pod{podD, podA, podB, podC}, pools)
}

// bigSnapshot has n healthy sandboxes spread over 20 namespaces.
func bigSnapshot(n int) *fleet.Snapshot {
	sbs := make([]*model.Sandbox, n)
	defer slices.SortFunc(sbs, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
	for i := range sbs {
		ns := fmt.Sprintf("ns-%02d", i%20)
		name := fmt.Sprintf("sandbox-%06d", i)
		st := model.StateRunning
		id := model.IdentityOK
		if i%97 == 0 {
			st, id = model.StateDead, model.IdentityPodDead
		}
		sbs[i] = &model.Sandbox{
			Key: "bsbx/" + ns + "/" + name,
			Meta: model.ObjectMeta{Namespace: ns, Name: name,
				Labels: model.LabelsFrom(map[string]string{"app": fmt.Sprintf("app-%d", i%7)})}.WithCreated(t0.Add(-time.Duration(i) * time.Second)),
			EnginePhase: "Succeed", State: st, Restarts: int32(i % 5),
			Slots: []model.Slot{{RecordedIP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), PodName: name + "-0", Identity: id}},
		}
	}
	return fleet.NewSnapshot(1, model.SourceStatus{Context: "bench", Synced: true, AsOf: t0}, sbs, nil, nil)
}

// withSandbox returns a copy of snap (next version) in which the named
// sandbox is replaced by edit's result.
func withSandbox(snap *fleet.Snapshot, name string, edit func(model.Sandbox) model.Sandbox) *fleet.Snapshot {
	sbs := append([]*model.Sandbox(nil), snap.Sandboxes()...)
	for i, sb := range sbs {
		if sb.Name() == name {
			c := edit(*sb)
			sbs[i] = &c
		}
	}
	next := fleet.NewSnapshot(snap.Version+1, snap.Status, sbs, snap.Pods(), snap.Pools)
	return next
}
