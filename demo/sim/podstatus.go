package sim

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod status as a kubelet writes it, step by step.

// containerID is a new container's runtime ID.
func (s *Sim) containerID() string { return "containerd://" + s.hex(64) }

func podCondition(t corev1.PodConditionType, ok bool, at time.Time) corev1.PodCondition {
	st := corev1.ConditionFalse
	if ok {
		st = corev1.ConditionTrue
	}
	return corev1.PodCondition{Type: t, Status: st, LastTransitionTime: metav1.NewTime(at)}
}

func setCondition(p *corev1.Pod, c corev1.PodCondition) {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == c.Type {
			if p.Status.Conditions[i].Status != c.Status {
				p.Status.Conditions[i] = c
			}
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, c)
}

// statusScheduled: the Pod is on its node with an IP; the first init
// container runs (or waits, pulling) and the main container waits in
// PodInitializing. A Pod without init containers is initialized at once and
// its main container waits in ContainerCreating. The statuses follow the
// Pod's spec, so a Pod made from someone else's template (an adopted
// sandbox) reads right too.
func (s *Sim) statusScheduled(p *corev1.Pod, ip, hostIP string, initPulling bool) {
	now := s.now
	p.Status.Phase = corev1.PodPending
	p.Status.HostIP = hostIP
	p.Status.HostIPs = []corev1.HostIP{{IP: hostIP}}
	p.Status.PodIP = ip
	p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	p.Status.StartTime = ptr(metav1.NewTime(now))
	if p.Status.QOSClass == "" { // set (and immutable) once a real API server has the Pod
		p.Status.QOSClass = qosClass(&p.Spec)
	}
	setCondition(p, podCondition(corev1.PodScheduled, true, now))
	setCondition(p, podCondition(corev1.PodReadyToStartContainers, true, now))
	setCondition(p, podCondition(corev1.PodInitialized, len(p.Spec.InitContainers) == 0, now))
	setCondition(p, podCondition(corev1.ContainersReady, false, now))
	setCondition(p, podCondition(corev1.PodReady, false, now))
	p.Status.InitContainerStatuses = nil
	for i, c := range p.Spec.InitContainers {
		running := i == 0 && !initPulling
		st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: imageID(c.Image), Started: ptr(running),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
		if running {
			st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}
			st.ContainerID = s.containerID()
		}
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, st)
	}
	mainWaiting := "PodInitializing"
	if len(p.Spec.InitContainers) == 0 {
		mainWaiting = "ContainerCreating"
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image, Started: ptr(false),
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: mainWaiting}},
	}}
}

// qosClass is the QoS class an API server gives a Pod with spec: no
// requests or limits anywhere is BestEffort, CPU and memory limits equal to
// the requests in every container is Guaranteed, anything else Burstable.
func qosClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	limited, guaranteed := false, true
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		if len(c.Resources.Requests)+len(c.Resources.Limits) > 0 {
			limited = true
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, ok := c.Resources.Limits[r]
			if q, has := c.Resources.Requests[r]; !ok || (has && q.Cmp(l) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !limited:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// statusInitDone finishes the init containers.
func (s *Sim) statusInitDone(p *corev1.Pod) {
	now := s.now
	for i := range p.Status.InitContainerStatuses {
		ics := &p.Status.InitContainerStatuses[i]
		if ics.State.Terminated != nil {
			continue
		}
		started := metav1.NewTime(now.Add(-400 * time.Millisecond))
		if ics.State.Running != nil {
			started = ics.State.Running.StartedAt
		}
		if ics.ContainerID == "" {
			ics.ContainerID = s.containerID()
		}
		ics.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: metav1.NewTime(now), ContainerID: ics.ContainerID,
		}}
		ics.Ready, ics.Started = true, ptr(false)
	}
	setCondition(p, podCondition(corev1.PodInitialized, true, now))
}

// statusRunning: init done, main container running and ready.
func (s *Sim) statusRunning(p *corev1.Pod) {
	now := s.now
	s.statusInitDone(p)
	p.Status.Phase = corev1.PodRunning
	cs := &p.Status.ContainerStatuses[0]
	cs.ImageID = imageID(cs.Image)
	cs.ContainerID = s.containerID()
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}
	cs.Ready, cs.Started = true, ptr(true)
	setCondition(p, podCondition(corev1.ContainersReady, true, now))
	setCondition(p, podCondition(corev1.PodReady, true, now))
}

// statusWaiting: init done, main container waiting with reason (image pull failures).
func (s *Sim) statusWaiting(p *corev1.Pod, reason, message string) {
	s.statusInitDone(p)
	cs := &p.Status.ContainerStatuses[0]
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
	cs.Ready, cs.Started = false, ptr(false)
}

// statusTerminated ends the main container; with terminal the Pod phase
// becomes Succeeded (exit 0) or Failed, else it stays Running and not ready.
func (s *Sim) statusTerminated(p *corev1.Pod, exit int32, reason string, terminal bool) {
	now := s.now
	cs := &p.Status.ContainerStatuses[0]
	started := metav1.NewTime(now)
	if cs.State.Running != nil {
		started = cs.State.Running.StartedAt
	}
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: exit, Reason: reason, StartedAt: started, FinishedAt: metav1.NewTime(now), ContainerID: cs.ContainerID,
	}}
	cs.Ready, cs.Started = false, ptr(false)
	setCondition(p, podCondition(corev1.ContainersReady, false, now))
	setCondition(p, podCondition(corev1.PodReady, false, now))
	if terminal {
		p.Status.Phase = corev1.PodSucceeded
		if exit != 0 {
			p.Status.Phase = corev1.PodFailed
		}
	}
}

// statusRestarted: the terminated main container becomes lastState and a
// new one runs (restartCount++), as after an OOM or liveness kill.
func (s *Sim) statusRestarted(p *corev1.Pod) {
	now := s.now
	cs := &p.Status.ContainerStatuses[0]
	cs.LastTerminationState = corev1.ContainerState{Terminated: cs.State.Terminated}
	cs.RestartCount++
	cs.ContainerID = s.containerID()
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}
	cs.Ready, cs.Started = true, ptr(true)
	p.Status.Phase = corev1.PodRunning
	setCondition(p, podCondition(corev1.ContainersReady, true, now))
	setCondition(p, podCondition(corev1.PodReady, true, now))
}

// podReady reads the Pod's Ready condition.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
