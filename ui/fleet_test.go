package ui

import (
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
		ObjectMeta: model.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(at)},
		Replicas:   1, Phase: "Succeed", Endpoints: []string{ip},
	}
}

// incidentFleet replays a dead sandbox whose IP a new Pod took through the real fleet model: A is
// created at 17:24:05, its container exits at 17:24:44, and B gets the same
// IP on the same node at 17:25:19. The clock then stands at 17:26:00.
func incidentFleet() *fleet.Snapshot {
	const ns, ip = "team-rl", "10.244.1.17"
	now := time.Date(2026, 11, 29, 17, 24, 5, 0, time.UTC)
	f := fleet.New(fleet.Options{Now: func() time.Time { return now }})
	f.SetStatus(model.SourceStatus{Context: "kind-rl", Cluster: "kind-rl", Synced: true})
	f.UpsertBatchSandbox(fleetSandbox(ns, "sbx-a", now, ip))
	f.UpsertPod(model.SlimPod(fleetPod(ns, "sbx-a", "uid-pod-a", ip, now)))
	now = now.Add(39 * time.Second) // 17:24:44
	dead := fleetPod(ns, "sbx-a", "uid-pod-a", ip, now.Add(-39*time.Second))
	dead.Status.Phase = corev1.PodFailed
	dead.Status.ContainerStatuses[0].Ready = false
	dead.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
	f.UpsertPod(model.SlimPod(dead))
	now = now.Add(35 * time.Second) // 17:25:19
	f.UpsertBatchSandbox(fleetSandbox(ns, "sbx-b", now, ip))
	f.UpsertPod(model.SlimPod(fleetPod(ns, "sbx-b", "uid-pod-b", ip, now)))
	now = t0
	f.Tick()
	return f.Snapshot()
}

func TestIncident002FromFleet(t *testing.T) {
	src := &fakeSource{snap: incidentFleet()}
	app, tm := newTestAppSized(t, src, Backend{}, Options{}, testW, 40)
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
