package upstreamcrds_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// ownedBy makes obj's controller owner.
func ownedBy(obj *unstructured.Unstructured, owner *unstructured.Unstructured) {
	yes := true
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(),
		Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}})
}

// warmMember makes what the warm-pool controller makes for pool: a
// Sandbox <pool>-<suffix> owned by the pool, labelled with the pool's
// hash, and its Pod; running at ip when ip is set.
func warmMember(t *testing.T, c *testcluster.Cluster, ns string, pool *unstructured.Unstructured, suffix, ip string) *unstructured.Unstructured {
	t.Helper()
	ct, kl := c.Controller(t), c.Kubelet(t)
	name := pool.GetName() + "-" + suffix
	obj := testcluster.AgentSandbox(name, testcluster.SandboxPod(name, "python:3.12-slim"))
	ownedBy(obj, pool)
	obj.SetLabels(map[string]string{agentsandbox.LabelWarmPoolSandbox: "h" + pool.GetName()})
	sb := ct.Create(testcluster.AgentSandboxGVR, ns, obj)
	kl.CreatePod(ns, agentPod(sb, "h"+name))
	status := map[string]any{"selector": agentsandbox.LabelNameHash + "=h" + name, "conditions": readyCondition("False", "DependenciesNotReady")}
	if ip != "" {
		kl.SetRunning(ns, name, ip)
		status["podIPs"], status["nodeName"], status["conditions"] = []string{ip}, testcluster.DefaultNode, readyCondition("True", "DependenciesReady")
	}
	return ct.SetStatus(testcluster.AgentSandboxGVR, ns, name, status)
}

// claimCondition is a claim's Ready condition as the real schema wants it.
func claimCondition(status, reason string) []map[string]any {
	return []map[string]any{{"type": "Ready", "status": status, "reason": reason, "message": reason,
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}}
}

// adopt does what the claim controller does when it adopts a member: the
// Sandbox keeps its name and Pod, its ownerReference moves from the pool to
// the claim, the pool label goes, claim-uid is set; the claim gets the
// sandbox-name annotation and status.sandbox.
func adopt(t *testing.T, c *testcluster.Cluster, ns string, claim, sb *unstructured.Unstructured, ip string) {
	t.Helper()
	ct := c.Controller(t)
	cur := ct.Get(testcluster.AgentSandboxGVR, ns, sb.GetName())
	ownedBy(cur, claim)
	cur.SetLabels(map[string]string{agentsandbox.LabelClaimUID: string(claim.GetUID())})
	if _, err := c.Dynamic.Resource(testcluster.AgentSandboxGVR).Namespace(ns).Update(testcluster.Context(t), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("adopting %s: %v", sb.GetName(), err)
	}
	ct.SetAnnotations(testcluster.SandboxClaimGVR, ns, claim.GetName(), map[string]string{agentsandbox.AnnotationSandboxName: sb.GetName()})
	ct.SetStatus(testcluster.SandboxClaimGVR, ns, claim.GetName(), map[string]any{
		"sandbox": map[string]any{"name": sb.GetName(), "podIPs": []string{ip}}, "conditions": claimCondition("True", "SandboxReady"),
	})
}

type claimJSON struct {
	Metadata     struct{ Name string }
	State        string
	WarmPool     string
	Sandbox      string
	SandboxState string
	Identity     string
	LaunchType   string
}

type poolJSON struct {
	Kind     string
	Metadata struct{ Name string }
	Engine   string
	Desired  int32
	Members  int32
	Ready    int32
	Claimed  int
	Waiting  int
}

func getList[T any](t *testing.T, c *testcluster.Cluster, ns, resource string) ([]T, string) {
	t.Helper()
	r := clitest.Run(cli.Main, "", "--kubeconfig", c.Kubeconfig, "-n", ns, "get", resource, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("get %s: exit %d\n%s%s", resource, r.Code, r.Stdout, r.Stderr)
	}
	var list struct{ Items []T }
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("get %s -o json: %v\n%s", resource, err, r.Stdout)
	}
	return list.Items, r.Stdout + r.Stderr
}

