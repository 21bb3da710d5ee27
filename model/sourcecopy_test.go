package model

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fullObjectMeta sets every field of ObjectMeta, for the fixtures below.
func fullObjectMeta(name, finalizer string) ObjectMeta {
	deleted := metav1.NewTime(time.Date(2026, 11, 29, 17, 30, 0, 0, time.UTC))
	m := ObjectMeta{Name: name, Namespace: "team-rl", UID: "6f1c",
		DeletionTimestamp: &deleted,
		Labels:            LabelsFrom(map[string]string{"app": "rl"}),
		OwnerReferences:   []OwnerReference{{APIVersion: "v1", Kind: "Owner", Name: "o"}}}
	m.SetCreated(time.Date(2026, 11, 29, 17, 20, 0, 0, time.UTC))
	m.SetFinalizers([]string{finalizer})
	return m
}

// fullBatchSandbox sets every field of a BatchSandbox and of its rare part,
// so that a copy of it has every pointer and slice to get wrong.
func fullBatchSandbox() *BatchSandbox {
	expire := time.Date(2026, 11, 29, 18, 20, 0, 0, time.UTC)
	noticed := time.Date(2026, 11, 29, 17, 21, 0, 0, time.UTC)
	return &BatchSandbox{
		ObjectMeta:      fullObjectMeta("sbx-a", "pool.sandbox.opensandbox.io/pool-allocation"),
		ResourceVersion: "812", Replicas: 1, InitialEventsEnd: true, ExpireTime: &expire,
		Phase:     PhaseSucceed,
		Endpoints: []string{"10.0.3.7"},
		readyAt:   noticed.UnixNano(),
		rare: &rareBatchSandbox{poolRef: "pool-a", allocatedPods: []string{"pool-a-x1"},
			notices: []Notice{{Code: CodeBadAnnotation, Severity: SeverityWarning, Message: "m",
				Evidence: []Evidence{{Kind: Observed, Text: "t", At: &noticed}}}},
			task:       &BatchTask{HasTemplate: true, Command: []string{"python", "-m", "eval"}, Counts: TaskCounts{Failed: 1}},
			readySince: &noticed},
	}
}

// The informer hands out copies of cached objects; a copy must share
// nothing that can be written through, the rare part included.
func TestBatchSandboxDeepCopySharesNothing(t *testing.T) {
	b := fullBatchSandbox()
	checkCopySharesNothing(t, "BatchSandbox", b, b.DeepCopyObject(), reflect.ValueOf(*b), reflect.ValueOf(*b.rare))
}

// checkCopySharesNothing checks that the copy equals orig and shares no
// memory with it. filled are orig's structs whose every field the fixture
// must set: a field left empty would leave its copying untested.
func checkCopySharesNothing(t *testing.T, name string, orig, copy any, filled ...reflect.Value) {
	t.Helper()
	for _, v := range filled {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("the fixture leaves %s.%s empty, so its copy goes untested", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
	if !reflect.DeepEqual(orig, copy) {
		t.Fatalf("copy differs:\n%+v\n%+v", orig, copy)
	}
	for _, where := range sharedMemory(reflect.ValueOf(orig), reflect.ValueOf(copy), name) {
		t.Errorf("the copy shares %s with the original", where)
	}
}

// A BatchSandbox without rare fields copies without a rare part.
func TestBatchSandboxDeepCopyWithoutRare(t *testing.T) {
	b := fullBatchSandbox()
	b.rare = nil
	if c := b.DeepCopyObject().(*BatchSandbox); c.rare != nil || !reflect.DeepEqual(b, c) {
		t.Fatalf("copy differs:\n%+v\n%+v", b, c)
	}
}

// sharedMemory lists the places (as paths from path) where b points at
// memory a points at: a pointer, a slice's backing array or a map they have
// in common. Strings, time.Time (its *Location is immutable) and Labels
// (read only, shared by design) may be shared and are not looked into.
func sharedMemory(a, b reflect.Value, path string) []string {
	switch a.Type() {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[Labels]():
		return nil
	}
	var out []string
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Kind() == reflect.Pointer && a.Pointer() == b.Pointer() {
			return []string{path}
		}
		out = sharedMemory(a.Elem(), b.Elem(), path)
	case reflect.Map:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return []string{path}
		}
		// The model's cached types have no maps to look into.
	case reflect.Slice:
		if a.Len() == 0 || b.Len() == 0 {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			return []string{path}
		}
		for i := range min(a.Len(), b.Len()) {
			out = append(out, sharedMemory(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]")...)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			out = append(out, sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
		}
	}
	return out
}

// fullPod sets every field of a Pod, of its containers and statuses and of
// its rare part, so that a copy of it has every pointer and slice to get
// wrong.
func fullPod() *Pod {
	started := metav1.NewTime(time.Date(2026, 11, 29, 17, 21, 0, 0, time.UTC))
	grace, termGrace := int64(30), int64(1)<<40 // one an int32 cannot hold: kept with the rare fields
	limit := resource.MustParse("512Mi")
	status := ContainerStatus{Name: "sandbox", Image: "python:3.12", ImageID: "sha256:ab",
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		LastTerminationState: TerminationState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
		Ready:                true, RestartCount: 2}
	return &Pod{
		ObjectMeta: fullObjectMeta("sbx-a-0", "f"),
		// Both grace forms are set, as both condition forms below.
		Spec: PodSpec{NodeName: "node-1", HostNetwork: true, graceSet: true, grace: 60,
			Containers: []Container{{Name: "sandbox", Image: "python:3.12", Command: []string{"/bin/sh"}, Args: []string{"-c", "x"},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 5},
				MemoryLimit:   &limit}}},
		Status: PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", startTime: started.UnixNano(),
			// Both start time forms are set, and both the single condition and the list of several are set, so
			// that the copy is checked for each (a built Pod has one or the
			// other).
			cond: 1, condAt: started.UnixNano(),
			ContainerStatuses: []ContainerStatus{status},
			rare: &rarePodStatus{reason: "Evicted", message: "m", podIPs: []corev1.PodIP{{IP: "10.0.0.7"}, {IP: "fd00::7"}},
				initContainerStatuses: []ContainerStatus{status}, deletionGracePeriodSeconds: &grace, terminationGrace: &termGrace, startTime: &started,
				conditions: []PodCondition{{Type: corev1.PodReady}, {Type: corev1.DisruptionTarget}}}},
	}
}

// The reflector's list hands Pods on as runtime.Objects; a copy must share
// nothing that can be written through.
func TestPodDeepCopySharesNothing(t *testing.T) {
	p := fullPod()
	checkCopySharesNothing(t, "Pod", p, p.DeepCopyObject(), reflect.ValueOf(*p), reflect.ValueOf(p.Spec), reflect.ValueOf(p.Spec.Containers[0]),
		reflect.ValueOf(p.Status), reflect.ValueOf(p.Status.ContainerStatuses[0]), reflect.ValueOf(*p.Status.rare))
}
