package kube

import "sort"

// WatchState is the health of one watched resource, for an exporter's
// per-resource "watch up" signal.
type WatchState struct {
	Resource string // plural, as in the request path: "pods", "batchsandboxes", ...
	// Synced: the fleet has seen the resource's initial list.
	Synced bool
	// Up: synced, its last request answered, the server's storage proven
	// readable by the last freshness probe, and the server does not deny
	// it (forbidden or not served).
	Up bool
}

// Watches reports each resource the watcher watches, sorted by name. It is
// empty until Run has started the informers.
func (w *Watcher) Watches() []WatchState {
	storageLost := w.health.isFailing(storageKey)
	w.mu.Lock()
	out := make([]WatchState, 0, len(w.informers))
	for _, wi := range w.informers {
		synced := wi.hasSynced()
		up := synced && !storageLost && !w.health.isFailing(wi.resource) && !w.health.isDenied(wi.resource)
		out = append(out, WatchState{Resource: wi.resource, Synced: synced, Up: up})
	}
	w.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// isFailing says whether the last request for key failed at the transport
// (or its watch stream broke) and none has been answered since.
func (h *apiHealth) isFailing(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.failing[key]
	return ok
}
