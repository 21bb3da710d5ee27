package demo

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sandscope/sandscope/demo/sim"
)

// drain reads the events already queued on w.
func drain(w watch.Interface) []watch.Event {
	var evs []watch.Event
	for {
		select {
		case e := <-w.ResultChan():
			evs = append(evs, e)
		default:
			return evs
		}
	}
}

// TestWatchReplaysDeletionAfterList is an informer's list then watch with a
// Pod deleted in between: as from a real API server's watch cache, the watch
// from the list's resourceVersion reports the deletion (the tracker alone
// forgot it, and the informer kept a deleted Pod as live).
func TestWatchReplaysDeletionAfterList(t *testing.T) {
	ctx := t.Context()
	c, _ := newClients("sandboxes")
	pods := c.Kube.CoreV1().Pods("sandboxes")
	for _, name := range []string{"gone", "stays", "again"} {
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name + "-1")}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gone", "again"} {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// "again" is re-created under its name: replayed as added, never deleted.
	if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "again", UID: "uid-again-2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.Kube.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	for _, e := range drain(w) {
		m, _ := e.Object.(*corev1.Pod)
		got = append(got, string(e.Type)+" "+m.Name+" "+string(m.UID))
	}
	want := map[string]bool{"DELETED gone uid-gone-1": true, "ADDED again uid-again-2": true}
	if len(got) != len(want) || !want[got[0]] || !want[got[1]] {
		t.Errorf("events from the list's version %q = %q, want %v", list.ResourceVersion, got, want)
	}
}

// TestDynamicWatchReplaysDeletionAfterList is the same for the engines'
// resources, served by the dynamic fake.
func TestDynamicWatchReplaysDeletionAfterList(t *testing.T) {
	ctx := t.Context()
	c, _ := newClients("sandboxes")
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sandboxes"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := c.Dynamic.Resource(sim.BatchSandboxGVR).Namespace("sandboxes")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sim.BatchSandboxGVR.GroupVersion().String(), "kind": "BatchSandbox",
		"metadata": map[string]any{"name": "b1", "namespace": "sandboxes"}}}
	if _, err := res.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Delete(ctx, "b1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	evs := drain(w)
	if len(evs) != 1 || evs[0].Type != watch.Deleted {
		t.Errorf("events from the list's version %q = %v, want one DELETED b1", list.GetResourceVersion(), evs)
	}
}

// Every deleting Pod of the demo reads as the API server writes one: its
// deletionTimestamp is the end of the grace period it was granted, so the
// request (that minus deletionGracePeriodSeconds) comes after its
// creation. The held Pods of the pile-up were stamped with the request
// time, and read as deleted before they were created.
func TestDemoDeletionsAfterCreation(t *testing.T) {
	d, err := Start(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := d.Clients.Kube.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deleting := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			continue
		}
		deleting++
		if p.DeletionGracePeriodSeconds == nil {
			t.Errorf("%s/%s is deleting without deletionGracePeriodSeconds", p.Namespace, p.Name)
			continue
		}
		requested := p.DeletionTimestamp.Add(-time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
		if requested.Before(p.CreationTimestamp.Time) {
			t.Errorf("%s/%s: deletion requested %s, before its creation %s", p.Namespace, p.Name, requested, p.CreationTimestamp)
		}
	}
	if deleting == 0 {
		t.Fatal("no Pod of the demo is deleting: the pile-up is gone and this test checks nothing")
	}
}
