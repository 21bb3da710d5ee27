package testcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// DefaultNode is the node SetRunning binds an unscheduled Pod to.
const DefaultNode = "kubetest-node"

// HoldFinalizer is the finalizer DeleteHeld adds so a deleted Pod stays
// Terminating until Release.
const HoldFinalizer = "testcluster.sandscope.io/hold"

// Kubelet plays the kubelet (and the scheduler) for one test, through the
// real API: pods/binding, the pods/status subresource, core/v1 Events and
// nodes/status. Every method fails the test on an API error and returns the
// object as the server stored it.
type Kubelet struct{ actor }

// Kubelet returns the kubelet helpers for this test.
func (c *Cluster) Kubelet(t testing.TB) *Kubelet { return &Kubelet{c.actorFor(t)} }

// actor is what Kubelet and Controller act with: the cluster, the test an
// API error fails, and a context that lasts as long as that test.
type actor struct {
	c   *Cluster
	t   testing.TB
	ctx context.Context
}

func (c *Cluster) actorFor(t testing.TB) actor { return actor{c: c, t: t, ctx: Context(t)} }

// CreatePod creates pod in ns as given and returns the stored Pod.
func (k *Kubelet) CreatePod(ns string, pod *corev1.Pod) *corev1.Pod {
	k.t.Helper()
	out, err := k.c.Kube.CoreV1().Pods(ns).Create(k.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		k.t.Fatalf("testcluster: creating pod %s/%s: %v", ns, pod.Name, err)
	}
	return out
}

// GetPod reads a Pod.
func (k *Kubelet) GetPod(ns, name string) *corev1.Pod {
	k.t.Helper()
	out, err := k.c.Kube.CoreV1().Pods(ns).Get(k.ctx, name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatalf("testcluster: reading pod %s/%s: %v", ns, name, err)
	}
	return out
}

// Schedule binds the Pod to node through pods/binding, as the scheduler
// does, creating the Node (Ready, InternalIP 127.0.0.1) if it is missing.
// The Pod gets spec.nodeName and a PodScheduled=True condition.
func (k *Kubelet) Schedule(ns, pod, node string) *corev1.Pod {
	k.t.Helper()
	k.EnsureNode(node)
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := k.c.Kube.CoreV1().Pods(ns).Bind(k.ctx, binding, metav1.CreateOptions{}); err != nil {
		k.t.Fatalf("testcluster: binding pod %s/%s to node %s: %v", ns, pod, node, err)
	}
	return k.GetPod(ns, pod)
}

// UpdatePodStatus reads the Pod, lets mutate change it, and writes its
// status through the status subresource, retrying on conflicts. The other
// helpers are built on it; use it for states they do not cover.
func (k *Kubelet) UpdatePodStatus(ns, name string, mutate func(*corev1.Pod)) *corev1.Pod {
	k.t.Helper()
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := k.c.Kube.CoreV1().Pods(ns).Get(k.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(pod)
		out, err = k.c.Kube.CoreV1().Pods(ns).UpdateStatus(k.ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		k.t.Fatalf("testcluster: updating status of pod %s/%s: %v", ns, name, err)
	}
	return out
}

// SetRunning makes the Pod what a healthy started Pod looks like: bound
// (to DefaultNode if it was not), phase Running, podIP/podIPs = ip, init
// containers terminated Completed, every container running, started and
// ready, conditions PodScheduled, Initialized, ContainersReady and Ready True.
// Restart counts and last states are kept.
func (k *Kubelet) SetRunning(ns, pod, ip string) *corev1.Pod {
	k.t.Helper()
	if p := k.GetPod(ns, pod); p.Spec.NodeName == "" {
		k.Schedule(ns, pod, DefaultNode)
	}
	now := metav1.Now()
	return k.UpdatePodStatus(ns, pod, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Reason, p.Status.Message = "", ""
		p.Status.PodIP = ip
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		p.Status.HostIP = "127.0.0.1"
		p.Status.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
		if p.Status.StartTime == nil {
			p.Status.StartTime = &now
		}
		for _, c := range p.Spec.InitContainers {
			s := containerStatus(&p.Status.InitContainerStatuses, c)
			if s.State.Terminated == nil {
				s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now,
				}}
			}
			s.Ready = s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
		}
		for _, c := range p.Spec.Containers {
			s := containerStatus(&p.Status.ContainerStatuses, c)
			if s.State.Running == nil {
				s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
			}
			s.Ready, s.Started = true, ptrTo(true)
		}
		for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			setPodCondition(p, t, corev1.ConditionTrue, "", "")
		}
	})
}

