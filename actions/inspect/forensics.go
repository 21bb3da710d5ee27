package inspect

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/forensics"
)

// Restart verdicts have one owner: Forensics.Explain, which the sweep and
// the detail view (through ui.Backend) both call, so a Pod reads the same in
// both. It reads what forensics.Classify needs beyond the snapshot: the
// Pod live (the snapshot's lacks running containers' limits), its Events,
// its node with the node's Events, and the sibling Pods a control is drawn
// from, read live for their limits.

// Lookup is what Forensics reads live (satisfied by *kube.Clients).
type Lookup interface {
	LivePod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	PodEvents(ctx context.Context, namespace, pod string) ([]corev1.Event, error)
	Node(ctx context.Context, name string) (*corev1.Node, error)
	NodeEvents(ctx context.Context, node string) ([]corev1.Event, error)
}

var _ Lookup = (*kube.Clients)(nil)

// Sibling bounds: a control group of this size says as much as a larger one,
// and a pool of 50,000 Pods must not make each restart cost 50,000 compares.
//
// The snapshot's Pods carry no memory limit while their containers run, so
// the control candidates (same image and probe) are read live, at most
// maxControlSiblings per restart and once per sweep, for their limits.
const (
	maxControlSiblings = 10
	maxOtherSiblings   = 20
)

// Forensics explains restarts against one snapshot. Each node and each
// control candidate is read at most once per Forensics, however many Pods
// ask for it; Explain is safe for concurrent use.
type Forensics struct {
	lookup Lookup
	groups map[string][]*model.Pod
	nodes  *nodeCache
	sibs   *siblingCache
}

// NewForensics returns a Forensics over snap's sibling groups, reading
// through lookup (nil: only what the snapshot shows).
func NewForensics(snap *fleet.Snapshot, lookup Lookup) *Forensics {
	f := &Forensics{lookup: lookup, groups: map[string][]*model.Pod{},
		nodes: &nodeCache{lookup: lookup}, sibs: &siblingCache{lookup: lookup}}
	if snap != nil {
		f.groups = siblingGroups(snap)
	}
	return f
}

// Explain classifies the restarts of pod, one of sb's Pods: the notices,
// and a note when the live Pod could not be read.
func (f *Forensics) Explain(ctx context.Context, sb *model.Sandbox, pod *model.Pod) ([]model.Notice, string) {
	lookup, nodes, sibs := f.lookup, f.nodes, f.sibs
	var extra []model.Evidence
	var note string
	var livePod *corev1.Pod // the full Pod, for the control's resource limits
	if lookup != nil {
		full, err := lookup.LivePod(ctx, pod.Namespace, pod.Name)
		switch {
		case err == nil && full.UID == pod.UID:
			pod, livePod = model.SlimPodWithLimits(full), full
		case err == nil || apierrors.IsNotFound(err):
			// Replaced or gone since the snapshot: explain what the snapshot saw.
		default:
			note = fmt.Sprintf("pod %s/%s: %v", pod.Namespace, pod.Name, err)
		}
	}
	var events []corev1.Event
	if lookup != nil {
		evs, err := lookup.PodEvents(ctx, pod.Namespace, pod.Name)
		if err != nil {
			extra = append(extra, model.Evidence{Kind: model.Observed, Text: "the Pod's Events could not be read: " + err.Error()})
		} else {
			events = evs
		}
	}
	var node *corev1.Node
	if pod.Spec.NodeName != "" {
		e := nodes.get(ctx, pod.Spec.NodeName)
		node = e.node
		events = append(events, e.events...)
		if e.err != nil {
			extra = append(extra, model.Evidence{Kind: model.Observed, Text: "node " + pod.Spec.NodeName + " could not be read: " + e.err.Error()})
		}
	}
	control, other := siblingsOf(pod, f.groups[groupKey(sb)])
	var want corev1.ResourceList
	if livePod != nil && len(pod.Spec.Containers) > 0 {
		want = containerLimits(livePod, mainOf(pod).Name)
	}
	control, differ, names := sibs.withLimits(ctx, control, want, livePod != nil)
	if differ > 0 {
		extra = append(extra, model.Evidence{Kind: model.Observed,
			Text: fmt.Sprintf("%d sibling(s) with the same image and liveness probe differ in resource limits (%s): not used as a control", differ, strings.Join(names, ", "))})
	}
	notices := forensics.Classify(pod, events, node, append(control, other...))
	for i := range notices {
		notices[i].Evidence = append(notices[i].Evidence, extra...)
	}
	return notices, note
}

// onceEach holds one value per key, computed by the first caller that asks
// for the key; callers asking for it meanwhile wait for that value.
type onceEach[V any] struct {
	mu      sync.Mutex
	entries map[string]func() V
}

func (m *onceEach[V]) get(key string, compute func() V) V {
	m.mu.Lock()
	value, ok := m.entries[key]
	if !ok {
		if m.entries == nil {
			m.entries = map[string]func() V{}
		}
		value = sync.OnceValue(compute)
		m.entries[key] = value
	}
	m.mu.Unlock()
	return value()
}

type nodeEntry struct {
	node   *corev1.Node
	events []corev1.Event
	err    error
}

// nodeCache reads each node (and its Events) at most once per sweep.
type nodeCache struct {
	lookup  Lookup
	entries onceEach[*nodeEntry]
}

