package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/metadata"

	"github.com/sandscope/sandscope/model"
)

// warmPoolSandboxes lists the agent Sandboxes of warm pool o.Pool: its free
// members (owned by the pool) and the Sandboxes of the claims made on it
// (owned by the claim). Nothing when the extensions are not served.
func (c *Clients) warmPoolSandboxes(ctx context.Context, sources Sources, o SelectOptions) ([]string, error) {
	if sources.Agent == nil || sources.AgentExt.Claims == nil && sources.AgentExt.WarmPools == nil {
		return nil, nil
	}
	claims := map[string]bool{} // "ns/claim" of the claims on the pool
	if gvr := sources.AgentExt.Claims; gvr != nil {
		list, err := c.Dynamic.Resource(*gvr).Namespace(o.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing sandboxclaims: %w", err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			if pool, _, _ := unstructured.NestedString(u.Object, "spec", "warmPoolRef", "name"); pool == o.Pool {
				claims[u.GetNamespace()+"/"+u.GetName()] = true
			}
		}
	}
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	list, err := mc.Resource(*sources.Agent).Namespace(o.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing agent sandboxes: %w", err)
	}
	var keys []string
	for i := range list.Items {
		m := &list.Items[i]
		for _, r := range m.OwnerReferences {
			if r.Kind == model.KindSandboxWarmPool && r.Name == o.Pool || r.Kind == model.KindSandboxClaim && claims[m.Namespace+"/"+r.Name] {
				keys = append(keys, model.SandboxKey(model.EngineAgent, m.Namespace, m.Name))
				break
			}
		}
	}
	return keys, nil
}
