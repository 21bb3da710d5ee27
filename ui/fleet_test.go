package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// fleetPod is an OpenSandbox Pod of BatchSandbox owner, index 0.
func fleetPod(ns, owner, uid, ip string, at time.Time) *corev1.Pod {
	start := metav1.NewTime(at)
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: owner + "-0", Namespace: ns, UID: types.UID(uid), CreationTimestamp: start,
			Labels: map[string]string{osv1.LabelSandboxID: "id-" + owner, osv1.LabelBatchSandboxName: owner, osv1.LabelPodIndex: "0"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox",
				Name: owner, UID: types.UID("uid-" + owner), Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "sandbox", Image: "python:3.12",
			Command: []string{"/opt/opensandbox/bootstrap.sh", "python", "-m", "http.server"}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, StartTime: &start,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "sandbox", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}}},
	}
}

func fleetSandbox(ns, name string, at time.Time, ip string) *model.BatchSandbox {
	return &model.BatchSandbox{
		ObjectMeta: *model.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)}.WithCreated(at),
		Replicas:   1, Phase: "Succeed", Endpoints: []string{ip},
	}
}

// kindFleet is a synced fleet of context kind-rl whose clock reads *now.
func kindFleet(now *time.Time) *fleet.Fleet {
	f := fleet.New(fleet.Options{Now: func() time.Time { return *now }})
	f.SetStatus(model.SourceStatus{Context: "kind-rl", Cluster: "kind-rl", Synced: true})
	return f
}

// killed makes p the Pod of a main container that exited 137 (reason
// Error) under restartPolicy Never: Failed, not ready.
func killed(p *corev1.Pod) *corev1.Pod {
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
	return p
}

// fleetApp runs the App, with no backend, over a snapshot of the real fleet
// model in a terminal of the test width and the given height.
func fleetApp(t *testing.T, snap *fleet.Snapshot, height int) (*App, *teatest.TestModel) {
	t.Helper()
	return newTestAppSized(t, &fakeSource{snap: snap}, Backend{}, Options{}, testW, height)
}

// incidentFleet replays a dead sandbox whose IP a new Pod took through the real fleet model: A is
// created at 17:24:05, its container exits at 17:24:44, and B gets the same
// IP on the same node at 17:25:19. The clock then stands at 17:26:00.
func incidentFleet() *fleet.Snapshot {
	const ns, ip = "team-rl", "10.244.1.17"
	now := time.Date(2026, 11, 29, 17, 24, 5, 0, time.UTC)
	f := kindFleet(&now)
	f.UpsertBatchSandbox(fleetSandbox(ns, "sbx-a", now, ip))
	f.UpsertPod(model.SlimPod(fleetPod(ns, "sbx-a", "uid-pod-a", ip, now)))
	now = now.Add(39 * time.Second) // 17:24:44
	f.UpsertPod(model.SlimPod(killed(fleetPod(ns, "sbx-a", "uid-pod-a", ip, now.Add(-39*time.Second)))))
	now = now.Add(35 * time.Second) // 17:25:19
	f.UpsertBatchSandbox(fleetSandbox(ns, "sbx-b", now, ip))
	f.UpsertPod(model.SlimPod(fleetPod(ns, "sbx-b", "uid-pod-b", ip, now)))
	now = t0
	f.Tick()
	return f.Snapshot()
}

func TestIncident002FromFleet(t *testing.T) {
	app, tm := fleetApp(t, incidentFleet(), 40)
	screenContains(t, tm, app, "IP_TAKEN→sbx-b-0")
	keys(tm, "/", "sbx-a", "enter")
	screenContains(t, tm, app, "Sandboxes [1/2]")
	keys(tm, "d")
	s := screenContains(t, tm, app, "IP history of 10.244.1.17:")
	for _, want := range []string{"team-rl/sbx-a-0  uid uid-pod-a", "team-rl/sbx-b-0  uid uid-pod-b", "→ now"} {
		if !strings.Contains(s, want) {
			t.Errorf("detail lacks %q:\n%s", want, s)
		}
	}
	goldenFrame(t, tm)
}

