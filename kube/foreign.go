package kube

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/kube/codec"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// A namespace-scoped Watcher sees only its namespace's Pods, but the IP a
// dead sandbox records may have gone to a Pod anywhere in the cluster:
// without a look there, IP_TAKEN reads as POD_DEAD. The Watcher answers for
// every such IP at once (fleet.Fleet.ForeignCandidates) with one list of the
// live Pods of the other namespaces, in pages, decoded straight into the
// model's slim Pods and kept only where they hold a candidate IP: a request
// per dead sandbox ran into the client's rate limit and the deadline at a
// few thousand. Until a list has answered for an IP, and whenever one fails
// or RBAC forbids it, the slots recording that IP read unchecked.

const (
	// foreignEvery is how often a namespace-scoped Watcher looks up the
	// holders of dead sandboxes' IPs in other namespaces.
	foreignEvery = 5 * time.Second
	// foreignSpacing spaces the rounds by this many times the last one's
	// duration, so that on a large cluster the list is not the API
	// server's steady load.
	foreignSpacing = 4
	// foreignPage is the page size of the list of other namespaces' Pods.
	foreignPage = 500
)

// ResolveForeignHolders looks up, once, which Pods outside the watched
// namespace hold the IPs the fleet's dead, gone and stale sandboxes record,
// and tells the fleet. A Watcher of every namespace has nothing to look up.
// Forbidden is not an error: the fleet records that other namespaces could
// not be checked. Other errors are returned, and the fleet's slots recording
// those IPs read unchecked until a later round answers.
func (w *Watcher) ResolveForeignHolders(ctx context.Context) error {
	if w.opts.Namespace == "" {
		return nil
	}
	cands := w.fleet.ForeignCandidates()
	if len(cands) == 0 {
		return nil
	}
	holders, err := w.holdersElsewhere(ctx, cands)
	if apierrors.IsForbidden(err) {
		w.fleet.SetForeignBlocked("listing Pods in all namespaces is forbidden: " + err.Error())
		return nil
	}
	if err != nil {
		// The slots without a holder found say they were not checked.
		w.fleet.ForeignLookupFailed()
		return fmt.Errorf("looking up the Pods holding %d address(es) in other namespaces: %w", len(cands), err)
	}
	w.fleet.SetForeignIndex(cands, holders)
	return nil
}

// ResolveAllForeignHolders looks up every candidate once: a one-shot reader
// (sweep, get) reports on all of them.
func (w *Watcher) ResolveAllForeignHolders(ctx context.Context) error {
	return w.ResolveForeignHolders(ctx)
}

// holdersElsewhere lists the live Pods outside the watched namespace, in
// pages, and returns those holding one of ips, by IP.
func (w *Watcher) holdersElsewhere(ctx context.Context, ips []string) (map[string][]model.Holder, error) {
	want := make(map[string]struct{}, len(ips))
	for _, ip := range ips {
		want[ip] = struct{}{}
	}
	out := map[string][]model.Holder{}
	visit := func(p *model.Pod) {
		if p.Namespace == w.opts.Namespace || !fleet.HoldsIP(p) {
			return // the watch answers for its own namespace; a fake may ignore the selector
		}
		if _, ok := want[p.Status.PodIP]; !ok {
			return
		}
		h := model.Holder{Namespace: p.Namespace, Pod: p.Name, UID: string(p.UID), Sandbox: fleet.SandboxKeyOfPod(p)}
		h.Since, _ = p.Status.StartTime()
		out[p.Status.PodIP] = append(out[p.Status.PodIP], h)
	}
	// Only Pods that can hold an address: the server filters, so the pages
	// carry little beyond them.
	sel := fields.AndSelectors(
		fields.OneTermNotEqualSelector("metadata.namespace", w.opts.Namespace),
		fields.OneTermNotEqualSelector("status.podIP", ""),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	).String()
	opts := metav1.ListOptions{FieldSelector: sel, Limit: foreignPage}
	if err := w.listPods(ctx, opts, visit); err != nil {
		return nil, err
	}
	return out, nil
}

// listPods lists the Pods of every namespace matching opts, page after
// page, and hands each to visit. With a server config the pages are read
// as protobuf straight into slim model Pods (codec.NewPodClient); a client without
// a server (the fake) goes through its typed list.
func (w *Watcher) listPods(ctx context.Context, opts metav1.ListOptions, visit func(*model.Pod)) error {
	var rc *rest.RESTClient
	if w.clients.Config != nil {
		var err error
		if rc, err = codec.NewPodClient(w.clients.Config, w.lists); err != nil {
			return err
		}
	}
	for {
		var cont string
		if rc != nil {
			list := &codec.PodList{}
			err := rc.Get().Resource("pods").VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(list)
			if err != nil {
				return err
			}
			for _, p := range list.Items {
				visit(p)
			}
			cont = list.Continue
		} else {
			list, err := w.clients.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
			if err != nil {
				return err
			}
			for i := range list.Items {
				p, err := codec.ModelPod(&list.Items[i])
				if err != nil {
					return err
				}
				visit(p)
			}
			cont = list.Continue
		}
		if cont == "" {
			return nil
		}
		opts.Continue = cont
	}
}

// runForeignHolders resolves foreign holders every foreignEvery (or
// foreignSpacing times the last round's duration, if longer) once the fleet
// is synced, until ctx ends.
func (w *Watcher) runForeignHolders(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-w.synced:
	}
	for {
		start := time.Now()
		// An error leaves the fleet's slots unchecked; a lost connection
		// shows through the watches' status, and the next round retries.
		_ = w.ResolveForeignHolders(ctx)
		wait := max(foreignEvery, foreignSpacing*time.Since(start))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
