package sim

import (
	"encoding/json"
	"fmt"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Names exactly as the engines write them.
const (
	FinalizerImagePullHold = "sandscope.dev/sim-image-pull-in-progress" // stands in for the kubelet holding a deleting Pod

)

var tenants = []string{"team-rl", "team-eval", "team-agents", "team-notebooks"}

// keepAlive is the engine's default entrypoint when the caller gives none.
var keepAlive = []string{"tail", "-f", "/dev/null"}

// podTemplate builds the OpenSandbox Pod layout: init execd-installer, main
// `sandbox` whose command is osv1.BootstrapPath.sh plus the entrypoint.
func (s *Sim) podTemplate(sb *sandbox, name string, node int) *corev1.Pod {
	grace := int64(30)
	cmd := append([]string{osv1.BootstrapPath}, sb.entrypoint...)
	if sb.noBootstrap {
		// A template written without the engine's wrapper: execd never starts.
		cmd = append([]string(nil), sb.entrypoint...)
	}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: sb.ns,
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "opensandbox",
				"app.kubernetes.io/part-of":    "sandbox-platform",
				"opensandbox.io/tenant":        sb.tenant,
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container": osv1.ContainerSandbox,
				"opensandbox.io/created-by":               "opensandbox-server/v0.9.3",
				"opensandbox.io/request-id":               sb.requestID,
			},
		},
		Spec: corev1.PodSpec{
			NodeName:                      s.nodeName(node),
			RestartPolicy:                 sb.restartPolicy,
			TerminationGracePeriodSeconds: &grace,
			EnableServiceLinks:            ptr(false),
			InitContainers: []corev1.Container{{
				Name:    osv1.ContainerExecdInstaller,
				Image:   ImageExecd,
				Command: []string{"/bin/sh", "-c", "cp /execd /osv1.BootstrapPath.sh /opt/opensandbox/ && chmod 0755 /opt/opensandbox/*"},
				VolumeMounts: []corev1.VolumeMount{{
					Name: "opensandbox-bin", MountPath: "/opt/opensandbox",
				}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				ImagePullPolicy:          corev1.PullIfNotPresent,
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Containers: []corev1.Container{{
				Name:    osv1.ContainerSandbox,
				Image:   sb.image,
				Command: cmd,
				Env: []corev1.EnvVar{
					{Name: "EXECD_PORT", Value: fmt.Sprint(osv1.ExecdPort)},
					{Name: "OPENSANDBOX_ID", Value: sb.id},
					{Name: "OPENSANDBOX_TENANT", Value: sb.tenant},
				},
				Ports: []corev1.ContainerPort{{Name: "execd", ContainerPort: osv1.ExecdPort, Protocol: corev1.ProtocolTCP}},
				VolumeMounts: []corev1.VolumeMount{{
					Name: "opensandbox-bin", MountPath: "/opt/opensandbox",
				}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
				},
				ImagePullPolicy:          corev1.PullIfNotPresent,
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Volumes: []corev1.Volume{{
				Name: "opensandbox-bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
			}},
			Tolerations: []corev1.Toleration{{
				Key: "sandbox.opensandbox.io/dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
			}},
			DNSPolicy:     corev1.DNSClusterFirst,
			SchedulerName: corev1.DefaultSchedulerName,
		},
	}
	if sb.liveness {
		pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intOrString(8080), Scheme: corev1.URISchemeHTTP,
			}},
			PeriodSeconds: livenessPeriod, FailureThreshold: livenessThreshold, TimeoutSeconds: 1, SuccessThreshold: 1,
		}
	}
	return pod
}

func ptr[T any](v T) *T { return &v }

// --- Pod status as a kubelet writes it ---

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

func (s *Sim) containerIDIf(ok bool) string {
	if !ok {
		return ""
	}
	return s.containerID()
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

// --- custom resources ---

func toUnstructured(obj any) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		// Only called on types defined in this package and core/v1.
		panic(fmt.Sprintf("sim: converting %T: %v", obj, err))
	}
	return m
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// batchStatus is BatchSandbox status with every counter the real CRD requires.
type batchStatus struct {
	Replicas, Allocated, Ready                                     int32
	TaskRunning, TaskSucceed, TaskFailed, TaskPending, TaskUnknown int32
	Phase                                                          string
	Conditions                                                     []map[string]any
}

func (b batchStatus) object(generation int64) map[string]any {
	m := map[string]any{
		"replicas": int64(b.Replicas), "allocated": int64(b.Allocated), "ready": int64(b.Ready),
		"taskRunning": int64(b.TaskRunning), "taskSucceed": int64(b.TaskSucceed), "taskFailed": int64(b.TaskFailed),
		"taskPending": int64(b.TaskPending), "taskUnknown": int64(b.TaskUnknown),
		"observedGeneration": generation,
	}
	if b.Phase != "" {
		m["phase"] = b.Phase
	}
	if len(b.Conditions) > 0 {
		conds := make([]any, len(b.Conditions))
		for i, c := range b.Conditions {
			conds[i] = c
		}
		m["conditions"] = conds
	}
	return m
}

