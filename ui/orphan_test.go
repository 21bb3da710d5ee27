package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// pileUpFleet plays the pile-up of deleted sandboxes' Pods through the real fleet model: three
// sandboxes deleted while their Pods cannot finish terminating (two with
// the main container still in PodInitializing), a fourth whose object
// lives with its Pod stuck too, and a healthy one.
func pileUpFleet() *fleet.Snapshot {
	const ns = "rl"
	now := t0.Add(-20 * time.Minute)
	f := fleet.New(fleet.Options{Now: func() time.Time { return now }})
	f.SetStatus(model.SourceStatus{Context: "kind-rl", Cluster: "kind-rl", Synced: true})
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
	held.DeletionTimestamp, held.Finalizers = &del, []string{"batch-sandbox.sandbox.opensandbox.io/task-cleanup"}
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
	src := &fakeSource{snap: pileUpFleet()}
	app, tm := newTestAppSized(t, src, Backend{}, Options{}, testW, 30)
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
	f := fleet.New(fleet.Options{Now: func() time.Time { return t0 }})
	f.SetStatus(model.SourceStatus{Context: "kind-rl", Cluster: "kind-rl", Synced: true})
	f.UpsertBatchSandbox(fleetSandbox(ns, "dead", t0.Add(-time.Hour), ip))
	p := fleetPod(ns, "dead", "uid-dead", ip, t0.Add(-time.Hour))
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
	f.UpsertPod(model.SlimPod(p))
	f.SetForeignBlocked("listing Pods in all namespaces is forbidden")
	src := &fakeSource{snap: f.Snapshot()}
	app, tm := newTestAppSized(t, src, Backend{}, Options{}, testW, 50)
	screenContains(t, tm, app, "POD_DEAD (ns only)")
	keys(tm, "d")
	screenContains(t, tm, app, "other namespaces were not checked")
}
