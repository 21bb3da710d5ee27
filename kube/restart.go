package kube

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// ResolvePod reads, live, the Pod that name designates in namespace: the
// Pod of that name, else the primary Pod of the BatchSandbox of that name
// (pooled: the first Pod its Pool allocated to it; else the Pod of index 0
// it owns), else the Pod labelled opensandbox.io/id=name. how says which
// (for the report); a name that designates nothing is a NotFound error.
func (c *Clients) ResolvePod(ctx context.Context, namespace, name string) (pod *corev1.Pod, how string, err error) {
	pod, err = c.LivePod(ctx, namespace, name)
	if err == nil || !apierrors.IsNotFound(err) {
		return pod, "Pod " + name, err
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	var candidates []string
	if c.Dynamic != nil {
		u, err := c.Dynamic.Resource(BatchSandboxGVR).Namespace(namespace).Get(rctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			b, err := modelBatchSandbox(u)
			if err != nil {
				return nil, "", err
			}
			candidates = append(candidates, b.AllocatedPods()...)
			how = "BatchSandbox " + name
		case apierrors.IsNotFound(err):
			// Not a BatchSandbox (or the CRD is not installed): try the labels.
		default:
			return nil, "", fmt.Errorf("reading BatchSandbox %s/%s: %w", namespace, name, err)
		}
	}
	for _, sel := range []labels.Set{{osv1.LabelBatchSandboxName: name}, {osv1.LabelSandboxID: name}} {
		if len(candidates) > 0 {
			break
		}
		list, err := c.Kube.CoreV1().Pods(namespace).List(rctx, metav1.ListOptions{LabelSelector: sel.String(), Limit: 100})
		if err != nil {
			return nil, "", fmt.Errorf("listing pods of sandbox %s/%s: %w", namespace, name, err)
		}
		pods := list.Items
		// The primary Pod is the one of the lowest index (the engine forwards to slot 0).
		slices.SortFunc(pods, func(a, b corev1.Pod) int { return podIndexOf(&a) - podIndexOf(&b) })
		for _, p := range pods {
			candidates = append(candidates, p.Name)
		}
		if how == "" && len(pods) > 0 {
			how = "sandbox " + name
		}
	}
	if len(candidates) == 0 && couldBeIDPrefix(name) {
		// The short id the TUI shows: its BatchSandbox, where only one
		// id starts with it.
		ids, err := c.batchSandboxesByIDPrefix(rctx, namespace, name)
		if err != nil {
			return nil, "", err
		}
		switch len(ids) {
		case 0:
		case 1:
			return c.ResolvePod(ctx, namespace, ids[0].Name)
		default:
			names := make([]string, len(ids))
			for i, id := range ids {
				names[i] = id.Name
			}
			return nil, "", fmt.Errorf("%q starts the ids of several BatchSandboxes: %s; give the whole id", name, strings.Join(names, ", "))
		}
	}
	if len(candidates) == 0 {
		return nil, "", apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	pod, err = c.LivePod(ctx, namespace, candidates[0])
	if err != nil {
		return nil, "", err
	}
	return pod, how + " → Pod " + pod.Name, nil
}

func podIndexOf(p *corev1.Pod) int {
	if i, err := strconv.Atoi(p.Labels[osv1.LabelPodIndex]); err == nil {
		return i
	}
	return 1 << 30
}
