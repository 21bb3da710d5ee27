package kube

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"

	"github.com/sandscope/sandscope/model/forensics"
)

// Reads for restart forensics: Events and Nodes, fetched one object at a time
// for the few Pods that restarted, never listed for the whole fleet. Each call
// is bounded by the request timeout.

// eventListLimit bounds what one Event list keeps: a Pod in a crash loop has
// a handful of (aggregated) Events, a node a few dozen; more is noise, not
// evidence. The list is read in pages of that size, all of them, and the
// newest are kept: anyone who may create Events in a namespace can write a
// thousand about someone else's Pod, and the server returns them in name
// order, so the first page alone would be theirs, not the real ones.
const eventListLimit = 500

// PodEvents lists the core/v1 Events about one Pod (involvedObject kind Pod
// and name), oldest first as the server returns them. Events of a same-name
// predecessor are included; callers tell them apart by involvedObject.uid.
func (c *Clients) PodEvents(ctx context.Context, namespace, pod string) ([]corev1.Event, error) {
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": pod}.AsSelector()
	evs, err := c.listEvents(ctx, namespace, sel.String())
	if err != nil {
		return nil, fmt.Errorf("listing events of pod %s/%s: %w", namespace, pod, err)
	}
	return evs, nil
}

// NamespaceEvents lists every Event of a namespace (up to a bound).
func (c *Clients) NamespaceEvents(ctx context.Context, namespace string) ([]corev1.Event, error) {
	evs, err := c.listEvents(ctx, namespace, "")
	if err != nil {
		return nil, fmt.Errorf("listing events of namespace %s: %w", namespace, err)
	}
	return evs, nil
}

// NodeEvents lists the Events about one Node. The kubelet and the node
// lifecycle controller record them in the "default" namespace; they are
// looked up across all namespaces first and, when that is forbidden (a
// namespace-scoped user), in "default" only.
func (c *Clients) NodeEvents(ctx context.Context, node string) ([]corev1.Event, error) {
	sel := fields.Set{"involvedObject.kind": "Node", "involvedObject.name": node}.AsSelector().String()
	evs, err := c.listEvents(ctx, metav1.NamespaceAll, sel)
	if apierrors.IsForbidden(err) {
		evs, err = c.listEvents(ctx, metav1.NamespaceDefault, sel)
	}
	if err != nil {
		return nil, fmt.Errorf("listing events of node %s: %w", node, err)
	}
	return evs, nil
}

// Node reads one Node (its conditions say whether it was NotReady or under
// pressure around a termination).
func (c *Clients) Node(ctx context.Context, name string) (*corev1.Node, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s: %w", name, err)
	}
	return n, nil
}

// NamespaceExists reads whether namespace exists. Listing in a namespace
// that does not exist answers an empty list, as an empty namespace does:
// only the namespace itself tells the two apart. An error (forbidden,
// unreachable) leaves it unknown.
func (c *Clients) NamespaceExists(ctx context.Context, namespace string) (bool, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	_, err := c.Kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
}

func (c *Clients) listEvents(ctx context.Context, namespace, fieldSelector string) ([]corev1.Event, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		return c.Kube.CoreV1().Events(namespace).List(ctx, opts)
	}))
	p.PageSize = eventListLimit
	// An expired continue token must not turn into one unpaged list of a
	// flood: the request fails instead.
	p.FullListIfExpired = false
	var keep []corev1.Event
	err := p.EachListItem(ctx, metav1.ListOptions{FieldSelector: fieldSelector}, func(obj runtime.Object) error {
		keep = append(keep, *obj.(*corev1.Event))
		if len(keep) >= 2*eventListLimit {
			keep = newestEvents(keep, eventListLimit)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newestEvents(keep, eventListLimit), nil
}

// newestEvents sorts evs oldest first and keeps the newest n of them.
// Events of the same second keep the order they were listed in, which is
// the order they happened in (an Event's name ends in its creation time):
// sorting newest first and reversing would turn each tie around
// (Pulling before Scheduled).
func newestEvents(evs []corev1.Event, n int) []corev1.Event {
	slices.SortStableFunc(evs, func(a, b corev1.Event) int { return forensics.EventLast(&a).Compare(forensics.EventLast(&b)) })
	if len(evs) > n {
		drop := len(evs) - n
		copy(evs, evs[drop:])
		clear(evs[n:])
		evs = evs[:n]
	}
	return evs
}

// requestContext bounds one call by the request timeout, if there is one.
func (c *Clients) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.RequestTimeout > 0 {
		return context.WithTimeout(ctx, c.RequestTimeout)
	}
	return context.WithCancel(ctx)
}

// createEventsLimit bounds the SuccessfulCreate Events read per namespace:
// ~800 sandboxes created an hour, Events kept an hour (--event-ttl), with
// room to spare.
const createEventsLimit = 5000

// CreateEvents lists the SuccessfulCreate Events of a namespace (a
// controller records one each time it creates a Pod), page by page up to
// createEventsLimit. A one-shot reader counts them per Pod name: two for
// one name is a same-name re-creation.
func (c *Clients) CreateEvents(ctx context.Context, namespace string) ([]corev1.Event, error) {
	sel := fields.Set{"reason": "SuccessfulCreate"}.AsSelector().String()
	var out []corev1.Event
	opts := metav1.ListOptions{FieldSelector: sel, Limit: eventListLimit}
	for {
		rctx, cancel := c.requestContext(ctx)
		list, err := c.Kube.CoreV1().Events(namespace).List(rctx, opts)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("listing SuccessfulCreate events of namespace %s: %w", namespace, err)
		}
		out = append(out, list.Items...)
		if list.Continue == "" || len(out) >= createEventsLimit {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}
