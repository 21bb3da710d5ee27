package kube

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/kube/codec"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// LookupOptions configure LookupSandbox.
type LookupOptions struct {
	// Namespace to look in; "" looks in every namespace (a name is then
	// found wherever it is, and several matches are left to the caller).
	Namespace string
	// PodSelector picks plain-Pod sandboxes, as WatcherOptions.PodSelector.
	PodSelector string
	// StuckAfter as WatcherOptions.StuckAfter.
	StuckAfter time.Duration
}

// LookupSandbox reads, live and by name, the sandboxes called name (a
// BatchSandbox, an agent Sandbox or a plain Pod; with ref "pod/NAME", the
// Pod and the sandbox it belongs to) and everything their identity depends
// on: their Pods, the Pods holding the addresses they record, and for a
// pooled BatchSandbox whichever other BatchSandbox the Pool handed its Pods
// to. It returns a synced fleet snapshot of just that, derived by the same
// model as the TUI's, so a one-shot exec sees exactly the identity the TUI
// and sweep would show, at a cost that does not grow with the namespace: a
// few GETs and label- or field-selected lists, never a namespace-wide watch.
//
// The one exception is a pooled Pod that carries no owner label: only the
// other BatchSandboxes' alloc-status annotations say who holds it, so their
// metadata is listed (in pages) in that namespace.
func (c *Clients) LookupSandbox(ctx context.Context, ref string, opts LookupOptions) (*fleet.Snapshot, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	sources, err := c.Sources(ctx)
	if err != nil {
		return nil, err
	}
	fopts := fleet.Options{StuckAfter: opts.StuckAfter}
	if opts.PodSelector != "" {
		sel, err := labels.Parse(opts.PodSelector)
		if err != nil {
			return nil, fmt.Errorf("invalid pod selector %q: %w", opts.PodSelector, err)
		}
		fopts.PodSelector = sel
	}
	l := &lookup{c: c, sources: sources, seen: map[string]bool{}}
	if name, ok := cutPodRef(ref); ok {
		err = l.byPod(ctx, opts.Namespace, name)
	} else {
		err = l.bySandbox(ctx, opts.Namespace, ref)
		if err == nil && l.empty() && couldBeIDPrefix(ref) {
			err = l.byIDPrefix(ctx, opts.Namespace, ref)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := l.holders(ctx); err != nil {
		return nil, err
	}
	if l.err != nil {
		return nil, l.err
	}

	fl := fleet.New(fopts)
	if len(l.notes) > 0 {
		// Holders were looked for in their namespace only: a dead or gone
		// slot reads unchecked, not a plain POD_DEAD.
		fl.SetForeignBlocked(l.notes[0])
	}
	for _, p := range l.pods {
		fl.UpsertPod(p)
	}
	for _, b := range l.batch {
		fl.UpsertBatchSandbox(b)
	}
	for _, a := range l.agents {
		fl.UpsertAgentSandbox(a)
	}
	for _, cl := range l.claims {
		fl.UpsertSandboxClaim(cl)
	}
	st := model.SourceStatus{Context: c.Context, Cluster: c.Cluster, Server: c.Server, Synced: true, AsOf: time.Now(), Notes: l.notes}
	slices.Sort(l.forbidden)
	st.Forbidden = l.forbidden
	if opts.Namespace != "" {
		st.Namespaces = []string{opts.Namespace}
	}
	fl.SetStatus(st)
	return fl.Snapshot(), nil
}

// cutPodRef takes NAME from "pod/NAME" (not from a plain-Pod sandbox's
// key "pod/NS/NAME").
func cutPodRef(ref string) (string, bool) {
	if _, _, _, ok := model.ParseSandboxKey(ref); ok {
		return "", false
	}
	for _, p := range []string{"pod/", "pods/"} {
		if len(ref) > len(p) && ref[:len(p)] == p {
			return ref[len(p):], true
		}
	}
	return "", false
}

// lookup collects the objects of one LookupSandbox. Its methods may run
// concurrently; add* guard the slices.
type lookup struct {
	c       *Clients
	sources Sources

	mu     sync.Mutex
	seen   map[string]bool // "pod/ns/name" etc.: each object once
	pods   []*model.Pod
	batch  []*model.BatchSandbox
	agents []*model.AgentSandbox
	claims []*model.SandboxClaim // agent-sandbox claims named like the ref (lookup_claims.go)
	notes  []string
	// forbidden lists the kinds the server denied to a lookup by name:
	// the name could be one of those.
	forbidden []string
	err       error // the first object that could not be read into the model
}

func (l *lookup) addPod(p *corev1.Pod) bool {
	return add(l, &l.pods, "pod/"+p.Namespace+"/"+p.Name+"/"+string(p.UID), func() (*model.Pod, error) { return codec.ModelPod(p) })
}

func (l *lookup) addBatch(b *model.BatchSandbox) bool {
	return add(l, &l.batch, "bsbx/"+b.Namespace+"/"+b.Name, func() (*model.BatchSandbox, error) { return b, nil })
}

func (l *lookup) addAgent(a *model.AgentSandbox) bool {
	return add(l, &l.agents, "agent/"+a.Namespace+"/"+a.Name, func() (*model.AgentSandbox, error) { return a, nil })
}

// add appends the object made by mk to list, once per key; it reports
// whether it was new. An object mk cannot make is kept as the lookup's
// error (LookupSandbox returns it).
func add[T any](l *lookup, list *[]T, key string, mk func() (T, error)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] {
		return false
	}
	l.seen[key] = true
	obj, err := mk()
	if err != nil {
		l.err = cmp.Or(l.err, err)
		return false
	}
	*list = append(*list, obj)
	return true
}

func (l *lookup) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, fmt.Sprintf(format, args...))
}

