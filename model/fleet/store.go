package fleet

import (
	"strings"

	"github.com/sandscope/sandscope/model"
)

// The Fleet keeps every Pod and BatchSandbox it is handed, so it can stand in
// for an informer's cache: a watch that feeds the Fleet directly asks it which
// objects it knows (to turn a re-list into deletes of the missing ones)
// instead of keeping a second map with a second key string per object.
// Keys are "namespace/name", as cache.MetaNamespaceKeyFunc makes them.

// PodKeys lists the keys of the Pods the Fleet holds.
func (f *Fleet) PodKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]string, 0, len(f.pods))
	for k := range f.pods {
		keys = append(keys, k)
	}
	return keys
}

// PodByKey returns the Pod the Fleet holds under key.
func (f *Fleet) PodByKey(key string) (*model.Pod, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pe := f.pods[key]; pe != nil && pe.pod != nil {
		return pe.pod, true
	}
	return nil, false
}

// BatchSandboxKeys lists the keys of the BatchSandboxes the Fleet holds.
func (f *Fleet) BatchSandboxKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []string
	for _, e := range f.sandboxes {
		if e.engine() == model.EngineBatchSandbox && e.bs != nil {
			keys = append(keys, e.ns()+"/"+e.name())
		}
	}
	return keys
}

// BatchSandboxByKey returns the BatchSandbox the Fleet holds under key.
func (f *Fleet) BatchSandboxByKey(key string) (*model.BatchSandbox, bool) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		// A cluster-scoped key: BatchSandboxes are namespaced, so none.
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.sandboxAt(model.EngineBatchSandbox, ns, name); e != nil && e.bs != nil {
		return e.bs, true
	}
	return nil, false
}