// SetWaiting puts one container (init or main) into state waiting with
// reason and message, as the kubelet reports PodInitializing,
// ContainerCreating, ErrImagePull, ImagePullBackOff, CrashLoopBackOff or
// CreateContainerConfigError. The container is not ready; the Pod is
// Pending unless it already runs (a CrashLoopBackOff Pod stays Running),
// and its Ready (for an init container: Initialized) condition is False.
func (k *Kubelet) SetWaiting(ns, pod, container, reason, message string) *corev1.Pod {
	k.t.Helper()
	return k.updateContainerStatus(ns, pod, container, func(p *corev1.Pod, s *corev1.ContainerStatus, init bool) {
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		if p.Status.Phase == "" {
			p.Status.Phase = corev1.PodPending
		}
		if init {
			setPodCondition(p, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized", fmt.Sprintf("containers with incomplete status: [%s]", container))
		}
		setNotReady(p, s, container)
	})
}

// Terminate ends one container with exitCode and reason (OOMKilled, Error,
// Completed, ...), finishedAt now, startedAt from its running state. The
// Pod phase is not changed (use SetPhase, as the kubelet decides that from
// the restart policy); its Ready condition becomes False.
func (k *Kubelet) Terminate(ns, pod, container string, exitCode int32, reason string) *corev1.Pod {
	k.t.Helper()
	now := metav1.Now()
	return k.updateContainerStatus(ns, pod, container, func(p *corev1.Pod, s *corev1.ContainerStatus, _ bool) {
		s.State = corev1.ContainerState{Terminated: endRun(s, exitCode, reason, now, now)}
		setNotReady(p, s, container)
	})
}

// Restart records that a container died with exitCode and reason and was
// started again: restartCount+1, lastState.terminated {reason, exitCode,
// startedAt of the old run, finishedAt now}, state running since now,
// ready. The Pod must allow restarts (restartPolicy Always, the default):
// the API server refuses terminated→running under Never.
func (k *Kubelet) Restart(ns, pod, container string, exitCode int32, reason string) *corev1.Pod {
	k.t.Helper()
	now := metav1.Now()
	return k.updateContainerStatus(ns, pod, container, func(_ *corev1.Pod, s *corev1.ContainerStatus, _ bool) {
		s.LastTerminationState = corev1.ContainerState{Terminated: endRun(s, exitCode, reason, now, metav1.NewTime(now.Add(-time.Second)))}
		s.RestartCount++
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		s.Ready, s.Started = true, ptrTo(true)
	})
}

// Restarted records a container's past as the kubelet leaves it after
// count restarts: its last run started at started and ended at finished
// with exitCode and reason, and it runs again since a second later. Use it
// for a restart in the past; Restart is one happening now.
func (k *Kubelet) Restarted(ns, pod, container string, count int32, exitCode int32, reason string, started, finished time.Time) *corev1.Pod {
	k.t.Helper()
	return k.updateContainerStatus(ns, pod, container, func(_ *corev1.Pod, s *corev1.ContainerStatus, _ bool) {
		s.RestartCount = count
		s.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished)}}
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(finished.Add(time.Second))}}
	})
}

// SetPhase sets the Pod phase with reason and message, as the kubelet does
// when a Pod ends (Failed, Succeeded). A terminal phase cannot be left again.
func (k *Kubelet) SetPhase(ns, pod string, phase corev1.PodPhase, reason, message string) *corev1.Pod {
	k.t.Helper()
	return k.UpdatePodStatus(ns, pod, func(p *corev1.Pod) {
		p.Status.Phase, p.Status.Reason, p.Status.Message = phase, reason, message
		if phase == corev1.PodFailed || phase == corev1.PodSucceeded {
			setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "")
			setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "")
		}
	})
}

// Evict fails the Pod the way the kubelet's eviction manager does: phase
// Failed, reason Evicted, message, condition DisruptionTarget=True
// (reason TerminationByKubelet), containers terminated.
func (k *Kubelet) Evict(ns, pod, message string) *corev1.Pod {
	k.t.Helper()
	now := metav1.Now()
	return k.UpdatePodStatus(ns, pod, func(p *corev1.Pod) {
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", message
		setPodCondition(p, corev1.DisruptionTarget, corev1.ConditionTrue, "TerminationByKubelet", message)
		setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "PodFailed", "")
		setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "PodFailed", "")
		for i := range p.Status.ContainerStatuses {
			s := &p.Status.ContainerStatuses[i]
			if s.State.Terminated != nil {
				continue
			}
			started := now
			if s.State.Running != nil {
				started = s.State.Running.StartedAt
			}
			s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", StartedAt: started, FinishedAt: now}}
			s.Ready, s.Started = false, ptrTo(false)
		}
	})
}