// byName reads the objects of one resource called name: a GET in the
// namespace, or a list by metadata.name in every namespace.
func byName[T any](ctx context.Context, ns, name string, get func(context.Context, string, string) (T, error),
	list func(context.Context, metav1.ListOptions) ([]T, error)) ([]T, error) {
	if ns != "" {
		obj, err := get(ctx, ns, name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []T{obj}, nil
	}
	return list(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
}

func (l *lookup) getPods(ctx context.Context, ns, name string) ([]*corev1.Pod, error) {
	pods, err := byName(ctx, ns, name,
		func(ctx context.Context, ns, name string) (*corev1.Pod, error) {
			return l.c.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		},
		func(ctx context.Context, o metav1.ListOptions) ([]*corev1.Pod, error) {
			list, err := l.c.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
			if err != nil {
				return nil, err
			}
			return podPointers(list.Items), nil
		})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s: %w", name, err)
	}
	return pods, nil
}

func (l *lookup) getCustom(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) ([]*unstructured.Unstructured, error) {
	res := l.c.Dynamic.Resource(gvr)
	objs, err := byName(ctx, ns, name,
		func(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
			return res.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		},
		func(ctx context.Context, o metav1.ListOptions) ([]*unstructured.Unstructured, error) {
			list, err := res.List(ctx, o)
			if err != nil {
				return nil, err
			}
			out := make([]*unstructured.Unstructured, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		})
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", gvr.Resource, name, err)
	}
	return objs, nil
}

// bySandbox finds every sandbox called name in ns ("" = any), then their Pods.
func (l *lookup) bySandbox(ctx context.Context, ns, name string) error {
	if eng, kns, n, ok := model.ParseSandboxKey(name); ok {
		// A sandbox key names its engine and namespace.
		switch eng {
		case model.EngineBatchSandbox:
			return l.batchSandboxes(ctx, kns, n)
		case model.EngineAgent:
			return l.agentSandboxes(ctx, kns, n)
		default:
			return l.plainPod(ctx, kns, n)
		}
	}
	if claim, ok := cutClaimRef(name); ok {
		return l.claimSandboxes(ctx, ns, claim)
	}
	// A name may be of any kind. A user may read only the kinds of the
	// engine they use (OpenSandbox's rights: pods, pods/exec,
	// batchsandboxes): a kind the server refuses is skipped and recorded as
	// not seen (the snapshot's Status.Forbidden), so that a name found in
	// none of the others says it may be one of those.
	skipForbidden := func(kind string, err error) error {
		if apierrors.IsForbidden(err) {
			l.forbid(kind + ": " + err.Error())
			return nil
		}
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return skipForbidden("batchsandboxes", l.batchSandboxes(gctx, ns, name)) })
	g.Go(func() error { return skipForbidden("sandboxes", l.agentSandboxes(gctx, ns, name)) })
	g.Go(func() error { return l.plainPod(gctx, ns, name) })
	g.Go(func() error { return l.claimSandboxes(gctx, ns, name) })
	return g.Wait()
}

func (l *lookup) forbid(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forbidden = append(l.forbidden, msg)
}

func (l *lookup) plainPod(ctx context.Context, ns, name string) error {
	pods, err := l.getPods(ctx, ns, name)
	for _, p := range pods {
		l.addPod(p)
	}
	return err
}

