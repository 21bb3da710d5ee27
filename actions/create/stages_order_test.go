package create

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A main container that ran and exited puts the create at Starting at
// least, whatever Pulling event is still listed: never "MAIN_CONTAINER_EXITED
// … last stage PullingImage". A pull that failed says so.
func TestFailureStagesArePossible(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sbx-0", UID: "u"},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: mainContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
		}}},
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "sbx", "namespace": "ns"}}}
	pulling := &corev1.Event{InvolvedObject: corev1.ObjectReference{Name: "sbx-0", UID: "u"}, Reason: "Pulling", Message: "Pulling image python"}
	o := observe(engineAgent, obj, []*corev1.Pod{pod}, []*corev1.Event{pulling}, true)
	if o.fail == nil || o.fail.code != CodeMainExited || stageRank[o.stage] < stageRank[StageStarting] {
		t.Fatalf("main container exited: fail %+v at stage %s", o.fail, o.stage)
	}

	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}
	o = observe(engineAgent, obj, []*corev1.Pod{pod}, []*corev1.Event{pulling}, true)
	if o.fail == nil || o.fail.code != CodeImagePull || !strings.HasPrefix(o.fail.message, "image pull failed: ") {
		t.Fatalf("a failed pull: %+v", o.fail)
	}
}
