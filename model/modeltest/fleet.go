package modeltest

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// FleetPod is the i-th Pod of a benchmark fleet: a realistic OpenSandbox
// Pod as the API server sends it (annotations, managedFields, env, init
// container), owned by BatchSandbox FleetOwner(i), at FleetIP(i).
func FleetPod(i int) *corev1.Pod {
	name := FleetOwner(i) + "-0"
	owner := name[:len(name)-2] // a slice of name: a string of its own would add to the heap per sandbox measured
	yes := true
	start := metav1.NewTime(T0)
	grace := int64(30)
	env := make([]corev1.EnvVar, 12)
	for j := range env {
		env[j] = corev1.EnvVar{Name: fmt.Sprintf("SANDBOX_ENV_%d", j), Value: "some-value-of-moderate-length"}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "opensandbox", UID: types.UID(fmt.Sprintf("8d7e6f5a-4b3c-2d1e-0f9a-%012d", i)),
			ResourceVersion:   "123456789",
			CreationTimestamp: start,
			Labels: map[string]string{osv1.LabelSandboxID: owner, osv1.LabelBatchSandboxName: owner, osv1.LabelPodIndex: "0",
				"user.example/team": "rl", "opensandbox.io/manual-cleanup": "true"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(make([]byte, 2048))},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox",
				Name: owner, UID: types.UID("uid-" + owner), Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: "Update"}, {Manager: "controller", Operation: "Update"}},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", i%200), TerminationGracePeriodSeconds: &grace, RestartPolicy: corev1.RestartPolicyNever,
			Volumes: []corev1.Volume{{Name: "opensandbox-bin"}, {Name: "kube-api-access"}},
			InitContainers: []corev1.Container{{Name: "execd-installer", Image: "opensandbox/execd:v1.0.4",
				Command: []string{"/bin/sh", "-c", "cp /execd /bootstrap.sh /opt/opensandbox/"}}},
			Containers: []corev1.Container{{Name: osv1.ContainerSandbox, Image: "registry.example/rl-env:2026.11",
				Command: []string{osv1.BootstrapPath, "tail", "-f", "/dev/null"}, Env: env,
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: FleetIP(i), PodIPs: []corev1.PodIP{{IP: FleetIP(i)}}, StartTime: &start,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}, {Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "execd-installer", Image: "opensandbox/execd:v1.0.4",
				ImageID: "docker-pullable://opensandbox/execd@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				State:   corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: osv1.ContainerSandbox, Image: "registry.example/rl-env:2026.11", Ready: true,
				ImageID: "docker-pullable://registry.example/rl-env@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
				State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}},
		},
	}
}

// FleetOwner is the name of the BatchSandbox of the i-th Pod of a
// benchmark fleet, a UUID as OpenSandbox names them.
func FleetOwner(i int) string { return fmt.Sprintf("3f2b9c1e-5d4a-4e8f-9a7b-%012d", i) }

// FleetIP is the address of the i-th Pod of a benchmark fleet.
func FleetIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 8+i/65536, (i/256)%256, i%256) }

// UnstructuredBatchSandbox is a non-pooled BatchSandbox in phase Succeed as
// the dynamic client reads it (managedFields, a large last-applied
// annotation), with the annotations ann added.
func UnstructuredBatchSandbox(name string, ann map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "sandbox.opensandbox.io/v1alpha1",
		"kind":       "BatchSandbox",
		"metadata": map[string]interface{}{
			"name": name, "namespace": Namespace, "uid": "uid-" + name,
			"creationTimestamp": "2026-11-29T17:24:05Z",
			"labels":            map[string]interface{}{osv1.LabelSandboxID: name},
			"managedFields":     []interface{}{map[string]interface{}{"manager": "kubectl"}},
		},
		"spec": map[string]interface{}{
			"replicas":   int64(1),
			"expireTime": "2026-11-29T18:24:05Z",
			"template": map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{
				map[string]interface{}{"name": "egress", "image": "egress:1"},
				map[string]interface{}{"name": "sandbox", "image": "python:3.12", "command": []interface{}{osv1.BootstrapPath, "tail", "-f", "/dev/null"}},
			}}},
		},
		"status": map[string]interface{}{
			"phase": "Succeed", "replicas": int64(1), "allocated": int64(1), "ready": int64(1),
			"conditions": []interface{}{map[string]interface{}{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-29T17:24:10Z"}},
		},
	}}
	a := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 4096)}
	for k, v := range ann {
		a[k] = v
	}
	u.SetAnnotations(a)
	return u
}