func (l *lookup) batchSandboxes(ctx context.Context, ns, name string) error {
	if !l.sources.BatchSandbox {
		return nil
	}
	objs, err := l.getCustom(ctx, BatchSandboxGVR, ns, name)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, u := range objs {
		b, err := codec.ModelBatchSandbox(u)
		if err != nil {
			return err
		}
		if !l.addBatch(b) {
			continue
		}
		g.Go(func() error { return l.batchPods(gctx, b) })
	}
	return g.Wait()
}

// batchPods reads a BatchSandbox's Pods: its own (by the name label, and by
// the names <name>-<i> the engine gives them), or the pooled ones its
// alloc-status lists, with whoever holds those now.
func (l *lookup) batchPods(ctx context.Context, b *model.BatchSandbox) error {
	if alloc := b.AllocatedPods(); b.PoolRef() != "" || len(alloc) > 0 {
		unlabelled := false
		for _, name := range alloc {
			p, err := l.readPod(ctx, b.Namespace, name)
			if err != nil {
				return err
			}
			if p == nil {
				continue
			}
			switch owner := p.Labels[osv1.LabelBatchSandboxName]; owner {
			case "":
				unlabelled = true
			case b.Name:
			default:
				// Labelled for another sandbox: read it, so that the model
				// names the sandbox the Pod serves now.
				if err := l.batchObject(ctx, b.Namespace, owner); err != nil {
					return err
				}
			}
		}
		if len(alloc) == 0 {
			// Allocated, but not (yet) in alloc-status: the Pods labelled with its name.
			return l.labelledPods(ctx, b)
		}
		if unlabelled {
			return l.otherClaimers(ctx, b)
		}
		return nil
	}
	if err := l.labelledPods(ctx, b); err != nil {
		return err
	}
	n := max(len(b.Endpoints), int(b.Replicas), 1)
	for i := range min(n, 64) {
		name := b.Name + "-" + strconv.Itoa(i)
		if l.hasPod(b.Namespace, name) {
			continue
		}
		if _, err := l.readPod(ctx, b.Namespace, name); err != nil {
			return err
		}
	}
	return nil
}

// readPod reads Pod ns/name into the lookup and returns it: nil, and
// nothing read, when there is no such Pod.
func (l *lookup) readPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	p, err := l.c.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	l.addPod(p)
	return p, nil
}

// batchObject reads one BatchSandbox, without its Pods.
func (l *lookup) batchObject(ctx context.Context, ns, name string) error {
	objs, err := l.getCustom(ctx, BatchSandboxGVR, ns, name)
	for _, u := range objs {
		b, err := codec.ModelBatchSandbox(u)
		if err != nil {
			return err
		}
		l.addBatch(b)
	}
	return err
}

func (l *lookup) hasPod(ns, name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.pods, func(p *model.Pod) bool { return p.Namespace == ns && p.Name == name })
}

func (l *lookup) labelledPods(ctx context.Context, b *model.BatchSandbox) error {
	sel := labels.SelectorFromSet(labels.Set{osv1.LabelBatchSandboxName: b.Name}).String()
	list, err := l.c.Kube.CoreV1().Pods(b.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("listing pods of batchsandbox %s/%s: %w", b.Namespace, b.Name, err)
	}
	for i := range list.Items {
		l.addPod(&list.Items[i])
	}
	return nil
}

// maxIDPrefixMatches bounds the sandboxes read for one short id: more
// than one is ambiguous anyway, and the refusal names those read.
const maxIDPrefixMatches = 8

// couldBeIDPrefix: ref may be the start of a BatchSandbox id (a UUID), as
// the TUI shows it: hex digits and dashes, long enough to mean one.
func couldBeIDPrefix(ref string) bool {
	if len(ref) < model.MinIDPrefix || len(ref) >= 36 {
		return false
	}
	for _, c := range ref {
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// empty: the lookup found no sandbox and no Pod.
func (l *lookup) empty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.batch) == 0 && len(l.agents) == 0 && len(l.pods) == 0
}

// byIDPrefix reads the BatchSandboxes of ns ("" every one) whose id starts
// with ref: the short id the TUI shows names its sandbox wherever it is
// unique. Nothing by that name exists, so the names are listed (metadata
// only, in pages), at a cost that grows with the fleet: only a short id
// that names nothing whole pays it.
func (l *lookup) byIDPrefix(ctx context.Context, ns, ref string) error {
	if !l.sources.BatchSandbox {
		return nil
	}
	matches, err := l.c.batchSandboxesByIDPrefix(ctx, ns, ref)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, m := range matches {
		g.Go(func() error { return l.batchSandboxes(gctx, m.Namespace, m.Name) })
	}
	return g.Wait()
}

