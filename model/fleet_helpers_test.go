package model

import (
	"encoding/json"
	"math/rand"
	"strconv"
	"testing"
	"time"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ft0 is the moment a dead sandbox's IP went to a new Pod: sandbox A created.
var ft0 = time.Date(2026, 11, 29, 17, 24, 5, 0, time.UTC)

const ns = "sbx"

type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time          { return c.now }
func (c *testClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

// newSyncedFleet returns a Fleet on a pinned clock whose source is synced.
func newSyncedFleet(t testing.TB) (*Fleet, *testClock) {
	t.Helper()
	c := &testClock{now: ft0}
	f := NewFleet(FleetOptions{Now: c.Now})
	f.SetStatus(SourceStatus{Synced: true})
	return f, c
}

type fpOpt func(*corev1.Pod)

// runningPod is a Running OpenSandbox-style Pod with a ready main container.
func runningPod(name, uid, ip string, opts ...fpOpt) *corev1.Pod {
	start := metav1.NewTime(ft0)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(uid), CreationTimestamp: start,
			Labels: map[string]string{osv1.LabelSandboxID: "id-" + name}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: osv1.ContainerSandbox, Image: "python:3.12",
			Command: []string{osv1.BootstrapPath, "python", "-m", "http.server"}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, StartTime: &start,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: osv1.ContainerSandbox, Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// ownedBy makes p the index-th Pod of BatchSandbox bsbx (non-pooled).
func ownedBy(bsbx string, index int) fpOpt {
	return func(p *corev1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox", Name: bsbx, UID: types.UID("uid-" + bsbx), Controller: &yes}}
		p.Labels[osv1.LabelBatchSandboxName] = bsbx
		p.Labels[osv1.LabelPodIndex] = strconv.Itoa(index)
	}
}

// pooledIn makes p an idle Pod of a Pool (not a plain sandbox, no sandbox of its own).
func pooledIn(pool string) fpOpt {
	return func(p *corev1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "Pool", Name: pool, Controller: &yes}}
		delete(p.Labels, osv1.LabelSandboxID)
		p.Labels[osv1.LabelPoolName] = pool
	}
}

// exited: the main container terminated and the Pod is Failed (restartPolicy Never).
func exited(code int32, reason string) fpOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		p.Status.ContainerStatuses[0].Ready = false
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}
	}
}

// mainTerminated: the main container terminated but the Pod phase still says Running (a sidecar lives).
func mainTerminated(p *corev1.Pod) {
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
}

func deletingAt(at time.Time, grace int64) fpOpt {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(at)
		p.DeletionTimestamp = &ts
		p.DeletionGracePeriodSeconds = &grace
	}
}

func initializing(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.PodIP = ""
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
}

func withCommand(cmd ...string) fpOpt {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Command = cmd }
}

func withImageID(id string) fpOpt {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses[0].ImageID = id }
}

func notReady(p *corev1.Pod) {
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
}

func restarted(count int32, reason string, code int32) fpOpt {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].RestartCount = count
		p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: reason, ExitCode: code, FinishedAt: metav1.NewTime(ft0.Add(-time.Minute))}}
	}
}

// batchSandbox is a non-pooled BatchSandbox in phase Succeed recording the given endpoints.
func batchSandbox(name string, endpoints ...string) *BatchSandbox {
	b := &BatchSandbox{
		ObjectMeta: ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(ft0)},
		Replicas:   1, Phase: PhaseSucceed, Endpoints: endpoints,
	}
	return b
}

func pooledSandbox(name string, created time.Time, pods []string, endpoints ...string) *BatchSandbox {
	b := batchSandbox(name, endpoints...)
	b.Replicas = int32(max(1, len(pods))) // the engine asks the pool for that many
	b.CreationTimestamp = metav1.NewTime(created)
	b.SetPoolRef("pool-a")
	alloc, _ := json.Marshal(map[string][]string{"pods": pods})
	b.ReadAnnotations(map[string]string{osv1.AnnotationAllocStatus: string(alloc)})
	return b
}

func bsKey(name string) string    { return sandboxKey(EngineBatchSandbox, ns, name) }
func agentKey(name string) string { return sandboxKey(EngineAgent, ns, name) }
func plainKey(name string) string { return sandboxKey(EnginePod, ns, name) }

// mustSandbox returns the sandbox from a fresh snapshot or fails.
func mustSandbox(t *testing.T, f *Fleet, key string) *Sandbox {
	t.Helper()
	sb := f.Snapshot().Sandbox(key)
	if sb == nil {
		var keys []string
		for _, s := range f.Snapshot().Sandboxes() {
			keys = append(keys, s.Key)
		}
		t.Fatalf("sandbox %s not in snapshot; have %v", key, keys)
	}
	return sb
}

func hasNotice(sb *Sandbox, code string) *Notice {
	for i := range sb.Notices {
		if sb.Notices[i].Code == code {
			return &sb.Notices[i]
		}
	}
	return nil
}

func noticeCodes(sb *Sandbox) []string {
	var out []string
	for _, n := range sb.Notices {
		out = append(out, n.Code)
	}
	return out
}

func newTestRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }
