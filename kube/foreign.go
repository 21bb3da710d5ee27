package kube

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// A namespace-scoped Watcher sees only its namespace's Pods, but the IP a
// dead sandbox records may have gone to a Pod anywhere in the cluster:
// without a look there, IP_TAKEN reads as POD_DEAD. The Watcher asks the
// API server, live and by field selector status.podIP, which Pods hold the
// IPs no watched Pod answers for (fleet.Fleet.ForeignCandidates): a few
// requests for the few dead sandboxes, where a cluster-wide Pod watch would
// keep every Pod of the cluster. When RBAC forbids listing Pods across
// namespaces, the fleet is told, and those slots say they were checked in
// their namespace only.

const (
	// foreignEvery is how often a namespace-scoped Watcher looks up the
	// holders of dead sandboxes' IPs in other namespaces.
	foreignEvery = 5 * time.Second
	// maxForeignLookups bounds the lookups of one round; the rest wait for
	// the next (candidates are taken in IP order, so all are reached).
	maxForeignLookups = 64
)

// ResolveForeignHolders looks up, once, which Pods outside the watched
// namespace hold the IPs the fleet's dead, gone and stale sandboxes record,
// and tells the fleet. A Watcher of every namespace has nothing to look up.
// Forbidden is not an error: the fleet records that other namespaces could
// not be checked. Other errors are returned (the next round retries).
func (w *Watcher) ResolveForeignHolders(ctx context.Context) error {
	if w.opts.Namespace == "" {
		return nil
	}
	cands := w.fleet.ForeignCandidates()
	w.mu.Lock()
	start := w.foreignNext
	w.mu.Unlock()
	n := min(len(cands), maxForeignLookups)
	for i := range n {
		ip := cands[(start+i)%len(cands)]
		hs, err := w.holdersElsewhere(ctx, ip)
		if apierrors.IsForbidden(err) {
			w.fleet.SetForeignBlocked("listing Pods in all namespaces is forbidden: " + err.Error())
			return nil
		}
		if err != nil {
			return fmt.Errorf("looking up the Pods holding %s in other namespaces: %w", ip, err)
		}
		w.fleet.SetForeignBlocked("")
		w.fleet.SetForeignHolders(ip, hs)
	}
	if len(cands) > 0 {
		w.mu.Lock()
		w.foreignNext = (start + n) % len(cands)
		w.mu.Unlock()
	}
	return nil
}

// ResolveAllForeignHolders runs as many rounds of ResolveForeignHolders as
// it takes to look up every candidate once: a one-shot reader (sweep)
// reports on all of them.
func (w *Watcher) ResolveAllForeignHolders(ctx context.Context) error {
	if w.opts.Namespace == "" {
		return nil
	}
	rounds := (len(w.fleet.ForeignCandidates()) + maxForeignLookups - 1) / maxForeignLookups
	for range rounds {
		if err := w.ResolveForeignHolders(ctx); err != nil {
			return err
		}
	}
	return nil
}

// holdersElsewhere lists the live Pods outside the watched namespace whose
// status.podIP is ip.
func (w *Watcher) holdersElsewhere(ctx context.Context, ip string) ([]model.Holder, error) {
	list, err := w.clients.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("status.podIP", ip).String(),
	})
	if err != nil {
		return nil, err
	}
	var out []model.Holder
	for i := range list.Items {
		p, err := modelPod(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if p.Namespace == w.opts.Namespace || p.Status.PodIP != ip || !fleet.HoldsIP(p) {
			continue // the watch answers for its own namespace; a fake may ignore the selector
		}
		h := model.Holder{Namespace: p.Namespace, Pod: p.Name, UID: string(p.UID), Sandbox: fleet.SandboxKeyOfPod(p)}
		if p.Status.StartTime != nil {
			h.Since = p.Status.StartTime.Time
		}
		out = append(out, h)
	}
	return out, nil
}

// runForeignHolders resolves foreign holders every foreignEvery once the
// fleet is synced, until ctx ends.
func (w *Watcher) runForeignHolders(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-w.synced:
	}
	t := time.NewTicker(foreignEvery)
	defer t.Stop()
	for {
		// An error leaves the fleet as the last round left it; a lost
		// connection shows through the watches' status, and the next round retries.
		_ = w.ResolveForeignHolders(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
