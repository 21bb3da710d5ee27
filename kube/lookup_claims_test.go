package kube_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	discoveryfake "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// The one-name lookup behind exec reads a claim of that name and the
// Sandbox it is bound to (adopted from a pool: another name), so a claim
// name resolves to that Sandbox and its Pod; claim/NAME reads only claims.
func TestLookupByClaimName(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct, kl := c.Controller(t), c.Kubelet(t)
	sb := ct.Create(testcluster.AgentSandboxGVR, ns, testcluster.AgentSandbox("pool-a-x7k2p", testcluster.SandboxPod("pool-a-x7k2p", "")))
	pod := testcluster.SandboxPod("pool-a-x7k2p", "")
	delete(pod.Labels, osv1.LabelSandboxID)
	pod.Labels[agentsandbox.LabelNameHash] = "hx7k2p"
	yes := true
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: sb.GetAPIVersion(), Kind: "Sandbox", Name: sb.GetName(), UID: sb.GetUID(), Controller: &yes}}
	kl.CreatePod(ns, pod)
	kl.SetRunning(ns, "pool-a-x7k2p", "127.0.0.71")
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "pool-a-x7k2p", map[string]any{"selector": agentsandbox.LabelNameHash + "=hx7k2p",
		"podIPs": []string{"127.0.0.71"}, "conditions": []map[string]any{{"type": "Ready", "status": "True", "reason": "DependenciesReady",
			"message": "", "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}}})
	ct.Create(testcluster.SandboxClaimGVR, ns, testcluster.SandboxClaim("alice", "pool-a"))
	ct.SetStatus(testcluster.SandboxClaimGVR, ns, "alice", map[string]any{"sandbox": map[string]any{"name": "pool-a-x7k2p"}})
	// Adopted: the claim owns the Sandbox now.
	claim := ct.Get(testcluster.SandboxClaimGVR, ns, "alice")
	cur := ct.Get(testcluster.AgentSandboxGVR, ns, "pool-a-x7k2p")
	cur.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: claim.GetAPIVersion(), Kind: "SandboxClaim", Name: "alice", UID: claim.GetUID(), Controller: &yes}})
	if _, err := c.Dynamic.Resource(testcluster.AgentSandboxGVR).Namespace(ns).Update(testcluster.Context(t), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"alice", "claim/alice"} {
		snap, err := clients.LookupSandbox(testcluster.Context(t), ref, kube.LookupOptions{Namespace: ns})
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		row, ok := snap.ClaimOf(ns, "alice")
		if !ok || row.Sandbox == nil || row.Sandbox.Name() != "pool-a-x7k2p" || row.Sandbox.Identity() != model.IdentityOK {
			t.Errorf("%s: claim row %+v", ref, row)
		}
	}

	// Deleting the claimed sandbox deletes its claim, not only the Sandbox.
	snap, err := clients.LookupSandbox(testcluster.Context(t), "pool-a-x7k2p", kube.LookupOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	sbRow := snap.Sandbox(model.SandboxKey(model.EngineAgent, ns, "pool-a-x7k2p"))
	if sbRow == nil || sbRow.Claim() != "alice" {
		t.Fatalf("sandbox row %+v", sbRow)
	}
	agent := testcluster.AgentSandboxGVR
	if err := kube.NewInspector(clients, &agent).Delete(testcluster.Context(t), sbRow); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dynamic.Resource(testcluster.SandboxClaimGVR).Namespace(ns).Get(testcluster.Context(t), "alice", metav1.GetOptions{}); err == nil {
		t.Errorf("claim alice still exists after deleting its sandbox")
	}
}

// A cluster serving agent Sandboxes without the extensions says so once,
// in the sources' notes; one with neither says only that Sandboxes are not
// installed.
func TestDiscoverSourcesNotesMissingExtensions(t *testing.T) {
	fake := &discoveryfake.FakeDiscovery{Fake: &k8stesting.Fake{}}
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "agents.x-k8s.io/v1beta1", APIResources: []metav1.APIResource{{Name: "sandboxes", Namespaced: true, Kind: "Sandbox"}}},
	}
	src, err := kube.DiscoverSources(t.Context(), fake)
	if err != nil {
		t.Fatal(err)
	}
	if src.Agent == nil || src.AgentExt.Any() {
		t.Fatalf("sources %+v", src)
	}
	n := 0
	for _, note := range src.Notes {
		if note == "agent-sandbox extensions not installed (SandboxClaim, SandboxWarmPool, SandboxTemplate): claims and warm pools are not shown" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("notes %q, want the extensions' once", src.Notes)
	}
	fake.Resources = append(fake.Resources, &metav1.APIResourceList{GroupVersion: "extensions.agents.x-k8s.io/v1beta1", APIResources: []metav1.APIResource{
		{Name: "sandboxclaims", Namespaced: true, Kind: "SandboxClaim"}, {Name: "sandboxwarmpools", Namespaced: true, Kind: "SandboxWarmPool"},
		{Name: "sandboxtemplates", Namespaced: true, Kind: "SandboxTemplate"}}})
	src, err = kube.DiscoverSources(t.Context(), fake)
	if err != nil || src.AgentExt.Claims == nil || src.AgentExt.Claims.Version != "v1beta1" || src.AgentExt.WarmPools == nil || src.AgentExt.Templates == nil {
		t.Fatalf("with the extensions: %+v, %v", src, err)
	}
	for _, note := range src.Notes {
		if note != "OpenSandbox BatchSandbox CRD not installed" {
			t.Errorf("note %q with every agent-sandbox CRD served", note)
		}
	}
}
