package sweep

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/forensics"
)

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

// Analyze turns a synced snapshot of one context into findings: every
// sandbox notice (at the severity table's level), restart forensics for the
// Pods that restarted or were killed (their RESTARTED notice is replaced by
// the classified one), and, with opts.Probe, the live execd check that
// confirms or clears NOT_EXEC_READY. It returns notes where it was partial.
// Only Pods with something to explain are looked up, never the whole fleet.
func Analyze(ctx context.Context, contextName string, snap *fleet.Snapshot, lookup Lookup, opts Options) ([]model.Finding, []string) {
	opts = opts.withDefaults()
	if snap == nil {
		return []model.Finding{}, nil
	}
	var notes []string

	todo := restartedPods(snap)
	if len(todo) > opts.MaxForensics {
		notes = append(notes, fmt.Sprintf("%s: %d Pods restarted or were killed; forensics ran for the first %d (the rest keep their RESTARTED notice)",
			contextName, len(todo), opts.MaxForensics))
		todo = todo[:opts.MaxForensics]
	}
	explained, fnotes := runForensics(ctx, snap, todo, lookup)
	notes = append(notes, prefixed(contextName, fnotes)...)

	recreated, rnotes := recreationEvents(ctx, snap, lookup)
	notes = append(notes, prefixed(contextName, rnotes)...)

	var probed map[string]error
	if opts.Probe {
		var pnotes []string
		probed, pnotes = runProbes(ctx, snap, opts)
		notes = append(notes, prefixed(contextName, pnotes)...)
	}

	out := make([]model.Finding, 0, snap.NumSandboxes()/8)
	for _, sb := range snap.Sandboxes() {
		probeErr, wasProbed := probed[sb.Key]
		var statusExec *model.Notice
		for i := range sb.Notices {
			n := sb.Notices[i]
			switch {
			case n.Code == model.CodeRestarted && explained[podKey(sb.Namespace(), n.Pod)] != nil:
				continue // replaced by its forensics below
			case n.Code == model.CodeNotExecReady && wasProbed:
				statusExec = &n // the live check decides
				continue
			case n.Code == model.CodePodRecreated && recreated[sb.Key] != nil:
				continue // replaced below, with what the Events add
			}
			out = append(out, model.NewFinding(contextName, sb, n))
		}
		for _, sl := range sb.Slots {
			if sl.Pod == nil {
				continue
			}
			for _, n := range explained[podKey(sb.Namespace(), sl.Pod.Name)] {
				out = append(out, model.NewFinding(contextName, sb, n))
			}
		}
		for _, n := range recreated[sb.Key] {
			out = append(out, model.NewFinding(contextName, sb, n))
		}
		if wasProbed && probeErr != nil {
			out = append(out, model.NewFinding(contextName, sb, liveExecNotice(sb, probeErr, statusExec)))
		}
	}
	for _, x := range snap.ExtensionFindings(opts.Now()) {
		f := model.NewFinding(contextName, nil, x.Notice)
		f.Namespace, f.Sandbox = x.Namespace, x.Sandbox
		out = append(out, f)
	}
	model.SortFindings(out)
	return out, notes
}

// createEventsLookup is the optional part of a Lookup that lists a
// namespace's SuccessfulCreate Events (*kube.Clients has it).
type createEventsLookup interface {
	CreateEvents(ctx context.Context, namespace string) ([]corev1.Event, error)
}

// maxCreateEventNamespaces bounds the namespaces whose SuccessfulCreate
// Events are read (one paged list each).
const maxCreateEventNamespaces = 50

// recreationEvents reads the SuccessfulCreate Events of the namespaces of
// the sandboxes whose controller creates their Pods, and returns, per
// sandbox key, its POD_RECREATED notices with what the Events add (only
// for the sandboxes where they add something).
func recreationEvents(ctx context.Context, snap *fleet.Snapshot, lookup Lookup) (map[string][]model.Notice, []string) {
	cl, ok := lookup.(createEventsLookup)
	if !ok {
		return nil, nil
	}
	byNS := map[string][]*model.Sandbox{}
	var order []string
	for _, sb := range snap.Sandboxes() {
		if sb.Engine() == model.EnginePod || sb.Pool != "" || sb.PrimarySlot() == nil || sb.PrimarySlot().Pod == nil {
			continue
		}
		if _, seen := byNS[sb.Namespace()]; !seen {
			order = append(order, sb.Namespace())
		}
		byNS[sb.Namespace()] = append(byNS[sb.Namespace()], sb)
	}
	var notes []string
	if len(order) > maxCreateEventNamespaces {
		notes = append(notes, fmt.Sprintf("SuccessfulCreate Events read for %d of %d namespaces: POD_RECREATED elsewhere rests on timestamps alone", maxCreateEventNamespaces, len(order)))
		order = order[:maxCreateEventNamespaces]
	}
	out := map[string][]model.Notice{}
	for _, ns := range order {
		events, err := cl.CreateEvents(ctx, ns)
		if err != nil {
			notes = append(notes, err.Error()+": POD_RECREATED rests on timestamps alone there")
			continue
		}
		for _, sb := range byNS[ns] {
			if ns, changed := forensics.RecreatedFromEvents(sb, events); changed {
				out[sb.Key] = ns
			}
		}
	}
	return out, notes
}

type podRef struct {
	sb  *model.Sandbox
	pod *model.Pod
}