// DeleteHeld adds HoldFinalizer to the Pod and deletes it, so it stays
// Terminating (deletionTimestamp set) until Release. Returns the Pod as it
// is now: still there, with deletionTimestamp.
func (k *Kubelet) DeleteHeld(ns, pod string) *corev1.Pod {
	k.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := k.c.Kube.CoreV1().Pods(ns).Get(k.ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if slices.Contains(p.Finalizers, HoldFinalizer) {
			return nil
		}
		p.Finalizers = append(p.Finalizers, HoldFinalizer)
		_, err = k.c.Kube.CoreV1().Pods(ns).Update(k.ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		k.t.Fatalf("testcluster: adding finalizer to pod %s/%s: %v", ns, pod, err)
	}
	if err := k.c.Kube.CoreV1().Pods(ns).Delete(k.ctx, pod, metav1.DeleteOptions{}); err != nil {
		k.t.Fatalf("testcluster: deleting pod %s/%s: %v", ns, pod, err)
	}
	return k.GetPod(ns, pod)
}

// Release removes HoldFinalizer. A Pod that DeleteHeld deleted then goes
// away: a bound one is also force-deleted, since no kubelet would confirm
// its end (other finalizers still hold it).
func (k *Kubelet) Release(ns, pod string) {
	k.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := k.c.Kube.CoreV1().Pods(ns).Get(k.ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == HoldFinalizer })
		_, err = k.c.Kube.CoreV1().Pods(ns).Update(k.ctx, p, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		k.t.Fatalf("testcluster: removing finalizer of pod %s/%s: %v", ns, pod, err)
	}
	p, err := k.c.Kube.CoreV1().Pods(ns).Get(k.ctx, pod, metav1.GetOptions{})
	if err == nil && p.DeletionTimestamp != nil && p.Spec.NodeName != "" {
		k.ForceDelete(ns, pod)
	}
}

// ForceDelete deletes the Pod with grace period 0, as `kubectl delete
// --force --grace-period=0` does (a bound Pod otherwise waits for a kubelet).
func (k *Kubelet) ForceDelete(ns, pod string) {
	k.t.Helper()
	if err := k.c.Kube.CoreV1().Pods(ns).Delete(k.ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}); err != nil && !apierrors.IsNotFound(err) {
		k.t.Fatalf("testcluster: force-deleting pod %s/%s: %v", ns, pod, err)
	}
}

// Event records a core/v1 Event about the Pod as the kubelet does (source
// component kubelet, host = the Pod's node; involvedObject with the Pod's
// UID), which is what `kubectl describe` and `kubectl get events` show.
// eventType is corev1.EventTypeNormal or corev1.EventTypeWarning. Zero
// first/last mean now; count below 1 means 1.
func (k *Kubelet) Event(ns, pod, eventType, reason, message string, first, last time.Time, count int32) *corev1.Event {
	k.t.Helper()
	p := k.GetPod(ns, pod)
	return k.EventFor(p, "", eventType, reason, message, first, last, count)
}

// EventFor is Event for a given Pod object; fieldPath names a container
// ("spec.containers{sandbox}") or is empty for the Pod itself.
func (k *Kubelet) EventFor(p *corev1.Pod, fieldPath, eventType, reason, message string, first, last time.Time, count int32) *corev1.Event {
	k.t.Helper()
	ev := KubeletEvent(p, fieldPath, eventType, reason, message, first, last, count)
	out, err := k.c.Kube.CoreV1().Events(p.Namespace).Create(k.ctx, ev, metav1.CreateOptions{})
	if err != nil {
		k.t.Fatalf("testcluster: recording event %s for pod %s/%s: %v", reason, p.Namespace, p.Name, err)
	}
	return out
}

// KubeletEvent is the Event the kubelet writes about p (EventFor's), not yet
// written: what EventFor records as the kubelet and what a test forges as a
// tenant (ForgeEvent), so that the two differ only in who wrote them.
func KubeletEvent(p *corev1.Pod, fieldPath, eventType, reason, message string, first, last time.Time, count int32) *corev1.Event {
	now := time.Now()
	if first.IsZero() {
		first = now
	}
	if last.IsZero() {
		last = first
	}
	if count < 1 {
		count = 1
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			// kubelet names events <object>.<hex nanoseconds>
			Name:      fmt.Sprintf("%s.%x", p.Name, now.UnixNano()),
			Namespace: p.Namespace,
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name,
			UID: p.UID, ResourceVersion: p.ResourceVersion, FieldPath: fieldPath,
		},
		Reason: reason, Message: message, Type: eventType,
		Source:         corev1.EventSource{Component: "kubelet", Host: p.Spec.NodeName},
		FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(last), Count: count,
		ReportingController: "kubelet", ReportingInstance: p.Spec.NodeName,
	}
}