// batchSandboxesByIDPrefix lists (metadata only, in pages) the
// BatchSandboxes of ns ("" every one) whose id starts with ref, at most
// maxIDPrefixMatches of them.
func (c *Clients) batchSandboxesByIDPrefix(ctx context.Context, ns, ref string) ([]types.NamespacedName, error) {
	if c.Config == nil {
		return nil, nil
	}
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	var matches []types.NamespacedName
	opts := metav1.ListOptions{Limit: 500}
	for len(matches) < maxIDPrefixMatches {
		list, err := mc.Resource(BatchSandboxGVR).Namespace(ns).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing batchsandboxes for the id %s: %w", ref, err)
		}
		for i := range list.Items {
			if m := &list.Items[i]; model.IsIDPrefix(m.Name, ref) && len(matches) < maxIDPrefixMatches {
				matches = append(matches, types.NamespacedName{Namespace: m.Namespace, Name: m.Name})
			}
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	return matches, nil
}

// otherClaimers finds the other BatchSandboxes whose alloc-status lists one
// of b's pooled Pods: the model gives a Pod listed twice to the newer one.
// Only metadata is read (the annotations hold the allocation), in pages.
func (l *lookup) otherClaimers(ctx context.Context, b *model.BatchSandbox) error {
	mc, err := metadata.NewForConfig(l.c.Config)
	if err != nil {
		return fmt.Errorf("metadata client: %w", err)
	}
	mine := b.AllocatedPods()
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := mc.Resource(BatchSandboxGVR).Namespace(b.Namespace).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing batchsandboxes in %s for the owner of a pooled pod: %w", b.Namespace, err)
		}
		for i := range list.Items {
			m := &list.Items[i]
			if m.Name == b.Name {
				continue
			}
			other, err := codec.ModelBatchSandbox(m)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(other.AllocatedPods(), func(p string) bool { return slices.Contains(mine, p) }) {
				continue
			}
			l.addBatch(other)
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

func (l *lookup) agentSandboxes(ctx context.Context, ns, name string) error {
	if l.sources.Agent == nil {
		return nil
	}
	gvr := *l.sources.Agent
	objs, err := l.getCustom(ctx, gvr, ns, name)
	if err != nil {
		return err
	}
	for _, u := range objs {
		a := model.AgentSandboxFromUnstructured(u, gvr.Version)
		if !l.addAgent(a) {
			continue
		}
		if a.Selector != "" {
			list, err := l.c.Kube.CoreV1().Pods(a.Namespace).List(ctx, metav1.ListOptions{LabelSelector: a.Selector})
			if err != nil {
				return fmt.Errorf("listing pods of sandbox %s/%s: %w", a.Namespace, a.Name, err)
			}
			for i := range list.Items {
				l.addPod(&list.Items[i])
			}
			continue
		}
		if _, err := l.readPod(ctx, a.Namespace, a.Name); err != nil {
			return err
		}
	}
	return nil
}

// byPod reads the Pod(s) called name in ns ("" = any) and the sandboxes
// they belong to.
func (l *lookup) byPod(ctx context.Context, ns, name string) error {
	pods, err := l.getPods(ctx, ns, name)
	if err != nil {
		return err
	}
	for _, p := range pods {
		l.addPod(p)
		for _, r := range p.OwnerReferences {
			switch r.Kind {
			case "BatchSandbox":
				err = l.batchSandboxes(ctx, p.Namespace, r.Name)
			case "Sandbox":
				err = l.agentSandboxes(ctx, p.Namespace, r.Name)
			}
			if err != nil {
				return err
			}
		}
		if v := p.Labels[osv1.LabelBatchSandboxName]; v != "" {
			if err := l.batchSandboxes(ctx, p.Namespace, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// holders lists, cluster-wide, the Pods holding any address the sandboxes
// record or their Pods have: what a request to that address would reach.
// Where listing every namespace is forbidden, the address's own namespace
// is listed and a note says what went unseen.
func (l *lookup) holders(ctx context.Context) error {
	type address struct{ ns, ip string }
	var addrs []address
	add := func(ns, ip string) {
		if ip != "" && !l.served(ip) && !slices.ContainsFunc(addrs, func(a address) bool { return a.ip == ip }) {
			addrs = append(addrs, address{ns, ip})
		}
	}
	for _, b := range l.batch {
		for _, ip := range b.Endpoints {
			add(b.Namespace, ip)
		}
	}
	for _, a := range l.agents {
		for _, ip := range a.PodIPs {
			add(a.Namespace, ip)
		}
	}
	for _, p := range l.pods {
		add(p.Namespace, p.Status.PodIP)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, a := range addrs {
		g.Go(func() error {
			pods, limited, err := l.c.PodsWithIP(gctx, a.ns, a.ip)
			if err != nil {
				return err
			}
			if limited {
				l.note("listing pods in other namespaces is forbidden: only namespace %s was checked for other holders of %s", a.ns, a.ip)
			}
			for i := range pods {
				l.addPod(&pods[i])
			}
			return nil
		})
	}
	return g.Wait()
}

// served reports whether one of the Pods read serves ip: Running at that
// address, not being deleted, on the Pod network. No other live Pod can
// hold an address a live Pod holds, so the cluster-wide list (a scan of
// every Pod on the server, the one read of a lookup that grows with the
// cluster) is needed only for addresses no Pod of the sandbox serves now:
// a dead sandbox's, a re-created Pod's old one.
func (l *lookup) served(ip string) bool {
	return slices.ContainsFunc(l.pods, func(p *model.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && !p.Spec.HostNetwork && p.HasIP(ip)
	})
}

func podPointers(items []corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// SelectOptions choose the sandboxes of a fleet operation.
type SelectOptions struct {
	Namespace string // "" = every namespace
	// Selector is a label selector over the sandbox objects (BatchSandboxes,
	// agent Sandboxes, plain-Pod sandboxes); "" with Pool set means all.
	Selector string
	// Pool keeps only BatchSandboxes whose spec.poolRef is Pool.
	Pool string
	// PodSelector picks plain-Pod sandboxes, as WatcherOptions.PodSelector.
	PodSelector string
}

// SelectSandboxes lists the keys of the sandboxes a fleet operation runs
// on. Only names are needed, so BatchSandboxes and agent Sandboxes are
// listed as metadata unless their pool must be read.
func (c *Clients) SelectSandboxes(ctx context.Context, o SelectOptions) ([]string, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	sources, err := c.Sources(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return nil, fmt.Errorf("invalid selector %q: %w", o.Selector, err)
	}
	var keys []string
	lo := metav1.ListOptions{LabelSelector: o.Selector}
	if sources.BatchSandbox {
		list, err := c.Dynamic.Resource(BatchSandboxGVR).Namespace(o.Namespace).List(ctx, lo)
		if err != nil {
			return nil, fmt.Errorf("listing batchsandboxes: %w", err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			if o.Pool != "" {
				if ref, _, _ := unstructured.NestedString(u.Object, "spec", "poolRef"); ref != o.Pool {
					continue
				}
			}
			keys = append(keys, model.SandboxKey(model.EngineBatchSandbox, u.GetNamespace(), u.GetName()))
		}
	}
	if o.Pool != "" { // only BatchSandboxes and agent-sandbox warm pools' Sandboxes come from a pool
		more, err := c.warmPoolSandboxes(ctx, sources, o)
		return append(keys, more...), err
	}
	if sources.Agent != nil {
		mc, err := metadata.NewForConfig(c.Config)
		if err != nil {
			return nil, fmt.Errorf("metadata client: %w", err)
		}
		list, err := mc.Resource(*sources.Agent).Namespace(o.Namespace).List(ctx, lo)
		if err != nil {
			return nil, fmt.Errorf("listing agent sandboxes: %w", err)
		}
		for i := range list.Items {
			keys = append(keys, model.SandboxKey(model.EngineAgent, list.Items[i].Namespace, list.Items[i].Name))
		}
	}
	plain := o.PodSelector
	if plain == "" {
		plain = osv1.LabelSandboxID
	}
	sel := plain
	if o.Selector != "" {
		sel = o.Selector + "," + plain
	}
	pods, err := c.Kube.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing plain-Pod sandboxes: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if engineOwned(p) {
			continue // its sandbox is the engine object, listed above
		}
		keys = append(keys, model.SandboxKey(model.EnginePod, p.Namespace, p.Name))
	}
	return keys, nil
}

// engineOwned: a Pod an engine created or allocated is not a plain-Pod sandbox.
func engineOwned(p *corev1.Pod) bool {
	if p.Labels[osv1.LabelBatchSandboxName] != "" {
		return true
	}
	for _, r := range p.OwnerReferences {
		switch r.Kind {
		case "BatchSandbox", "Pool", "Sandbox":
			return true
		}
	}
	return false
}
