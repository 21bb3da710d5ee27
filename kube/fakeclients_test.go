package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// Events of the same second come out in the order they were listed (the
// order they happened: an Event's name ends in its creation time), oldest
// first; sorting newest first and reversing flipped every tie.
func TestListEventsKeepsTiesInOrder(t *testing.T) {
	at := func(sec int) metav1.Time { return metav1.NewTime(time.Date(2026, 12, 1, 12, 0, sec, 0, time.UTC)) }
	var objs []corev1.Event
	for i, e := range []struct {
		reason string
		sec    int
	}{{"Created", 0}, {"Scheduled", 5}, {"Pulling", 5}, {"Pulled", 5}, {"Started", 7}} {
		objs = append(objs, corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("sbx-0.18%04d", i)},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "sbx-0"},
			Reason:         e.reason, FirstTimestamp: at(e.sec), LastTimestamp: at(e.sec), Count: 1,
		})
	}
	cs := fake.NewClientset()
	for i := range objs {
		if _, err := cs.CoreV1().Events("ns").Create(context.Background(), &objs[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := (&Clients{Kube: cs}).listEvents(context.Background(), "ns", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Reason)
	}
	if want := []string{"Created", "Scheduled", "Pulling", "Pulled", "Started"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if kept := newestEvents(slices.Clone(evs), 3); kept[0].Reason != "Pulling" || kept[2].Reason != "Started" {
		t.Fatalf("the newest 3 are not the last 3: %v", kept)
	}
}

// The same as TestInspectorYAMLOfADeletedSandbox over fake clients, so
// that it runs where no test API server is built: the object is gone, its
// Pod is shown.
func TestYAMLOfADeletedSandboxShowsItsPod(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sbx-0"}})
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{BatchSandboxGVR: "BatchSandboxList"})
	in := NewInspector(&Clients{Kube: cs, Dynamic: dyn}, nil)
	sb := &model.Sandbox{Key: "bsbx/ns/sbx", Meta: &model.ObjectMeta{Namespace: "ns", Name: "sbx"}, Slots: []model.Slot{{PodName: "sbx-0"}}}
	out, err := in.YAML(context.Background(), sb)
	if err != nil {
		t.Fatalf("YAML of a deleted sandbox: %v", err)
	}
	if !strings.Contains(out, "the sandbox object is gone") || !strings.Contains(out, "name: sbx-0") {
		t.Fatalf("YAML:\n%s", out)
	}
}

// ForceDelete removes the sandbox object and its Pods, the Pods with no
// grace period (fake clients: the calls only).
func TestForceDeleteRemovesObjectAndPods(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sbx-0"}})
	obj := testcluster.BatchSandbox("sbx", nil)
	obj.SetNamespace("ns")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{BatchSandboxGVR: "BatchSandboxList"}, obj)
	in := NewInspector(&Clients{Kube: cs, Dynamic: dyn}, nil)
	sb := &model.Sandbox{Key: "bsbx/ns/sbx", Meta: &model.ObjectMeta{Namespace: "ns", Name: "sbx"}, Slots: []model.Slot{{PodName: "sbx-0"}}}
	if err := in.ForceDelete(context.Background(), sb); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(BatchSandboxGVR).Namespace("ns").Get(context.Background(), "sbx", metav1.GetOptions{}); err == nil {
		t.Error("the object is still there")
	}
	if _, err := cs.CoreV1().Pods("ns").Get(context.Background(), "sbx-0", metav1.GetOptions{}); err == nil {
		t.Error("the Pod is still there")
	}
	var grace *int64
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			grace = d.DeleteOptions.GracePeriodSeconds
		}
	}
	if grace == nil || *grace != 0 {
		t.Errorf("the Pod was deleted with grace %v, want 0", grace)
	}
}