// EnsureNode creates the Node if it does not exist: Ready, InternalIP
// 127.0.0.1, and returns it.
func (k *Kubelet) EnsureNode(name string) *corev1.Node {
	k.t.Helper()
	nodes := k.c.Kube.CoreV1().Nodes()
	if n, err := nodes.Get(k.ctx, name, metav1.GetOptions{}); err == nil {
		return n
	}
	n, err := nodes.Create(k.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		n, err = nodes.Get(k.ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		k.t.Fatalf("testcluster: creating node %s: %v", name, err)
	}
	if len(n.Status.Conditions) > 0 {
		return n
	}
	return k.SetNodeCondition(name, corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
}

// SetNodeCondition sets one condition of a Node through nodes/status and
// fills the Node's addresses if they are empty.
func (k *Kubelet) SetNodeCondition(node string, condType corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) *corev1.Node {
	k.t.Helper()
	var out *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := k.c.Kube.CoreV1().Nodes().Get(k.ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cond := corev1.NodeCondition{Type: condType, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
		i := slices.IndexFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == condType })
		switch {
		case i < 0:
			n.Status.Conditions = append(n.Status.Conditions, cond)
		case n.Status.Conditions[i].Status == status:
			cond.LastTransitionTime = n.Status.Conditions[i].LastTransitionTime
			n.Status.Conditions[i] = cond
		default:
			n.Status.Conditions[i] = cond
		}
		if len(n.Status.Addresses) == 0 {
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		}
		out, err = k.c.Kube.CoreV1().Nodes().UpdateStatus(k.ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		k.t.Fatalf("testcluster: setting condition %s=%s on node %s: %v", condType, status, node, err)
	}
	return out
}

// SetNodeNotReady marks the Node Ready=Unknown the way the node lifecycle
// controller does when the kubelet stops posting status.
func (k *Kubelet) SetNodeNotReady(node string) *corev1.Node {
	k.t.Helper()
	k.EnsureNode(node)
	return k.SetNodeCondition(node, corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.")
}

// SetNodeMemoryPressure sets the Node's MemoryPressure condition.
func (k *Kubelet) SetNodeMemoryPressure(node string, pressure bool) *corev1.Node {
	k.t.Helper()
	k.EnsureNode(node)
	if pressure {
		return k.SetNodeCondition(node, corev1.NodeMemoryPressure, corev1.ConditionTrue, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available")
	}
	return k.SetNodeCondition(node, corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available")
}

// updateContainerStatus is UpdatePodStatus for a change to one container:
// mutate gets the Pod and that container's status entry (init: an init
// container's).
func (k *Kubelet) updateContainerStatus(ns, pod, container string, mutate func(p *corev1.Pod, s *corev1.ContainerStatus, init bool)) *corev1.Pod {
	k.t.Helper()
	return k.UpdatePodStatus(ns, pod, func(p *corev1.Pod) {
		s, init := k.statusOf(p, container)
		mutate(p, s, init)
	})
}

// statusOf finds (or adds) the status entry of a container by name; init
// reports whether it is an init container. Unknown names fail the test.
func (k *Kubelet) statusOf(p *corev1.Pod, name string) (s *corev1.ContainerStatus, init bool) {
	k.t.Helper()
	for _, c := range p.Spec.InitContainers {
		if c.Name == name {
			return containerStatus(&p.Status.InitContainerStatuses, c), true
		}
	}
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return containerStatus(&p.Status.ContainerStatuses, c), false
		}
	}
	k.t.Fatalf("testcluster: pod %s/%s has no container %q", p.Namespace, p.Name, name)
	return nil, false
}

// containerStatus returns the entry for c in list, adding a fresh one.
func containerStatus(list *[]corev1.ContainerStatus, c corev1.Container) *corev1.ContainerStatus {
	for i := range *list {
		if (*list)[i].Name == c.Name {
			return &(*list)[i]
		}
	}
	*list = append(*list, corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: "",
		ContainerID: "containerd://" + randomHex(32),
		State:       corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	})
	return &(*list)[len(*list)-1]
}

// endRun is the terminated state that ends s's current (or last) run at now
// with exitCode and reason; a run that never started is taken to have
// started at notStarted.
func endRun(s *corev1.ContainerStatus, exitCode int32, reason string, now, notStarted metav1.Time) *corev1.ContainerStateTerminated {
	started := notStarted
	switch {
	case s.State.Running != nil:
		started = s.State.Running.StartedAt
	case s.State.Terminated != nil:
		started = s.State.Terminated.StartedAt
	}
	return &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: reason, StartedAt: started, FinishedAt: now}
}

// setNotReady marks container (status s) not ready and not started, and the
// Pod's ContainersReady and Ready conditions False, as the kubelet does.
func setNotReady(p *corev1.Pod, s *corev1.ContainerStatus, container string) {
	s.Ready, s.Started = false, ptrTo(false)
	message := fmt.Sprintf("containers with unready status: [%s]", container)
	setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", message)
	setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", message)
}

func setPodCondition(p *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus, reason, message string) {
	now := metav1.Now()
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: now})
}

func ptrTo[T any](v T) *T { return &v }

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
