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
	"github.com/sandscope/sandscope/model"
)

// ResolvePod reads, live, the Pod that name designates in namespace: the
// Pod of that name; else the Pod of the sandbox of that name (its name, key
// or short id), which is the Pod exec and the TUI take for it: the sandbox
// is read and derived by the fleet model (LookupSandbox) and its primary
// slot's Pod is the answer, so that a re-created, handed-over or missing
// Pod reads the same in every command; else, for a name the model has no
// sandbox for (a deleted BatchSandbox's Pods, a Pod labelled
// opensandbox.io/id=name), the Pod of the lowest index labelled with it.
// how says which (for the report); a name that designates nothing is a
// NotFound error.
func (c *Clients) ResolvePod(ctx context.Context, namespace, name string) (pod *corev1.Pod, how string, err error) {
	pod, err = c.LivePod(ctx, namespace, name)
	if err == nil || !apierrors.IsNotFound(err) {
		return pod, "Pod " + name, err
	}
	snap, err := c.LookupSandbox(ctx, name, LookupOptions{Namespace: namespace})
	if err != nil {
		return nil, "", err
	}
	switch sbs := snap.Named(namespace, name); len(sbs) {
	case 0:
		return c.podByLabels(ctx, namespace, name)
	case 1:
		return c.primaryPod(ctx, sbs[0])
	default:
		keys := make([]string, len(sbs))
		for i, sb := range sbs {
			keys[i] = sb.Key
		}
		return nil, "", fmt.Errorf("%q names several sandboxes: %s; give the whole name or the key", name, strings.Join(keys, ", "))
	}
}

// primaryPod reads, live, the Pod of sb's primary slot (the one the engine
// forwards to, and exec acts on). A slot whose Pod is gone or serves
// another sandbox now has none: explaining that Pod's restarts as sb's
// would be explaining another sandbox's, so it is an error that says so.
func (c *Clients) primaryPod(ctx context.Context, sb *model.Sandbox) (*corev1.Pod, string, error) {
	how := sandboxKind(sb) + " " + sb.Name()
	sl := sb.PrimarySlot()
	if sl == nil || sl.PodName == "" {
		return nil, "", apierrors.NewNotFound(corev1.Resource("pods"), sb.Name())
	}
	if sl.Pod == nil {
		return nil, "", fmt.Errorf("%s: its Pod %s does not exist or serves another sandbox now (%s); name the Pod to explain it anyway",
			how, sl.PodName, sl.Identity)
	}
	pod, err := c.LivePod(ctx, sb.Namespace(), sl.PodName)
	if err != nil {
		return nil, "", err
	}
	return pod, how + " → Pod " + pod.Name, nil
}

// sandboxKind names sb's engine object as the report says it.
func sandboxKind(sb *model.Sandbox) string {
	switch sb.Engine() {
	case model.EngineBatchSandbox:
		return "BatchSandbox"
	case model.EngineAgent:
		return "Sandbox"
	}
	return "sandbox"
}

// podByLabels is the Pod of the lowest index labelled as name's, by its
// BatchSandbox name, else by its sandbox id: what is left of a sandbox the
// model has no row for.
func (c *Clients) podByLabels(ctx context.Context, namespace, name string) (*corev1.Pod, string, error) {
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	for _, set := range []labels.Set{{osv1.LabelBatchSandboxName: name}, {osv1.LabelSandboxID: name}} {
		// A name no label value can spell (typed by the operator: "a b",
		// "x/y", 64 characters) labels no Pod; asked for, the API server
		// answers 400, and client-go's fake, the demo's, panics.
		sel, err := labels.ValidatedSelectorFromSet(set)
		if err != nil {
			continue
		}
		list, err := c.Kube.CoreV1().Pods(namespace).List(rctx, metav1.ListOptions{LabelSelector: sel.String(), Limit: 100})
		if err != nil {
			return nil, "", fmt.Errorf("listing pods of sandbox %s/%s: %w", namespace, name, err)
		}
		if len(list.Items) == 0 {
			continue
		}
		// The primary Pod is the one of the lowest index (the engine forwards to slot 0).
		pods := list.Items
		first := slices.MinFunc(pods, func(a, b corev1.Pod) int { return podIndexOf(&a) - podIndexOf(&b) })
		pod, err := c.LivePod(ctx, namespace, first.Name)
		if err != nil {
			return nil, "", err
		}
		return pod, "sandbox " + name + " → Pod " + pod.Name, nil
	}
	return nil, "", apierrors.NewNotFound(corev1.Resource("pods"), name)
}

func podIndexOf(p *corev1.Pod) int {
	if i, err := strconv.Atoi(p.Labels[osv1.LabelPodIndex]); err == nil {
		return i
	}
	return 1 << 30
}
