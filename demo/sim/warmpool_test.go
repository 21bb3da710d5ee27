package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// The simulated extensions controller writes what the facts file says:
// members <pool>-xxxxx owned by the pool and labelled with its hash; a
// claim adopts one that keeps its name and Pod, owned by the claim now,
// without the pool label, with claim-uid; the claim names it (annotation
// and status.sandbox) and the pool replaces it; a claim on a pool with no
// member that has podIPs gets a Sandbox named after it.
func TestWarmPoolsAndClaimsAsTheControllerWrites(t *testing.T) {
	_, kube, dyn, _ := run(t, Config{Seed: 3, WarmPools: true, ChurnPerHour: -1, PoolBuffer: -1}, 2*time.Minute)
	ctx := context.Background()
	list := func(resource string) []unstructured.Unstructured {
		l, err := dyn.Resource(ExtensionGVR(resource, "v1beta1")).Namespace("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	sbs, err := dyn.Resource(AgentSandboxGVR("v1beta1")).Namespace("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]unstructured.Unstructured{}
	for _, sb := range sbs.Items {
		byName[sb.GetName()] = sb
	}
	owner := func(u unstructured.Unstructured) (kind, name string) {
		refs := u.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("%s: ownerReferences %+v, want one controller", u.GetName(), refs)
			return "", ""
		}
		return refs[0].Kind, refs[0].Name
	}
	members := map[string]int{}
	for _, sb := range sbs.Items {
		kind, name := owner(sb)
		if kind != agentsandbox.KindSandboxWarmPool {
			continue
		}
		members[name]++
		if !strings.HasPrefix(sb.GetName(), name+"-") || len(sb.GetName()) != len(name)+6 {
			t.Errorf("member %s of %s: not <pool>-xxxxx", sb.GetName(), name)
		}
		if sb.GetLabels()[agentsandbox.LabelWarmPoolSandbox] != poolHash(name) {
			t.Errorf("member %s: labels %v", sb.GetName(), sb.GetLabels())
		}
		if pod, err := kube.CoreV1().Pods(sb.GetNamespace()).Get(ctx, sb.GetName(), metav1.GetOptions{}); err != nil || pod.OwnerReferences[0].Name != sb.GetName() {
			t.Errorf("member %s: its Pod (named like it, owned by it): %v", sb.GetName(), err)
		}
	}
	if members["agents-warm"] != 3 || members["agents-dry"] != 1 {
		t.Errorf("free members %v, want agents-warm 3 (replaced after adoption), agents-dry 1", members)
	}
	claims := list(agentsandbox.ResourceClaims)
	if len(claims) != 3 {
		t.Fatalf("%d claims, want 3", len(claims))
	}
	for _, c := range claims {
		name, _, _ := unstructured.NestedString(c.Object, "status", "sandbox", "name")
		if c.GetAnnotations()[agentsandbox.AnnotationSandboxName] != name || name == "" {
			t.Errorf("claim %s: annotation %v, status.sandbox.name %q", c.GetName(), c.GetAnnotations(), name)
			continue
		}
		sb, ok := byName[name]
		if !ok {
			t.Errorf("claim %s: its Sandbox %s does not exist", c.GetName(), name)
			continue
		}
		if kind, owner := owner(sb); kind != agentsandbox.KindSandboxClaim || owner != c.GetName() {
			t.Errorf("claim %s: Sandbox %s owned by %s %s", c.GetName(), name, kind, owner)
		}
		if _, pooled := sb.GetLabels()[agentsandbox.LabelWarmPoolSandbox]; pooled {
			t.Errorf("claim %s: Sandbox %s keeps the pool label", c.GetName(), name)
		}
		pool, _, _ := unstructured.NestedString(c.Object, "spec", "warmPoolRef", "name")
		switch pool {
		case "agents-warm": // adopted: the pool-generated name, claim-uid set
			if !strings.HasPrefix(name, "agents-warm-") || sb.GetLabels()[agentsandbox.LabelClaimUID] != string(c.GetUID()) {
				t.Errorf("claim %s adopted %s, labels %v", c.GetName(), name, sb.GetLabels())
			}
		case "agents-dry": // no member with podIPs: a cold Sandbox named after the claim
			if name != c.GetName() {
				t.Errorf("claim %s on the dry pool: Sandbox %s, want one named after the claim", c.GetName(), name)
			}
		}
	}
	for _, p := range list(agentsandbox.ResourceWarmPools) {
		replicas, _, _ := unstructured.NestedInt64(p.Object, "status", "replicas")
		ready, _, _ := unstructured.NestedInt64(p.Object, "status", "readyReplicas")
		want := map[string][2]int64{"agents-warm": {3, 3}, "agents-dry": {1, 0}}[p.GetName()]
		if replicas != want[0] || ready != want[1] {
			t.Errorf("pool %s status replicas %d ready %d, want %v", p.GetName(), replicas, ready, want)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(p.Object, "status", "claimed"); found {
			t.Errorf("pool %s: a claimed count the controller does not write", p.GetName())
		}
	}
}

// The warm-pool controller deletes a member not Ready 5 minutes after it
// was made and makes another at once; a Ready member stays. agents-dry's
// members never get a node: each lives 5 minutes and is replaced in the
// same instant, so the pool always holds one member, never older than 5
// minutes; agents-warm's ready members are never deleted.
func TestWarmPoolReplacesMembersStuckUnready(t *testing.T) {
	_, _, _, ops := run(t, Config{Seed: 3, WarmPools: true, ChurnPerHour: -1, PoolBuffer: -1}, 11*time.Minute)
	made := map[string]time.Time{}
	var lives []time.Duration
	var replacedAt []time.Time
	for _, o := range ops {
		f := strings.Fields(o)
		if len(f) < 4 || f[2] != "sandboxes" || !strings.HasPrefix(f[3], "sandboxes/agents-") {
			continue
		}
		at, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f[3], "sandboxes/")
		switch f[1] {
		case "create":
			made[name] = at
			if n := len(replacedAt); n > 0 && strings.HasPrefix(name, "agents-dry-") && !at.Equal(replacedAt[n-1]) {
				t.Errorf("replacement %s made at %s, its predecessor deleted at %s", name, at, replacedAt[n-1])
			}
		case "delete":
			if !strings.HasPrefix(name, "agents-dry-") {
				t.Errorf("ready member %s deleted: %s", name, o)
				continue
			}
			lives = append(lives, at.Sub(made[name]))
			replacedAt = append(replacedAt, at)
		}
	}
	if len(lives) != 2 {
		t.Fatalf("agents-dry members replaced %d times in 11 minutes, want 2: %v", len(lives), lives)
	}
	for _, d := range lives {
		if d <= 5*time.Minute || d > 5*time.Minute+2*time.Second {
			t.Errorf("a stuck member lived %s, want just over 5m (the pool looks every 2 s)", d)
		}
	}
}

