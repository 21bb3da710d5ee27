package kube_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// syncedReader records, for each image-config read, whether the watcher
// had synced when it began.
type syncedReader struct {
	w      func() *kube.Watcher
	first  chan struct{} // closed at the first read
	once   sync.Once
	mu     sync.Mutex
	synced []bool
}

func (r *syncedReader) Read(_ context.Context, ref string) (model.ImageConfig, error) {
	r.mu.Lock()
	r.synced = append(r.synced, r.w().Status().Synced)
	r.mu.Unlock()
	r.once.Do(func() { close(r.first) })
	return model.ImageConfig{Ref: ref, Entrypoint: []string{"/srv"}}, nil
}

// Image-config reads go to registries over the operator's link, which the
// initial lists need whole: none may start before the fleet has synced,
// even when the Pods are in and the BatchSandboxes' list is still arriving.
func TestImageChecksWaitForTheSync(t *testing.T) {
	t.Parallel()
	pod := testcluster.SandboxPod("sbx-0", "registry.example/app:1")
	pod.Namespace = "demo"
	kc := kubefake.NewClientset(pod)
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		kube.BatchSandboxGVR: "BatchSandboxList",
	})
	// The BatchSandboxes' list is held back until an image read began or,
	// when none does, a while after the Pods reached the fleet.
	release := make(chan struct{})
	dc.PrependReactor("list", kube.BatchSandboxGVR.Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release
		return false, nil, nil
	})
	var w *kube.Watcher
	reader := &syncedReader{w: func() *kube.Watcher { return w }, first: make(chan struct{})}
	clients := &kube.Clients{Kube: kc, Dynamic: dc, Context: "demo", Namespace: "demo", RequestTimeout: time.Second}
	w = kube.NewWatcher(clients, kube.WatcherOptions{Namespace: "demo", Sources: &kube.Sources{BatchSandbox: true}, ImageConfig: reader})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	// Wait for the Pods to be in the fleet, then let the held list go at
	// the first read, or after two seconds without one.
	for w.SyncProgress() == nil || !podsListed(w.SyncProgress()) {
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-reader.first:
	case <-time.After(2 * time.Second):
	}
	close(release)
	if err := w.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	<-reader.first
	reader.mu.Lock()
	defer reader.mu.Unlock()
	for i, synced := range reader.synced {
		if !synced {
			t.Errorf("image read %d began before the fleet had synced", i+1)
		}
	}
}

func podsListed(progress []model.ListProgress) bool {
	for _, p := range progress {
		if p.Resource == "pods" && p.Done {
			return true
		}
	}
	return false
}