func podKey(namespace, name string) string { return namespace + "/" + name }

// restartedPods lists, once each, the Pods behind sandboxes that have a
// restart or a kill to explain.
func restartedPods(snap *fleet.Snapshot) []podRef {
	var out []podRef
	seen := map[string]bool{}
	for _, sb := range snap.Sandboxes() {
		for _, sl := range sb.Slots {
			p := sl.Pod
			if p == nil || !forensics.Needed(p) {
				continue
			}
			k := podKey(p.Namespace, p.Name)
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, podRef{sb: sb, pod: p})
		}
	}
	return out
}

// runForensics explains each Pod of todo, DefaultForensicsWorkers at a time:
// the full Pod (the snapshot's is slimmed: no resources), its Events, and its
// Node with the Node's Events (read once per node).
func runForensics(ctx context.Context, snap *fleet.Snapshot, todo []podRef, lookup Lookup) (map[string][]model.Notice, []string) {
	explained := make(map[string][]model.Notice, len(todo))
	if len(todo) == 0 {
		return explained, nil
	}
	groups := siblingGroups(snap)
	nodes := &nodeCache{lookup: lookup}
	sibs := &siblingCache{lookup: lookup}
	var mu sync.Mutex
	var notes []string
	g := new(errgroup.Group)
	g.SetLimit(DefaultForensicsWorkers)
	for _, ref := range todo {
		g.Go(func() error {
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			notices, note := explain(ctx, ref, groups, nodes, sibs, lookup)
			mu.Lock()
			defer mu.Unlock()
			if len(notices) > 0 {
				explained[podKey(ref.pod.Namespace, ref.pod.Name)] = notices
			}
			if note != "" {
				notes = append(notes, note)
			}
			return nil
		})
	}
	_ = g.Wait() // the workers report through explained and notes, never an error
	return explained, notes
}

func explain(ctx context.Context, ref podRef, groups map[string][]*model.Pod, nodes *nodeCache, sibs *siblingCache, lookup Lookup) ([]model.Notice, string) {
	pod := ref.pod
	var extra []model.Evidence
	var note string
	var livePod *corev1.Pod // the full Pod, for the control's resource limits
	if lookup != nil {
		full, err := lookup.LivePod(ctx, pod.Namespace, pod.Name)
		switch {
		case err == nil && full.UID == pod.UID:
			pod, livePod = forensics.SlimPod(full), full
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
	control, other := siblingsOf(pod, groups[groupKey(ref.sb)])
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
				e.pod = forensics.SlimPod(full)
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

// ---- live execd probe --------------------------------------------------------

// runProbes pings execd on every Running sandbox whose primary address is
// verified (identity OK: the address belongs to the sandbox's own Pod; a
// probe to a taken address would test a stranger's daemon). Bounded by
// MaxProbes, DefaultProbeWorkers in parallel, ProbeTimeout each.
func runProbes(ctx context.Context, snap *fleet.Snapshot, opts Options) (map[string]error, []string) {
	type target struct{ key, addr string }
	var targets []target
	skipped := 0
	for _, sb := range snap.Sandboxes() {
		sl := sb.PrimarySlot()
		if sb.State != model.StateRunning || sl == nil || sl.Identity != model.IdentityOK || sl.Pod == nil || sl.Pod.Status.PodIP == "" {
			continue
		}
		if len(targets) >= opts.MaxProbes {
			skipped++
			continue
		}
		targets = append(targets, target{sb.Key, net.JoinHostPort(sl.Pod.Status.PodIP, strconv.Itoa(execd.DefaultPort))})
	}
	results := make(map[string]error, len(targets))
	var notes []string
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("execd probe capped at %d sandboxes; %d not probed", opts.MaxProbes, skipped))
	}
	var mu sync.Mutex
	g := new(errgroup.Group)
	g.SetLimit(DefaultProbeWorkers)
	for _, t := range targets {
		g.Go(func() error {
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			pctx, cancel := context.WithTimeout(ctx, opts.ProbeTimeout)
			defer cancel()
			err := opts.Ping(pctx, t.addr)
			if err != nil {
				err = fmt.Errorf("GET http://%s/ping: %w", t.addr, err)
			}
			mu.Lock()
			defer mu.Unlock()
			results[t.key] = err
			return nil
		})
	}
	_ = g.Wait() // each probe's outcome is in results
	return results, notes
}

func execdPing(ctx context.Context, hostPort string) error {
	c := &execd.Client{BaseURL: "http://" + hostPort}
	return c.Ping(ctx)
}

// liveExecNotice is NOT_EXEC_READY from the live check, keeping what the
// status said when it also pointed there.
func liveExecNotice(sb *model.Sandbox, probeErr error, fromStatus *model.Notice) model.Notice {
	n := model.Notice{Code: model.CodeNotExecReady, Severity: model.SeverityWarning,
		Message:  "Running, but its exec daemon does not answer: " + probeErr.Error(),
		Evidence: []model.Evidence{{Kind: model.Observed, Text: probeErr.Error()}}}
	if sl := sb.PrimarySlot(); sl != nil && sl.Pod != nil {
		n.Pod = sl.Pod.Name
	}
	if fromStatus != nil {
		n.Evidence = append(n.Evidence, fromStatus.Evidence...)
	}
	return n
}

func prefixed(contextName string, notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = contextName + ": " + n
	}
	return out
}
