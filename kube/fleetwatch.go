package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/sandscope/sandscope/model"
)

// A fleet watch is an informer without a cache of its own. The fleet keeps
// every Pod and BatchSandbox it is handed, so a SharedIndexInformer's store
// beside it would hold each object a second time in a map, under a second
// key string: about 110 bytes an object, a fifth of the heap left over once
// the objects themselves were slim. Here client-go's reflector and FIFO feed
// the handler directly, and the fleet answers the FIFO's questions about
// which objects it knows (a re-list turns the missing ones into deletes).
//
// Pools and agent Sandboxes keep ordinary informers: there are few of them.

// newFleetWatch builds the controller of one resource. The handler gets
// OnAdd for every object added, updated or re-listed (the fleet's upserts do
// not tell them apart) and OnDelete, with a DeletedFinalStateUnknown when the
// delete was only seen in a re-list.
func newFleetWatch(resource string, lw cache.ListerWatcher, objType runtime.Object, transform cache.TransformFunc,
	known cache.KeyListerGetter, handler cache.ResourceEventHandler, onWatchError cache.WatchErrorHandlerWithContext) cache.Controller {
	fifo := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		Name:         resource,
		KeyFunction:  cache.MetaNamespaceKeyFunc,
		KnownObjects: known,
		Transformer:  transform,
	})
	return cache.New(&cache.Config{
		Queue:                        fifo,
		ListerWatcher:                lw,
		ObjectType:                   objType,
		ObjectDescription:            resource,
		WatchErrorHandlerWithContext: onWatchError,
		Process: func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(cache.Deltas)
			if !ok {
				return fmt.Errorf("%s watch: got %T from the queue, want cache.Deltas", resource, obj)
			}
			for _, d := range deltas {
				switch d.Type {
				case cache.Added, cache.Updated, cache.Replaced, cache.Sync:
					handler.OnAdd(d.Object, isInInitialList)
				case cache.Deleted:
					handler.OnDelete(d.Object)
				}
			}
			return nil
		},
	})
}

// fleetKnown is the fleet seen as a FIFO's known objects: its keys and its
// objects of one kind.
type fleetKnown[T any] struct {
	keys func() []string
	get  func(key string) (T, bool)
}

func (k fleetKnown[T]) ListKeys() []string { return k.keys() }

func (k fleetKnown[T]) GetByKey(key string) (any, bool, error) {
	if obj, ok := k.get(key); ok {
		return obj, true, nil
	}
	return nil, false, nil
}

func fleetPods(f *model.Fleet) cache.KeyListerGetter {
	return fleetKnown[*model.Pod]{keys: f.PodKeys, get: f.PodByKey}
}

func fleetBatchSandboxes(f *model.Fleet) cache.KeyListerGetter {
	return fleetKnown[*model.BatchSandbox]{keys: f.BatchSandboxKeys, get: f.BatchSandboxByKey}
}

// podListWatch lists and watches Pods through a typed client, as client-go's
// Pod informer does.
func podListWatch(kc kubernetes.Interface, namespace string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return kc.CoreV1().Pods(namespace).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return kc.CoreV1().Pods(namespace).Watch(ctx, opts)
		},
	}
}

// dynamicListWatch lists and watches one resource through a dynamic client,
// as a dynamic informer does.
func dynamicListWatch(dc dynamic.Interface, gvr schema.GroupVersionResource, namespace string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return dc.Resource(gvr).Namespace(namespace).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return dc.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
		},
	}
}
