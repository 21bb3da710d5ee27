package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/api/agentsandbox"
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