// A SandboxClaim written by others (sandscope's create --warm-pool) is
// served as the controller serves any: on a pool with free members it
// adopts one that has podIPs (the Sandbox keeps its pool-generated name,
// is owned by the claim now, carries claim-uid, loses the pool label), the
// claim names it, Ready, and the pool replaces the member; deleting the
// claim takes its Sandbox with it.
func TestClaimByOthersBindsAFreeMember(t *testing.T) {
	r := &adoptionRun{t: t, at: t0}
	r.kube, r.dyn = newFakes()
	s, err := New(r.kube, r.dyn, Config{Seed: 3, Namespaces: []string{"sbx"}, WarmPools: true, ChurnPerHour: -1, PoolBuffer: -1,
		EmulateServer: true, AdoptEvery: time.Second, Clock: testingclock.NewFakeClock(t0), OnOp: func(o Op) { r.ops = append(r.ops, o.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.advance(time.Minute) // members Ready, the simulation's own claims bound
	sandboxes := r.dyn.Resource(AgentSandboxGVR("v1beta1")).Namespace("sbx")
	claims := r.dyn.Resource(ExtensionGVR(agentsandbox.ResourceClaims, "v1beta1")).Namespace("sbx")
	members := func() map[string]bool {
		l, err := sandboxes.List(ctx, metav1.ListOptions{LabelSelector: agentsandbox.LabelWarmPoolSandbox + "=" + poolHash("agents-warm")})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, u := range l.Items {
			out[u.GetName()] = true
		}
		return out
	}
	free := members()
	if len(free) != 3 {
		t.Fatalf("agents-warm has %d free members, want 3", len(free))
	}
	claim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ExtensionGVR(agentsandbox.ResourceClaims, "v1beta1").GroupVersion().String(), "kind": agentsandbox.KindSandboxClaim,
		"metadata": map[string]any{"name": "claim-by-sandscope", "namespace": "sbx", "labels": map[string]any{kube.LabelCreatedBy: "sandscope"}},
		"spec":     map[string]any{"warmPoolRef": map[string]any{"name": "agents-warm"}},
	}}
	if _, err := claims.Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.advance(2 * time.Second)
	c, err := claims.Get(ctx, "claim-by-sandscope", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := unstructured.NestedString(c.Object, "status", "sandbox", "name")
	if !free[name] || c.GetAnnotations()[agentsandbox.AnnotationSandboxName] != name {
		t.Fatalf("claim bound to %q (annotation %v); want one of the free members %v", name, c.GetAnnotations(), free)
	}
	if cl := model.SandboxClaimFromUnstructured(c); cl.State() != model.ClaimBound || cl.ReadyCondition() == nil || cl.ReadyCondition().Status != "True" {
		t.Errorf("claim state %s, Ready %+v; want bound and Ready", cl.State(), cl.ReadyCondition())
	}
	sb, err := sandboxes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refs := sb.GetOwnerReferences()
	if len(refs) != 1 || refs[0].Kind != agentsandbox.KindSandboxClaim || refs[0].Name != c.GetName() || refs[0].UID != c.GetUID() || c.GetUID() == "" {
		t.Errorf("Sandbox %s owned by %+v; want the claim (UID %q)", name, refs, c.GetUID())
	}
	if l := sb.GetLabels(); l[agentsandbox.LabelClaimUID] != string(c.GetUID()) || l[agentsandbox.LabelWarmPoolSandbox] != "" {
		t.Errorf("Sandbox %s labels %v; want claim-uid and no pool label", name, l)
	}
	if now := members(); len(now) != 3 || now[name] {
		t.Errorf("free members after the claim: %v; want 3 without %s (replaced)", now, name)
	}

	if err := claims.Delete(ctx, c.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.advance(2 * time.Second)
	if _, err := sandboxes.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted claim's Sandbox %s: %v; want it gone with the claim", name, err)
	}
}