func condition(typ, status, reason, message string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": at.UTC().Format(time.RFC3339)}
}

func (s *Sim) newBatchSandbox(sb *sandbox) *unstructured.Unstructured {
	spec := map[string]any{"replicas": int64(1)}
	if sb.pool != nil {
		spec["poolRef"] = sb.pool.name
	} else {
		tmpl := s.podTemplate(sb, "", 0)
		// The template's metadata is all a Pod's metadata will hold besides
		// the controller's name and pod-index labels (it copies them verbatim).
		spec["template"] = map[string]any{
			"metadata": map[string]any{"labels": toStringMap(s.sandboxLabels(sb))},
			"spec":     toUnstructured(&tmpl.Spec),
		}
		delete(spec["template"].(map[string]any)["spec"].(map[string]any), "nodeName")
	}
	if sb.hasTask() {
		spec["taskTemplate"] = map[string]any{"spec": map[string]any{"process": map[string]any{"command": toAnySlice(sb.entrypoint)}}}
	}
	if sb.expire != nil {
		spec["expireTime"] = sb.expire.UTC().Format(time.RFC3339)
	}
	labels := s.sandboxLabels(sb)
	if sb.expire == nil {
		labels[osv1.LabelManualCleanup] = "true"
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": BatchSandboxGVR.GroupVersion().String(),
		"kind":       "BatchSandbox",
		"metadata": map[string]any{
			"name":      sb.name,
			"namespace": sb.ns,
		},
		"spec": spec,
	}}
	u.SetLabels(labels)
	// No endpoints annotation and no status: the controller writes both
	// once it has found a Pod.
	u.SetAnnotations(map[string]string{
		"opensandbox.io/created-by": "opensandbox-server/v0.9.3",
		"opensandbox.io/request-id": sb.requestID,
	})
	var fins []string
	if sb.hasTask() {
		fins = append(fins, osv1.FinalizerTaskCleanup) // only a task has something to clean up
	}
	if sb.pool != nil {
		fins = append(fins, osv1.FinalizerPoolAllocation)
	}
	u.SetFinalizers(fins)
	return u
}

// hasTask: the BatchSandbox carries a spec.taskTemplate (a pooled sandbox
// running the caller's command, or a sandbox written with one).
func (sb *sandbox) hasTask() bool {
	return sb.task || sb.entrypoint != nil && sb.pool != nil
}

func (s *Sim) sandboxLabels(sb *sandbox) map[string]string {
	return map[string]string{
		osv1.LabelSandboxID:         sb.id,
		"opensandbox.io/tenant":     sb.tenant,
		"app.kubernetes.io/part-of": "sandbox-platform",
	}
}

func toStringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toAnySlice(in []string) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}

func (s *Sim) newAgentSandbox(sb *sandbox) *unstructured.Unstructured {
	tmpl := s.podTemplate(sb, "", 0)
	podSpec := toUnstructured(&tmpl.Spec)
	delete(podSpec, "nodeName")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": AgentSandboxGVR(s.cfg.AgentVersion).GroupVersion().String(),
		"kind":       "Sandbox",
		"metadata":   map[string]any{"name": sb.name, "namespace": sb.ns},
		"spec": map[string]any{
			"podTemplate": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"opensandbox.io/tenant": sb.tenant}},
				"spec":     podSpec,
			},
		},
	}}
	if s.cfg.AgentVersion == "v1alpha1" {
		// Only the older version has spec.replicas.
		u.Object["spec"].(map[string]any)["replicas"] = int64(1)
	}
	u.SetLabels(map[string]string{"opensandbox.io/tenant": sb.tenant, "app.kubernetes.io/part-of": "agent-platform"})
	return u
}

func (s *Sim) newPool(p *pool) *unstructured.Unstructured {
	sb := &sandbox{ns: p.ns, image: ImagePython, entrypoint: []string{"python3", "/srv/worker.py"}, tenant: "shared", restartPolicy: corev1.RestartPolicyNever}
	tmpl := s.podTemplate(sb, "", 0)
	podSpec := toUnstructured(&tmpl.Spec)
	delete(podSpec, "nodeName")
	buf := int64(s.cfg.PoolBuffer)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": PoolGVR.GroupVersion().String(),
		"kind":       "Pool",
		"metadata":   map[string]any{"name": p.name, "namespace": p.ns},
		"spec": map[string]any{
			"capacitySpec": map[string]any{"bufferMin": buf, "bufferMax": buf + 2, "poolMin": buf, "poolMax": int64(200)},
			"template":     map[string]any{"metadata": map[string]any{"labels": map[string]any{"opensandbox.io/tenant": "shared"}}, "spec": podSpec},
		},
		"status": map[string]any{"total": int64(0), "allocated": int64(0), "available": int64(0), "revision": p.revision},
	}}
	return u
}
