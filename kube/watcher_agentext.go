package kube

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/sandscope/sandscope/model"
)

// addAgentExtensions watches agent-sandbox's claims, warm pools and
// templates, each the way agent Sandboxes are watched: a fleet watch with a
// small store of its own (and the watcher's short reconnect back-off) whose
// transform keeps only the slim model struct. A resource the server
// does not serve is not watched (discovery noted it); one RBAC forbids is
// reported like any other denied watch, and the rest of the fleet works.
func (w *Watcher) addAgentExtensions(dc dynamic.Interface, ns string, x AgentExtensions) error {
	type ext struct {
		gvr     *schema.GroupVersionResource
		convert func(*unstructured.Unstructured) any
		upsert  func(any)
		remove  func(namespace, name string)
	}
	f := w.fleet
	for _, e := range []ext{
		{x.Claims, func(u *unstructured.Unstructured) any { return model.SandboxClaimFromUnstructured(u) },
			func(o any) {
				if c, ok := o.(*model.SandboxClaim); ok {
					f.UpsertSandboxClaim(c)
				}
			}, f.DeleteSandboxClaim},
		{x.WarmPools, func(u *unstructured.Unstructured) any { return model.WarmPoolFromUnstructured(u) },
			func(o any) {
				if p, ok := o.(*model.WarmPool); ok {
					f.UpsertWarmPool(p)
				}
			}, f.DeleteWarmPool},
		{x.Templates, func(u *unstructured.Unstructured) any { return model.SandboxTemplateFromUnstructured(u) },
			func(o any) {
				if t, ok := o.(*model.SandboxTemplate); ok {
					f.UpsertSandboxTemplate(t)
				}
			}, f.DeleteSandboxTemplate},
	} {
		if e.gvr == nil {
			continue
		}
		convert := e.convert
		transform := func(obj any) (any, error) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				return convert(u), nil
			}
			return obj, nil
		}
		lw := cache.ToListWatcherWithWatchListSemantics(dynamicListWatch(dc, *e.gvr, ns), dc)
		w.addCachedWatch(e.gvr.Resource, lw, transform, objectHandler(w, e.upsert, e.remove))
	}
	return nil
}