// pileUpFleet plays the pile-up of deleted sandboxes' Pods through the real fleet model: three
// sandboxes deleted while their Pods cannot finish terminating (two with
// the main container still in PodInitializing), a fourth whose object
// lives with its Pod stuck too, and a healthy one.
func pileUpFleet() *fleet.Snapshot {
	const ns = "rl"
	now := t0.Add(-20 * time.Minute)
	f := kindFleet(&now)
	del := metav1.NewTime(now.Add(time.Minute))
	grace := int64(30)
	for i, name := range []string{"gone-a", "gone-b", "gone-c", "alive-stuck", "healthy"} {
		f.UpsertBatchSandbox(fleetSandbox(ns, name, now, ""))
		p := fleetPod(ns, name, "uid-"+name, "10.244.1."+string(rune('2'+i)), now)
		if name != "healthy" {
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &del, &grace
		}
		if name == "gone-a" || name == "gone-b" || name == "alive-stuck" {
			p.Status.Phase, p.Status.PodIP = corev1.PodPending, ""
			p.Status.ContainerStatuses[0].Ready = false
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
		}
		f.UpsertPod(model.SlimPod(p))
	}
	for _, name := range []string{"gone-a", "gone-b", "gone-c"} {
		f.DeleteBatchSandbox(ns, name)
	}
	// A sandbox object held Terminating by its finalizer, its Pod gone.
	held := fleetSandbox(ns, "held", now, "")
	held.DeletionTimestamp = &del
	held.SetFinalizers([]string{"batch-sandbox.sandbox.opensandbox.io/task-cleanup"})
	f.UpsertBatchSandbox(held)
	now = t0
	f.Tick()
	return f.Snapshot()
}

// TestPileUpOfDeletedSandboxes: the header counts stuck Pods and those in
// PodInitializing, and sandbox objects stuck on finalizers, as the sweep's
// stuck block does; each deleted sandbox has a row (phase deleted); its Pod
// is in :pods; z and /STUCK list the rows the header counts.
func TestPileUpOfDeletedSandboxes(t *testing.T) {
	app, tm := fleetApp(t, pileUpFleet(), 30)
	s := screenContains(t, tm, app, "stuck 4 (3 init)  stuck objects 1")
	for _, name := range []string{"gone-a", "gone-b", "gone-c"} {
		if !regexp.MustCompile(name + `\s+bsbx\s+deleted\s+Terminating`).MatchString(s) {
			t.Errorf("no row for deleted sandbox %s:\n%s", name, s)
		}
	}
	rows := func(s string) int { return strings.Count(s, "STUCK_TERMINATING") }
	if n := rows(s); n != 5 {
		t.Errorf("%d rows with STUCK_TERMINATING, want 5:\n%s", n, s)
	}
	keys(tm, "z")
	s = screenContains(t, tm, app, "Sandboxes [5/6]")
	if rows(s) != 5 {
		t.Errorf("z lists %d stuck rows, want the 4 Pods and 1 object the header counts:\n%s", rows(s), s)
	}
	keys(tm, "z", "/", "STUCK", "enter")
	s = screenContains(t, tm, app, "Sandboxes [5/6]")
	if rows(s) != 5 || strings.Contains(s, "healthy") {
		t.Errorf("/STUCK:\n%s", s)
	}
	keys(tm, "esc", ":", "pods", "enter")
	s = screenContains(t, tm, app, "gone-a-0")
	for _, p := range []string{"gone-b-0", "gone-c-0", "alive-stuck-0", "healthy-0"} {
		if !strings.Contains(s, p) {
			t.Errorf(":pods lacks %s:\n%s", p, s)
		}
	}
}

// TestIdentityCheckedInNamespaceOnly: where other namespaces could not be
// read, a dead sandbox's identity says it was checked in its namespace only.
func TestIdentityCheckedInNamespaceOnly(t *testing.T) {
	const ns, ip = "rl", "10.244.1.40"
	now := t0
	f := kindFleet(&now)
	f.UpsertBatchSandbox(fleetSandbox(ns, "dead", t0.Add(-time.Hour), ip))
	f.UpsertPod(model.SlimPod(killed(fleetPod(ns, "dead", "uid-dead", ip, t0.Add(-time.Hour)))))
	f.SetForeignBlocked("listing Pods in all namespaces is forbidden")
	app, tm := fleetApp(t, f.Snapshot(), 50)
	screenContains(t, tm, app, "POD_DEAD (unchecked)")
	keys(tm, "d")
	screenContains(t, tm, app, "other namespaces were not checked")
}
