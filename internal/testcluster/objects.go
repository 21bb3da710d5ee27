package testcluster

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Names of OpenSandbox's Pod layout.
const ()

// SandboxPod builds a Pod laid out like an OpenSandbox sandbox Pod: init
// container execd-installer copying into volume opensandbox-bin, main
// container "sandbox" with command ["/opt/opensandbox/bootstrap.sh",
// entrypoint...] and no args, label opensandbox.io/id=name. restartPolicy
// is left at the API default (Always) so Restart works; set it to Never
// (as OpenSandbox's example template does) when a test needs that. Change
// the returned Pod freely before CreatePod.
func SandboxPod(name, image string, entrypoint ...string) *corev1.Pod {
	if image == "" {
		image = "python:3.12-slim"
	}
	if len(entrypoint) == 0 {
		entrypoint = []string{"tail", "-f", "/dev/null"}
	}
	mount := []corev1.VolumeMount{{Name: osv1.VolumeBin, MountPath: osv1.BinMountPath}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{osv1.LabelSandboxID: name}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{
				Name:         osv1.ContainerExecdInstaller,
				Image:        "opensandbox/execd:v1.0.0",
				Command:      []string{"/bin/sh", "-c", "cp ./execd ./bootstrap.sh " + osv1.BinMountPath + "/"},
				VolumeMounts: mount,
			}},
			Containers: []corev1.Container{{
				Name:         osv1.ContainerSandbox,
				Image:        image,
				Command:      append([]string{osv1.BootstrapPath}, entrypoint...),
				VolumeMounts: mount,
			}},
			Volumes: []corev1.Volume{{Name: osv1.VolumeBin, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

// WithLivenessProbe adds an exec liveness probe to the sandbox container.
func WithLivenessProbe(pod *corev1.Pod, command ...string) *corev1.Pod {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == osv1.ContainerSandbox {
			pod.Spec.Containers[i].LivenessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: command}},
				PeriodSeconds: 10, FailureThreshold: 3,
			}
		}
	}
	return pod
}

// OwnedByBatchSandbox makes pod the index-th Pod of a BatchSandbox, as its
// controller creates them: controller ownerReference kind BatchSandbox,
// labels batch-sandbox.sandbox.opensandbox.io/name and /pod-index.
func OwnedByBatchSandbox(pod *corev1.Pod, bsbx *unstructured.Unstructured, index int) *corev1.Pod {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[osv1.LabelBatchSandboxName] = bsbx.GetName()
	pod.Labels[osv1.LabelPodIndex] = strconv.Itoa(index)
	yes := true
	pod.OwnerReferences = append(pod.OwnerReferences, metav1.OwnerReference{
		APIVersion: BatchSandboxGVR.GroupVersion().String(), Kind: "BatchSandbox",
		Name: bsbx.GetName(), UID: bsbx.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes,
	})
	return pod
}

// BatchSandbox builds a non-pooled BatchSandbox (replicas 1, label
// opensandbox.io/id its name) whose template is pod's spec and labels, with
// a keep-alive or given entrypoint; with no pod, it has no template, as a
// test that plays the controller itself needs no more. Valid for both the
// minimal and the upstream CRD.
func BatchSandbox(name string, pod *corev1.Pod) *unstructured.Unstructured {
	spec := map[string]any{"replicas": int64(1)}
	if pod != nil {
		spec["template"] = podTemplate(pod)
	}
	return batchSandbox(name, spec)
}

// PooledBatchSandbox builds a BatchSandbox that takes its Pod from a Pool.
func PooledBatchSandbox(name, pool string) *unstructured.Unstructured {
	return batchSandbox(name, map[string]any{"replicas": int64(1), "poolRef": pool})
}

func batchSandbox(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": BatchSandboxGVR.GroupVersion().String(),
		"kind":       "BatchSandbox",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{osv1.LabelSandboxID: name}},
		"spec":       spec,
	}}
}

// Pool builds a Pool with a capacity spec and pod template.
func Pool(name string, pod *corev1.Pod, bufferMin, bufferMax, poolMin, poolMax int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": PoolGVR.GroupVersion().String(),
		"kind":       "Pool",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"template":     podTemplate(pod),
			"capacitySpec": map[string]any{"bufferMin": bufferMin, "bufferMax": bufferMax, "poolMin": poolMin, "poolMax": poolMax},
		},
	}}
}

// AgentSandbox builds an agents.x-k8s.io/v1beta1 Sandbox with pod's spec.
func AgentSandbox(name string, pod *corev1.Pod) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": AgentSandboxGVR.GroupVersion().String(),
		"kind":       "Sandbox",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"podTemplate": podTemplate(pod)},
	}}
}

// SandboxTemplate builds an extensions.agents.x-k8s.io/v1beta1
// SandboxTemplate with pod's spec.
func SandboxTemplate(name string, pod *corev1.Pod) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": SandboxTemplateGVR.GroupVersion().String(),
		"kind":       "SandboxTemplate",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"podTemplate": podTemplate(pod)},
	}}
}

// SandboxWarmPool builds a SandboxWarmPool of replicas Sandboxes made from template.
func SandboxWarmPool(name, template string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": SandboxWarmPoolGVR.GroupVersion().String(),
		"kind":       "SandboxWarmPool",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"replicas": replicas, "sandboxTemplateRef": map[string]any{"name": template}},
	}}
}

// SandboxClaim builds a SandboxClaim on warm pool pool.
func SandboxClaim(name, pool string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": SandboxClaimGVR.GroupVersion().String(),
		"kind":       "SandboxClaim",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"warmPoolRef": map[string]any{"name": pool}},
	}}
}

// podTemplate is pod's labels and spec, as an engine's pod template holds them.
func podTemplate(pod *corev1.Pod) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": toAnyMap(pod.Labels)},
		"spec":     toUnstructured(pod.Spec),
	}
}

func toUnstructured(spec corev1.PodSpec) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		panic("testcluster: converting a PodSpec: " + err.Error()) // a PodSpec always converts
	}
	return m
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// PoolPod builds a warm Pod of Pool pool as OpenSandbox's pool controller
// makes it: a sandbox Pod owned by the Pool, with the pool's labels and no
// opensandbox.io/id label (a BatchSandbox it is allocated to has that).
func PoolPod(name, pool string) *corev1.Pod {
	p := SandboxPod(name, "")
	p.Labels = map[string]string{osv1.LabelPoolName: pool, "sandbox.opensandbox.io/pool-revision": "1"}
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: PoolGVR.GroupVersion().String(), Kind: "Pool",
		Name: pool, UID: types.UID("pool-uid-" + pool), Controller: &yes}}
	return p
}