// Claims and warm pools as the controller writes them: a pool with a
// ready and an unready member, a claim that adopted a third member, a pool
// running dry with a claim waiting on it, and a claim that got a cold
// Sandbox whose container then exited. `get claims`, `get pools`, `get
// sandboxes` and `sweep` read them through the real schemas.
func TestAgentClaimsAndWarmPoolsWithTheRealCRDs(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct, kl := c.Controller(t), c.Kubelet(t)

	ct.Create(testcluster.SandboxTemplateGVR, ns, testcluster.SandboxTemplate("python", testcluster.SandboxPod("x", "python:3.12-slim")))
	warm := ct.Create(testcluster.SandboxWarmPoolGVR, ns, testcluster.SandboxWarmPool("warm", "python", 2))
	warmMember(t, c, ns, warm, "k2x9p", "10.244.4.1")
	warmMember(t, c, ns, warm, "q8v7w", "")
	adopted := warmMember(t, c, ns, warm, "a1b2c", "10.244.4.3")
	alice := ct.Create(testcluster.SandboxClaimGVR, ns, testcluster.SandboxClaim("alice", "warm"))
	adopt(t, c, ns, alice, adopted, "10.244.4.3")
	ct.SetStatus(testcluster.SandboxWarmPoolGVR, ns, "warm", map[string]any{"replicas": 2, "readyReplicas": 1, "selector": agentsandbox.LabelWarmPoolSandbox + "=hwarm"})

	dry := ct.Create(testcluster.SandboxWarmPoolGVR, ns, testcluster.SandboxWarmPool("dry", "python", 1))
	warmMember(t, c, ns, dry, "z0z0z", "")
	ct.SetStatus(testcluster.SandboxWarmPoolGVR, ns, "dry", map[string]any{"replicas": 1, "readyReplicas": 0, "selector": agentsandbox.LabelWarmPoolSandbox + "=hdry"})
	ct.Create(testcluster.SandboxClaimGVR, ns, testcluster.SandboxClaim("bob", "dry"))

	// carol's claim found no ready member: a Sandbox named after the claim,
	// owned by it; its main container then exits.
	carol := ct.Create(testcluster.SandboxClaimGVR, ns, testcluster.SandboxClaim("carol", "dry"))
	cold := testcluster.AgentSandbox("carol", testcluster.SandboxPod("carol", "python:3.12-slim"))
	ownedBy(cold, carol)
	coldSb := ct.Create(testcluster.AgentSandboxGVR, ns, cold)
	kl.CreatePod(ns, agentPod(coldSb, "hcarol"))
	kl.SetRunning(ns, "carol", "10.244.4.9")
	kl.Terminate(ns, "carol", osv1.ContainerSandbox, 1, "Error")
	kl.SetPhase(ns, "carol", corev1.PodFailed, "", "")
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "carol", map[string]any{"selector": agentsandbox.LabelNameHash + "=hcarol",
		"podIPs": []string{"10.244.4.9"}, "nodeName": testcluster.DefaultNode, "conditions": readyCondition("False", "PodFailed")})
	ct.SetAnnotations(testcluster.SandboxClaimGVR, ns, "carol", map[string]string{agentsandbox.AnnotationSandboxName: "carol"})
	ct.SetStatus(testcluster.SandboxClaimGVR, ns, "carol", map[string]any{
		"sandbox": map[string]any{"name": "carol", "podIPs": []string{"10.244.4.9"}}, "conditions": claimCondition("False", "PodFailed"),
	})

	claims, raw := getList[claimJSON](t, c, ns, "claims")
	byName := map[string]claimJSON{}
	for _, cl := range claims {
		byName[cl.Metadata.Name] = cl
	}
	if a := byName["alice"]; a.State != model.ClaimBound || a.Sandbox != "warm-a1b2c" || a.Identity != string(model.IdentityOK) || a.LaunchType != model.LaunchWarm {
		t.Errorf("claim alice = %+v\n%s", a, raw)
	}
	if b := byName["bob"]; b.State != model.ClaimPending || b.Sandbox != "" || b.WarmPool != "dry" {
		t.Errorf("claim bob = %+v\n%s", b, raw)
	}
	if cl := byName["carol"]; cl.State != model.ClaimBound || cl.Sandbox != "carol" || cl.LaunchType != model.LaunchCold || cl.Identity != string(model.IdentityPodDead) {
		t.Errorf("claim carol = %+v\n%s", cl, raw)
	}

	pools, raw := getList[poolJSON](t, c, ns, "pools")
	want := map[string]poolJSON{
		"warm": {Kind: "WarmPool", Engine: "agent", Desired: 2, Members: 2, Ready: 1, Claimed: 1},
		"dry":  {Kind: "WarmPool", Engine: "agent", Desired: 1, Members: 1, Ready: 0, Claimed: 1, Waiting: 1},
	}
	for _, p := range pools {
		w, ok := want[p.Metadata.Name]
		w.Metadata = p.Metadata
		if !ok || p != w {
			t.Errorf("pool %+v, want %+v\n%s", p, w, raw)
		}
		delete(want, p.Metadata.Name)
	}
	if len(want) > 0 {
		t.Errorf("pools missing from get pools: %v\n%s", want, raw)
	}

	for name, wantPool := range map[string]string{"warm-k2x9p": "warm", "warm-a1b2c": ""} {
		doc, raw := getSandboxJSON(t, c, ns, name)
		if doc["pool"] != nil && doc["pool"] != wantPool || doc["pool"] == nil && wantPool != "" {
			t.Errorf("sandbox %s pool = %v, want %q\n%s", name, doc["pool"], wantPool, raw)
		}
		if name == "warm-a1b2c" && (doc["claim"] != "alice" || doc["launchType"] != model.LaunchWarm) {
			t.Errorf("adopted sandbox: claim %v launch %v\n%s", doc["claim"], doc["launchType"], raw)
		}
	}

	rep, raw := sweepJSON(t, c, ns)
	codes := map[string][]model.Finding{}
	for _, f := range rep.Findings {
		codes[f.Code] = append(codes[f.Code], f)
	}
	if ex := codes[model.CodeWarmPoolExhausted]; len(ex) != 1 || !strings.Contains(ex[0].Message, "warm pool dry has no ready member") ||
		!strings.Contains(ex[0].Message, "1 claim(s) wait") {
		t.Errorf("WARM_POOL_EXHAUSTED: %+v\n%s", ex, raw)
	}
	if dead := codes[model.CodeClaimSandboxDead]; len(dead) != 1 || dead[0].Sandbox != "carol" || dead[0].Severity != model.SeverityError ||
		!strings.Contains(dead[0].Message, "claim carol is still held") {
		t.Errorf("CLAIM_SANDBOX_DEAD: %+v\n%s", dead, raw)
	}
	for _, f := range rep.Findings {
		if f.Sandbox == "warm-a1b2c" || f.Sandbox == "warm-k2x9p" {
			t.Errorf("finding on a healthy sandbox: %+v", f)
		}
	}
}