func (c *nodeCache) get(ctx context.Context, name string) *nodeEntry {
	return c.entries.get(name, func() *nodeEntry {
		e := &nodeEntry{}
		if c.lookup == nil {
			return e
		}
		e.node, e.err = c.lookup.Node(ctx, name)
		if e.err != nil {
			return e
		}
		// Node Events are extra evidence; a namespace-scoped user may not
		// read them, which is not worth failing the node for.
		e.events, _ = c.lookup.NodeEvents(ctx, name)
		return e
	})
}

type siblingEntry struct {
	pod    *model.Pod                     // nil when it could not be read or was replaced
	limits map[string]corev1.ResourceList // per container, from the full Pod
}

// siblingCache reads each control candidate live at most once per sweep:
// the snapshot's slim Pods lack the resource limits of running containers,
// which a control must share.
type siblingCache struct {
	lookup  Lookup
	entries onceEach[*siblingEntry]
}

// withLimits replaces each candidate with its live form (memory limit
// included) and keeps only those whose main container's resource limits
// equal want (when check); the others are named in differ. A candidate that
// cannot be read or was replaced is dropped, since comparing it would be a
// guess. Without a lookup the candidates are kept as they are.
func (c *siblingCache) withLimits(ctx context.Context, candidates []*model.Pod, want corev1.ResourceList, check bool) (out []*model.Pod, differ int, names []string) {
	if c == nil || c.lookup == nil {
		return candidates, 0, nil
	}
	out = make([]*model.Pod, 0, len(candidates))
	for _, p := range candidates {
		e := c.entries.get(podKey(p.Namespace, p.Name), func() *siblingEntry {
			e := &siblingEntry{}
			full, err := c.lookup.LivePod(ctx, p.Namespace, p.Name)
			if err == nil && full.UID == p.UID {
				e.pod = model.SlimPodWithLimits(full)
				e.limits = map[string]corev1.ResourceList{}
				for _, ct := range full.Spec.Containers {
					e.limits[ct.Name] = ct.Resources.Limits
				}
			}
			return e
		})
		if e.pod == nil || len(e.pod.Spec.Containers) == 0 {
			continue
		}
		if check && !sameLimits(e.limits[mainOf(e.pod).Name], want) {
			differ++
			if len(names) < 3 {
				names = append(names, p.Name)
			}
			continue
		}
		out = append(out, e.pod)
	}
	return out, differ, names
}

func containerLimits(p *corev1.Pod, name string) corev1.ResourceList {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return c.Resources.Limits
		}
	}
	return nil
}

// sameLimits: the same resources limited, each to the same quantity.
func sameLimits(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

// groupKey: siblings are the Pods of the same engine and pool (or, without
// a pool, the same engine) in the same namespace.
func groupKey(sb *model.Sandbox) string {
	if sb.Pool != "" {
		return "pool\x00" + sb.Namespace() + "\x00" + sb.Pool
	}
	return string(sb.Engine()) + "\x00" + sb.Namespace()
}

func siblingGroups(snap *fleet.Snapshot) map[string][]*model.Pod {
	groups := map[string][]*model.Pod{}
	for _, sb := range snap.Sandboxes() {
		k := groupKey(sb)
		for _, sl := range sb.Slots {
			if sl.Pod != nil {
				groups[k] = append(groups[k], sl.Pod)
			}
		}
	}
	return groups
}

// siblingsOf picks the candidates Forensics compares against: up to
// maxControlSiblings with the same main image and liveness probe (the
// control candidates; their memory limits are read live), and a few that
// differ (so the report can say they were not used).
func siblingsOf(pod *model.Pod, group []*model.Pod) (control, other []*model.Pod) {
	if len(group) <= 1 || len(pod.Spec.Containers) == 0 {
		return nil, nil
	}
	main := mainOf(pod)
	for _, s := range group {
		if s.UID == pod.UID && s.Name == pod.Name {
			continue
		}
		sc := containerNamed(s, main.Name)
		if sc != nil && sc.Image == main.Image && equality.Semantic.DeepEqual(sc.LivenessProbe, main.LivenessProbe) {
			if len(control) < maxControlSiblings {
				control = append(control, s)
			}
		} else if len(other) < maxOtherSiblings {
			other = append(other, s)
		}
		if len(control) == maxControlSiblings {
			break // enough for a control; the rest would only add compares
		}
	}
	return control, other
}

// mainOf is the container forensics compares siblings on: the first one
// with something to explain, else OpenSandbox's main container, else the first.
func mainOf(pod *model.Pod) *model.Container {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.RestartCount > 0 || cs.LastTerminationState.Terminated != nil || cs.State.Terminated != nil {
			if c := containerNamed(pod, cs.Name); c != nil {
				return c
			}
		}
	}
	if c := containerNamed(pod, osv1.ContainerSandbox); c != nil {
		return c
	}
	return &pod.Spec.Containers[0]
}

func containerNamed(pod *model.Pod, name string) *model.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// podKey names a Pod in the caches.
func podKey(namespace, name string) string { return namespace + "/" + name }

// ExplainSandbox is Explain for each of sb's Pods that has a restart or a
// kill to explain (forensics.Needed), as the detail view shows them: the
// notices, and notes where a Pod could not be read live.
func (f *Forensics) ExplainSandbox(ctx context.Context, sb *model.Sandbox) ([]model.Notice, []string) {
	var out []model.Notice
	var notes []string
	for i := range sb.Slots {
		pod := sb.Slots[i].Pod
		if pod == nil || !forensics.Needed(pod) {
			continue
		}
		notices, note := f.Explain(ctx, sb, pod)
		out = append(out, notices...)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return out, notes
}
