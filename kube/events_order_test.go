package kube

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
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
