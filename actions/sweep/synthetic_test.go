package sweep

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// A synthetic fleet for unit tests and benchmarks: n OpenSandbox
// BatchSandboxes, each with its Pod, fed to a real fleet.Fleet the way the
// watcher's informers do, plus an in-memory Lookup holding the full Pods and
// their Events.

var synthT0 = time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)

type synthKind int

const (
	synthHealthy synthKind = iota
	synthLiveness
	synthOOM
	synthDead
)

func synthName(i int) string { return fmt.Sprintf("3f2b9c1e-5d4a-4e8f-9a7b-%012d", i) }
func synthIP(i int) string   { return fmt.Sprintf("10.%d.%d.%d", 8+i/65536, (i/256)%256, i%256) }

func synthPod(i int, kind synthKind) *corev1.Pod {
	owner := synthName(i)
	yes := true
	start := metav1.NewTime(synthT0)
	grace := int64(30)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: owner + "-0", Namespace: "opensandbox", UID: types.UID(fmt.Sprintf("pod-uid-%d", i)),
			CreationTimestamp: start,
			Labels:            map[string]string{osv1.LabelSandboxID: owner, osv1.LabelBatchSandboxName: owner, osv1.LabelPodIndex: "0"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox",
				Name: owner, UID: types.UID("uid-" + owner), Controller: &yes}},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", i%200), TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: osv1.ContainerSandbox, Image: "registry.example/rl-env:2026.11",
				Command: []string{osv1.BootstrapPath, "python", "-m", "server"},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}},
					PeriodSeconds: 10, FailureThreshold: 3},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: synthIP(i), StartTime: &start,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: osv1.ContainerSandbox, Image: "registry.example/rl-env:2026.11", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}},
		},
	}
	cs := &p.Status.ContainerStatuses[0]
	switch kind {
	case synthLiveness:
		cs.RestartCount = 1
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137,
			StartedAt: start, FinishedAt: metav1.NewTime(synthT0.Add(150 * time.Second))}
		cs.State.Running.StartedAt = metav1.NewTime(synthT0.Add(151 * time.Second))
	case synthOOM:
		cs.RestartCount = 2
		cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137,
			StartedAt: start, FinishedAt: metav1.NewTime(synthT0.Add(42 * time.Second))}
	case synthDead:
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions[0].Status = corev1.ConditionFalse
		cs.Ready = false
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
			StartedAt: start, FinishedAt: metav1.NewTime(synthT0.Add(5 * time.Second))}}
	}
	return p
}

func synthBatchSandbox(i int) *model.BatchSandbox {
	owner := synthName(i)
	return &model.BatchSandbox{
		ObjectMeta: *model.ObjectMeta{Name: owner, Namespace: "opensandbox", UID: types.UID("uid-" + owner), Labels: model.LabelsFrom(map[string]string{osv1.LabelSandboxID: owner})}.WithCreated(synthT0),
		Replicas:   1, Phase: "Succeed",
		Endpoints: []string{synthIP(i)},
	}
}

// synthKindOf spreads the interesting cases over the fleet: 1 in 250
// liveness kills, 1 in 250 OOM kills, 1 in 500 dead Pods.
func synthKindOf(i int) synthKind {
	switch {
	case i%250 == 7:
		return synthLiveness
	case i%250 == 11:
		return synthOOM
	case i%500 == 13:
		return synthDead
	}
	return synthHealthy
}

// memLookup is Lookup over maps.
type memLookup struct {
	pods   map[string]*corev1.Pod
	events map[string][]corev1.Event
	nodes  map[string]*corev1.Node
}

func (l *memLookup) LivePod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if p := l.pods[ns+"/"+name]; p != nil {
		return p, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

func (l *memLookup) PodEvents(_ context.Context, ns, name string) ([]corev1.Event, error) {
	return l.events[ns+"/"+name], nil
}

func (l *memLookup) Node(_ context.Context, name string) (*corev1.Node, error) {
	if n := l.nodes[name]; n != nil {
		return n, nil
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(synthT0.Add(-24 * time.Hour))}}}}, nil
}

func (l *memLookup) NodeEvents(context.Context, string) ([]corev1.Event, error) { return nil, nil }

func livenessEvents(p *corev1.Pod) []corev1.Event {
	ref := corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, FieldPath: "spec.containers{sandbox}"}
	return []corev1.Event{
		{InvolvedObject: ref, Reason: "Unhealthy", Message: "Liveness probe failed: HTTP probe failed with statuscode: 503", Type: "Warning",
			FirstTimestamp: metav1.NewTime(synthT0.Add(100 * time.Second)), LastTimestamp: metav1.NewTime(synthT0.Add(120 * time.Second)), Count: 3},
		{InvolvedObject: ref, Reason: "Killing", Message: "Container sandbox failed liveness probe, will be restarted", Type: "Normal",
			FirstTimestamp: metav1.NewTime(synthT0.Add(120 * time.Second)), LastTimestamp: metav1.NewTime(synthT0.Add(120 * time.Second)), Count: 1},
	}
}

// newSynthFleet is an empty fleet whose clock stands ten minutes after synthT0.
func newSynthFleet() *fleet.Fleet {
	return fleet.New(fleet.Options{Now: func() time.Time { return synthT0.Add(10 * time.Minute) }})
}

// buildSynthFleet loads n sandboxes into a fleet.Fleet (as the informers'
// initial lists do) and returns its snapshot and a Lookup over the full Pods.
func buildSynthFleet(n int) (*fleet.Snapshot, *memLookup) {
	f := newSynthFleet()
	l := &memLookup{pods: map[string]*corev1.Pod{}, events: map[string][]corev1.Event{}, nodes: map[string]*corev1.Node{}}
	for i := 0; i < n; i++ {
		kind := synthKindOf(i)
		p := synthPod(i, kind)
		f.UpsertBatchSandbox(synthBatchSandbox(i))
		f.UpsertPod(model.SlimPod(p))
		if kind != synthHealthy {
			l.pods[p.Namespace+"/"+p.Name] = p
		}
		if kind == synthLiveness {
			l.events[p.Namespace+"/"+p.Name] = livenessEvents(p)
		}
	}
	f.SetStatus(model.SourceStatus{Synced: true})
	return f.Snapshot(), l
}
