package codec

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// Objects read over the wire from clients without a server (the demo) are
// what the stock converters make of them once a server's encoding has cut
// their times to what it keeps: the simulator's Pods and BatchSandboxes,
// listed and then watched.
func TestOverWireMatchesStockConverters(t *testing.T) {
	t.Parallel()
	kc := kubefake.NewSimpleClientset()
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{sim.BatchSandboxGVR: "BatchSandboxList"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "wire"
	if _, err := sim.Load(ctx, kc, dc, sim.LoadOptions{N: 30, Namespace: ns, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	lists := mem.NewStringLists()
	// As kube's fleet watch lists and watches them through these clients.
	typedPods := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return kc.CoreV1().Pods(ns).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return kc.CoreV1().Pods(ns).Watch(ctx, opts)
		},
	}
	bsbxClient := dc.Resource(osv1.BatchSandboxes).Namespace(ns)
	typedBSBX := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return bsbxClient.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return bsbxClient.Watch(ctx, opts)
		},
	}
	pods, bsbxs := PodsOverWire(typedPods, kc, lists), BatchSandboxesOverWire(typedBSBX, dc, lists)

	// Lists: every item, in order.
	wantPods, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gotPods := listOverWire[*model.Pod](t, pods, len(wantPods.Items))
	for i := range wantPods.Items {
		if want := model.SlimPodSharing(asSent(t, &wantPods.Items[i]), lists); !reflect.DeepEqual(gotPods.Items[i], want) {
			t.Fatalf("Pod %d over the wire differs from SlimPodSharing:\n%s", i, podDiff(want, gotPods.Items[i]))
		}
	}
	wantBSBX, err := dc.Resource(osv1.BatchSandboxes).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gotBSBX := listOverWire[*model.BatchSandbox](t, bsbxs, len(wantBSBX.Items))
	for i := range wantBSBX.Items {
		checkBatchSandbox(t, "listed", gotBSBX.Items[i], &wantBSBX.Items[i])
	}

	// Watches: an update of each, as events.
	podWatch, err := pods.(cache.ListerWatcherWithContext).WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: gotPods.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer podWatch.Stop()
	changed := wantPods.Items[0].DeepCopy()
	changed.Status.PodIP = "10.9.9.9"
	if _, err := kc.CoreV1().Pods(ns).UpdateStatus(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, podWatch)
	if got, ok := ev.Object.(*VersionedPod); ev.Type != watch.Modified || !ok || !reflect.DeepEqual(got.Pod, model.SlimPodSharing(asSent(t, changed), lists)) {
		t.Fatalf("Pod watch event %s %#v, want MODIFIED with what SlimPodSharing makes of the update", ev.Type, ev.Object)
	}
	bsbxWatch, err := bsbxs.(cache.ListerWatcherWithContext).WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: gotBSBX.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer bsbxWatch.Stop()
	deleted := &wantBSBX.Items[0]
	if err := dc.Resource(osv1.BatchSandboxes).Namespace(ns).Delete(ctx, deleted.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, bsbxWatch)
	got, ok := ev.Object.(*model.BatchSandbox)
	if ev.Type != watch.Deleted || !ok {
		t.Fatalf("BatchSandbox watch event %s %T, want DELETED with a *model.BatchSandbox", ev.Type, ev.Object)
	}
	checkBatchSandbox(t, "deleted", got, deleted)
}

// listOverWire lists through lw, expecting n items, more than none.
func listOverWire[T runtime.Object](t *testing.T, lw cache.ListerWatcher, n int) *modelList[T] {
	t.Helper()
	obj, err := lw.(cache.ListerWatcherWithContext).ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, ok := obj.(*modelList[T])
	if !ok {
		t.Fatalf("listed a %T", obj)
	}
	if len(list.Items) != n || n == 0 {
		t.Fatalf("listed %d items over the wire, want %d", len(list.Items), n)
	}
	return list
}

// checkBatchSandbox compares a BatchSandbox read over the wire with what the
// stock converter makes of the object, as the fleet is handed them.
func checkBatchSandbox(t *testing.T, what string, got *model.BatchSandbox, u *unstructured.Unstructured) {
	t.Helper()
	if got.ResourceVersion != u.GetResourceVersion() {
		t.Errorf("%s %s: resourceVersion %q, want %q", what, u.GetName(), got.ResourceVersion, u.GetResourceVersion())
	}
	slim, _ := SlimBatchSandbox(got.DeepCopyObject())
	if want := model.BatchSandboxFromUnstructured(u); !reflect.DeepEqual(slim, want) {
		t.Fatalf("%s %s over the wire differs from BatchSandboxFromUnstructured:\nwire:  %+v\nstock: %+v", what, u.GetName(), slim, want)
	}
}

// asSent is p as a client decodes it from the server's protobuf.
func asSent(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out := &corev1.Pod{}
	if err := out.Unmarshal(marshalPod(t, p)); err != nil {
		t.Fatal(err)
	}
	return out
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event in 10s")
	}
	return watch.Event{}
}

// A watch that resumes from a resourceVersion gets, from client-go's fake
// tracker, the stored objects themselves, which the tracker reads again on
// the next Get, from another goroutine (the demo's simulator). Writing an
// event to the stream must not write to its object: the encoder sets the
// kind in place for as long as it encodes, which the race detector (the
// suite runs under it) sees against the reads here.
func TestOverWireLeavesTheWatchedObjectsAlone(t *testing.T) {
	t.Parallel()
	source := watch.NewFake()
	lw := &cache.ListWatch{WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return source, nil }}
	pods := PodsOverWire(lw, nil, mem.NewStringLists())
	w, err := pods.(cache.ListerWatcherWithContext).WatchWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "wire"}}
	done, read := make(chan struct{}), make(chan bool)
	go func() { // the tracker, reading what it stores
		kindSeen := false
		for {
			select {
			case <-done:
				read <- kindSeen
				return
			default:
				kindSeen = kindSeen || pod.Kind != ""
			}
		}
	}()
	go source.Add(pod)
	ev := nextEvent(t, w)
	close(done)
	if kindSeen := <-read; kindSeen {
		t.Error("the watched Pod was given a kind while it was written to the stream")
	}
	if ev.Type != watch.Added {
		t.Fatalf("event %s, want ADDED", ev.Type)
	}
}
