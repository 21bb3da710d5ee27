package sim

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
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
			InitContainers: []corev1.Container{engineContainer(corev1.Container{
				Name:    osv1.ContainerExecdInstaller,
				Image:   ImageExecd,
				Command: []string{"/bin/sh", "-c", "cp /execd /osv1.BootstrapPath.sh /opt/opensandbox/ && chmod 0755 /opt/opensandbox/*"},
			}, cpuMemory("50m", "32Mi"), cpuMemory("200m", "64Mi"))},
			Containers: []corev1.Container{engineContainer(corev1.Container{
				Name:    osv1.ContainerSandbox,
				Image:   sb.image,
				Command: cmd,
				Env: []corev1.EnvVar{
					{Name: "EXECD_PORT", Value: fmt.Sprint(osv1.ExecdPort)},
					{Name: "OPENSANDBOX_ID", Value: sb.id},
					{Name: "OPENSANDBOX_TENANT", Value: sb.tenant},
				},
				Ports: []corev1.ContainerPort{{Name: "execd", ContainerPort: osv1.ExecdPort, Protocol: corev1.ProtocolTCP}},
			}, cpuMemory("500m", "512Mi"), cpuMemory("2", "2Gi"))},
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

// podFor builds the Pod of sb named name on node: from the object's own
// template when sb is adopted, else the simulator's OpenSandbox layout.
func (s *Sim) podFor(sb *sandbox, name string, node int) *corev1.Pod {
	if sb.template == nil {
		return s.podTemplate(sb, name, node)
	}
	t := sb.template.DeepCopy()
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sb.ns, Labels: t.Labels, Annotations: t.Annotations},
		Spec:       t.Spec,
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	// What the API server defaults on a Pod whose template leaves it open.
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(30))
	}
	if pod.Spec.DNSPolicy == "" {
		pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	// The simulator's Pods are created bound, the scheduler's choice made.
	pod.Spec.NodeName = s.nodeName(node)
	return pod
}

func ptr[T any](v T) *T { return &v }

func intOrString(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }

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

func (s *Sim) newBatchSandbox(sb *sandbox) *unstructured.Unstructured {
	spec := map[string]any{"replicas": int64(1)}
	if sb.pool != nil {
		spec["poolRef"] = sb.pool.name
	} else {
		tmpl := s.podTemplate(sb, "", 0)
		// The template's metadata is all a Pod's metadata will hold besides
		// the controller's name and pod-index labels (it copies them verbatim).
		podSpec := toUnstructured(&tmpl.Spec)
		delete(podSpec, "nodeName")
		spec["template"] = map[string]any{"spec": podSpec}
		// Set* fail only where the path holds something other than a map;
		// spec is built right here.
		_ = unstructured.SetNestedStringMap(spec, s.sandboxLabels(sb), "template", "metadata", "labels")
	}
	if sb.hasTask() {
		_ = unstructured.SetNestedStringSlice(spec, sb.entrypoint, "taskTemplate", "spec", "process", "command")
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

// engineContainer completes c as the engine's template and the API server's
// defaults leave every container: the shared /opt/opensandbox volume, the
// given requests and limits, the default pull and termination-message policy.
func engineContainer(c corev1.Container, requests, limits corev1.ResourceList) corev1.Container {
	c.VolumeMounts = []corev1.VolumeMount{{Name: "opensandbox-bin", MountPath: "/opt/opensandbox"}}
	c.Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	return c
}

func cpuMemory(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

func (s *Sim) sandboxLabels(sb *sandbox) map[string]string {
	return map[string]string{
		osv1.LabelSandboxID:         sb.id,
		"opensandbox.io/tenant":     sb.tenant,
		"app.kubernetes.io/part-of": "sandbox-platform",
	}
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
	if sb.expire != nil {
		u.Object["spec"].(map[string]any)["shutdownTime"] = sb.expire.UTC().Format(time.RFC3339)
	}
	s.agentOwner(sb, u)
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
