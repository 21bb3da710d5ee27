package kube

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
)

// Names for shell completion: a few lists, metadata only, bounded by the
// caller's context. Each is sorted and holds no repeats.

// SandboxNames lists the names of the sandboxes in namespace ("" = every
// namespace); podSelector picks plain-Pod sandboxes as WatcherOptions does.
func (c *Clients) SandboxNames(ctx context.Context, namespace, podSelector string) ([]string, error) {
	keys, err := c.SelectSandboxes(ctx, SelectOptions{Namespace: namespace, PodSelector: podSelector})
	if err != nil {
		return nil, err
	}
	return keyParts(keys, func(_, name string) string { return name }), nil
}

// SandboxNamespaces lists the namespaces that hold sandboxes.
func (c *Clients) SandboxNamespaces(ctx context.Context, podSelector string) ([]string, error) {
	keys, err := c.SelectSandboxes(ctx, SelectOptions{PodSelector: podSelector})
	if err != nil {
		return nil, err
	}
	return keyParts(keys, func(ns, _ string) string { return ns }), nil
}

// NamespaceNames lists every namespace, for a user who may not list
// sandboxes across namespaces but may list namespaces.
func (c *Clients) NamespaceNames(ctx context.Context) ([]string, error) {
	return c.metadataNames(ctx, corev1.SchemeGroupVersion.WithResource("namespaces"), "", nil)
}

// PoolNames lists the OpenSandbox Pools in namespace ("" = every namespace).
func (c *Clients) PoolNames(ctx context.Context, namespace string) ([]string, error) {
	return c.metadataNames(ctx, osv1.Pools, namespace, nil)
}

// SandboxPodNames lists the Pods in namespace ("" = every namespace) that
// belong to a sandbox engine or are plain-Pod sandboxes (podSelector, else
// labelled opensandbox.io/id): the Pods `sandscope get pods` can show.
func (c *Clients) SandboxPodNames(ctx context.Context, namespace, podSelector string) ([]string, error) {
	if podSelector == "" {
		podSelector = osv1.LabelSandboxID
	}
	plain, err := labels.Parse(podSelector)
	if err != nil {
		return nil, fmt.Errorf("invalid pod selector %q: %w", podSelector, err)
	}
	return c.metadataNames(ctx, corev1.SchemeGroupVersion.WithResource("pods"), namespace, func(m metav1.ObjectMeta) bool {
		return engineOwned(&corev1.Pod{ObjectMeta: m}) || plain.Matches(labels.Set(m.Labels))
	})
}

// metadataNames lists the names of a resource's objects in namespace
// (those keep accepts, or all), reading their metadata only.
func (c *Clients) metadataNames(ctx context.Context, gvr schema.GroupVersionResource, namespace string, keep func(metav1.ObjectMeta) bool) ([]string, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	list, err := mc.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	names := make([]string, 0, len(list.Items))
	for i := range list.Items {
		if m := list.Items[i].ObjectMeta; keep == nil || keep(m) {
			names = append(names, m.Name)
		}
	}
	return sortedUnique(names), nil
}

// keyParts maps sandbox keys to a part of each (namespace or name).
func keyParts(keys []string, part func(namespace, name string) string) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if _, ns, name, ok := model.ParseSandboxKey(k); ok {
			out = append(out, part(ns, name))
		}
	}
	return sortedUnique(out)
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
