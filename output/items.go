package output

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Resource is what `sandscope get` lists.
type Resource string

// The resources `sandscope get` lists.
const (
	Sandboxes Resource = "sandboxes"
	Pods      Resource = "pods"
	Pools     Resource = "pools"
	Claims    Resource = "claims"
	Findings  Resource = "findings"
)

// Resources are the resources' names, as completion offers them.
var Resources = []string{string(Sandboxes), string(Pods), string(Pools), string(Claims), string(Findings)}

var resourceNames = map[string]Resource{
	"sandboxes": Sandboxes, "sandbox": Sandboxes, "sb": Sandboxes, "sbx": Sandboxes,
	"pods": Pods, "pod": Pods, "po": Pods,
	"pools": Pools, "pool": Pools, "warmpools": Pools, "swp": Pools,
	"claims": Claims, "claim": Claims, "sandboxclaims": Claims,
	"findings": Findings, "finding": Findings,
}

// ResourceTypes names what get lists, with the short names it reads.
const ResourceTypes = "sandboxes (sb), pods (po), pools, claims or findings"

// ParseResource reads a resource name, its singular or its short name
// (sb, po), as kubectl reads `get po`.
func ParseResource(s string) (Resource, error) {
	if r, ok := resourceNames[strings.ToLower(s)]; ok {
		return r, nil
	}
	return "", fmt.Errorf("unknown resource %q: want %s", s, ResourceTypes)
}

// Query picks what `get` prints from a snapshot.
type Query struct {
	Resource Resource
	// Names keeps only these names; for findings, the findings of these
	// sandboxes. Empty keeps everything.
	Names []string
	// Selector keeps only objects whose labels match; findings match by
	// the labels of their sandbox. Nil keeps everything.
	Selector labels.Selector
}

// Items is the answer to a Query, in the snapshot's order.
type Items struct {
	Resource  Resource
	Sandboxes []*model.Sandbox
	Pods      []*model.Pod
	Pools     []*model.Pool
	WarmPools []model.WarmPoolRow // agent-sandbox SandboxWarmPools, listed with Pools
	Claims    []model.ClaimRow
	Findings  []model.Finding
	// Missing are the names asked for that nothing matched.
	Missing []string
	snap    *fleet.Snapshot
}

// Select answers q from snap; findings are those of snap's analysis.
func Select(snap *fleet.Snapshot, findings []model.Finding, q Query) *Items {
	it := &Items{Resource: q.Resource, snap: snap}
	found := map[string]bool{}
	keep := func(name string, l labels.Labels) bool {
		if len(q.Names) > 0 && !slices.Contains(q.Names, name) {
			return false
		}
		if q.Selector != nil && !q.Selector.Matches(l) {
			return false
		}
		found[name] = true
		return true
	}
	switch q.Resource {
	case Sandboxes:
		for _, sb := range snap.Sandboxes() {
			if keep(sb.Name(), labels.Set(sb.Labels().Map())) {
				it.Sandboxes = append(it.Sandboxes, sb)
			}
		}
		// By namespace and name, as kubectl lists; the snapshot's order
		// puts the engine first.
		slices.SortStableFunc(it.Sandboxes, func(a, b *model.Sandbox) int {
			return cmp.Or(strings.Compare(a.Namespace(), b.Namespace()), strings.Compare(a.Name(), b.Name()))
		})
	case Pods:
		for _, p := range snap.Pods() {
			if keep(p.Name, labels.Set(p.Labels.Map())) {
				it.Pods = append(it.Pods, p)
			}
		}
	case Pools:
		for _, p := range snap.Pools {
			if keep(p.Name, labels.Set(p.Labels.Map())) {
				it.Pools = append(it.Pools, p)
			}
		}
		for _, r := range snap.WarmPoolRows() {
			if keep(r.Pool.Name, labels.Set(r.Pool.Labels.Map())) {
				it.WarmPools = append(it.WarmPools, r)
			}
		}
	case Claims:
		for _, r := range snap.ClaimRows() {
			if keep(r.Claim.Name, labels.Set(r.Claim.Labels.Map())) {
				it.Claims = append(it.Claims, r)
			}
		}
	case Findings:
		sandboxLabels := map[string]labels.Set{}
		if q.Selector != nil {
			for _, sb := range snap.Sandboxes() {
				sandboxLabels[sb.Namespace()+"/"+sb.Name()] = sb.Labels().Map()
			}
		}
		for _, f := range findings {
			if keep(f.Sandbox, sandboxLabels[f.Namespace+"/"+f.Sandbox]) {
				it.Findings = append(it.Findings, f)
			}
		}
	}
	for _, n := range q.Names {
		if !found[n] && !slices.Contains(it.Missing, n) {
			it.Missing = append(it.Missing, n)
		}
	}
	return it
}

