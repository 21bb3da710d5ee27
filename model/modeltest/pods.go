// Package modeltest builds the Pods the tests of the model and its packages
// feed it, as the API server sends them (corev1.Pod, before SlimPod): a
// Running OpenSandbox-style Pod and options that own, pool, stop, delete or
// restart it. It does not import the model, so the model's own tests can use
// it.
package modeltest

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// T0 is the creation and start time of the Pods RunningPod makes.
var T0 = time.Date(2026, 11, 29, 17, 24, 5, 0, time.UTC)

// Namespace is the namespace of the Pods RunningPod makes.
const Namespace = "sbx"

// PodOption changes a Pod RunningPod makes.
type PodOption func(*corev1.Pod)

// RunningPod is a Running OpenSandbox-style Pod with a ready main container.
func RunningPod(name, uid, ip string, opts ...PodOption) *corev1.Pod {
	start := metav1.NewTime(T0)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, UID: types.UID(uid), CreationTimestamp: start,
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

// OwnedBy makes p the index-th Pod of BatchSandbox bsbx (non-pooled).
func OwnedBy(bsbx string, index int) PodOption {
	return func(p *corev1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox", Name: bsbx, UID: types.UID("uid-" + bsbx), Controller: &yes}}
		p.Labels[osv1.LabelBatchSandboxName] = bsbx
		p.Labels[osv1.LabelPodIndex] = strconv.Itoa(index)
	}
}

// PooledIn makes p an idle Pod of a Pool (not a plain sandbox, no sandbox of its own).
func PooledIn(pool string) PodOption {
	return func(p *corev1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "Pool", Name: pool, Controller: &yes}}
		delete(p.Labels, osv1.LabelSandboxID)
		p.Labels[osv1.LabelPoolName] = pool
	}
}

// Exited sets the Pod up so that the main container terminated and the Pod is Failed (restartPolicy Never).
func Exited(code int32, reason string) PodOption {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		p.Status.ContainerStatuses[0].Ready = false
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}
	}
}

// MainTerminated sets the Pod up so that the main container terminated but the Pod phase still says Running (a sidecar lives).
func MainTerminated(p *corev1.Pod) {
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
}

// DeletingAt sets the Pod up so that it is being deleted since at, with the given grace period.
func DeletingAt(at time.Time, grace int64) PodOption {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(at)
		p.DeletionTimestamp = &ts
		p.DeletionGracePeriodSeconds = &grace
	}
}

// Initializing sets the Pod up so that it is Pending, its main container waiting in
// PodInitializing.
func Initializing(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.PodIP = ""
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
}

// WithCommand sets the main container's command.
func WithCommand(cmd ...string) PodOption {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Command = cmd }
}

// WithImageID sets the main container's imageID.
func WithImageID(id string) PodOption {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses[0].ImageID = id }
}

// NotReady sets the Pod up so that the main container and the Pod are not ready.
func NotReady(p *corev1.Pod) {
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
}

// Restarted sets the Pod up so that the main container restarted count times, its last run
// ending with reason and exit code a minute before T0.
func Restarted(count int32, reason string, code int32) PodOption {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].RestartCount = count
		p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: reason, ExitCode: code, FinishedAt: metav1.NewTime(T0.Add(-time.Minute))}}
	}
}