// Len is the number of items.
func (it *Items) Len() int {
	return len(it.Sandboxes) + len(it.Pods) + len(it.Pools) + len(it.WarmPools) + len(it.Claims) + len(it.Findings)
}

// Objects are the items in their printed, versioned form (pointers to
// Sandbox, Pod, Pool or Finding).
func (it *Items) Objects() []any {
	out := make([]any, 0, it.Len())
	out = appendObjects(out, it.Sandboxes, SandboxObject)
	out = appendObjects(out, it.Pods, func(p *model.Pod) Pod { return PodObject(p, it.sandboxOf(p)) })
	out = appendObjects(out, it.Pools, PoolObject)
	out = appendObjects(out, it.WarmPools, WarmPoolObject)
	out = appendObjects(out, it.Claims, ClaimObject)
	out = appendObjects(out, it.Findings, FindingObject)
	return out
}

// appendObjects appends each item's printed form to out, as a pointer: the
// unstructured converter that json, yaml and jsonpath read the items
// through takes pointers only.
func appendObjects[T, O any](out []any, items []T, object func(T) O) []any {
	for _, x := range items {
		o := object(x)
		out = append(out, &o)
	}
	return out
}

// sandboxOf names the sandbox a Pod serves, "" when none.
func (it *Items) sandboxOf(p *model.Pod) string {
	if it.snap == nil {
		return ""
	}
	if sb := it.snap.SandboxOfPod(p.Namespace, p.Name); sb != nil {
		return sb.Name()
	}
	return ""
}

// Refs are the Kubernetes objects behind the items, for -o name: what
// kubectl takes back (`kubectl describe $(sandscope get sb -o name)`). A
// sandbox is its BatchSandbox, agent Sandbox or Pod; findings have no
// object of their own.
func (it *Items) Refs() (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{}
	add := func(apiVersion, kind, name string) {
		u := unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		list.Items = append(list.Items, u)
	}
	if it.Resource == Findings {
		return nil, fmt.Errorf("findings have no names: use -o jsonpath, e.g. '{range .items[*]}{.code} {.sandbox}{\"\\n\"}{end}'")
	}
	for _, sb := range it.Sandboxes {
		switch sb.Engine() {
		case model.EngineBatchSandbox:
			add(osv1.SchemeGroupVersion.String(), osv1.KindBatchSandbox, sb.Name())
		case model.EngineAgent:
			add(agentsandbox.GroupName+"/"+agentsandbox.V1beta1, agentsandbox.KindSandbox, sb.Name())
		default:
			add("v1", "Pod", sb.Name())
		}
	}
	for _, p := range it.Pods {
		add("v1", "Pod", p.Name)
	}
	for _, p := range it.Pools {
		add(osv1.SchemeGroupVersion.String(), osv1.KindPool, p.Name)
	}
	for _, r := range it.WarmPools {
		add(agentsandbox.ExtensionsGroup+"/"+agentsandbox.V1beta1, agentsandbox.KindSandboxWarmPool, r.Pool.Name)
	}
	for _, r := range it.Claims {
		add(agentsandbox.ExtensionsGroup+"/"+agentsandbox.V1beta1, agentsandbox.KindSandboxClaim, r.Claim.Name)
	}
	return list, nil
}
