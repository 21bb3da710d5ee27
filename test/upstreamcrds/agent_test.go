package upstreamcrds_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// agentPod is the Pod the agent-sandbox controller makes for Sandbox sb:
// named exactly like it, one controller ownerReference to it, the
// name-hash label.
func agentPod(sb *unstructured.Unstructured, hash string) *corev1.Pod {
	pod := testcluster.SandboxPod(sb.GetName(), "python:3.12-slim", "python", "-m", "http.server")
	delete(pod.Labels, osv1.LabelSandboxID)
	pod.Labels[agentsandbox.LabelNameHash] = hash
	yes := true
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: sb.GetAPIVersion(), Kind: agentsandbox.KindSandbox,
		Name: sb.GetName(), UID: sb.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}
	return pod
}

func readyCondition(status, reason string) []map[string]any {
	return []map[string]any{{"type": "Ready", "status": status, "reason": reason, "message": reason,
		"observedGeneration": 1, "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}}
}

// runningAgentSandbox creates a Sandbox, its Pod Running at ip and the
// status the controller writes for it (selector, podIPs, nodeName, Ready True).
func runningAgentSandbox(t *testing.T, c *testcluster.Cluster, ns, name, ip string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	ct, kl := c.Controller(t), c.Kubelet(t)
	obj := testcluster.AgentSandbox(name, testcluster.SandboxPod(name, "python:3.12-slim"))
	for k, v := range spec {
		obj.Object["spec"].(map[string]any)[k] = v
	}
	sb := ct.Create(testcluster.AgentSandboxGVR, ns, obj)
	hash := "h" + name
	kl.CreatePod(ns, agentPod(sb, hash))
	kl.SetRunning(ns, name, ip)
	return ct.SetStatus(testcluster.AgentSandboxGVR, ns, name, map[string]any{
		"selector": agentsandbox.LabelNameHash + "=" + hash, "podIPs": []string{ip}, "nodeName": testcluster.DefaultNode,
		"conditions": readyCondition("True", "DependenciesReady"),
	})
}

type sweepReport struct {
	Findings []model.Finding `json:"findings"`
}

func sweepJSON(t *testing.T, c *testcluster.Cluster, ns string) (sweepReport, string) {
	t.Helper()
	r := clitest.Run(cli.Main, "", "--kubeconfig", c.Kubeconfig, "-n", ns, "sweep", "-o", "json")
	var rep sweepReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("sweep -o json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	return rep, r.Stdout
}

func getSandboxJSON(t *testing.T, c *testcluster.Cluster, ns, name string) (map[string]any, string) {
	t.Helper()
	r := clitest.Run(cli.Main, "", "--kubeconfig", c.Kubeconfig, "-n", ns, "get", "sandboxes", name, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("get sandboxes %s: exit %d\n%s%s", name, r.Code, r.Stdout, r.Stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("get -o json: %v\n%s", err, r.Stdout)
	}
	if items, ok := doc["items"].([]any); ok {
		if len(items) != 1 {
			t.Fatalf("get %s: %d items\n%s", name, len(items), r.Stdout)
		}
		doc, _ = items[0].(map[string]any)
	}
	return doc, r.Stdout
}

func findingsOf(rep sweepReport, sandbox string) []model.Finding {
	var out []model.Finding
	for _, f := range rep.Findings {
		if f.Sandbox == sandbox {
			out = append(out, f)
		}
	}
	return out
}

// Once shutdownTime passes (shutdownPolicy Retain), the controller deletes
// the Pod and wipes the Sandbox's status at once, while the Pod still
// terminates. Nothing routes to that Pod any more: no POD_DEAD "while the
// engine still records" an IP the engine no longer has, and no recorded IP.
// Once the Pod is gone the sandbox reads Expired.
func TestAgentSandboxExpiryWithTheRealCRDs(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct, kl := c.Controller(t), c.Kubelet(t)
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	runningAgentSandbox(t, c, ns, "expiring", "10.244.3.7", map[string]any{"shutdownTime": past})

	// The controller's expiry: Pod deleted (still terminating), status wiped.
	kl.DeleteHeld(ns, "expiring")
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "expiring", map[string]any{
		"conditions": readyCondition("False", model.ReasonSandboxExpired),
	})

	rep, raw := sweepJSON(t, c, ns)
	for _, f := range findingsOf(rep, "expiring") {
		if f.Code == model.CodePodDead || f.Code == model.CodePodGone || f.Code == model.CodeIPTaken {
			t.Errorf("expiring sandbox while its Pod terminates: %s %q\n%s", f.Code, f.Message, raw)
		}
	}
	doc, raw := getSandboxJSON(t, c, ns, "expiring")
	slots, _ := doc["slots"].([]any)
	for _, s := range slots {
		if ip, _ := s.(map[string]any)["recordedIP"].(string); ip != "" {
			t.Errorf("get shows recorded IP %q the engine no longer records\n%s", ip, raw)
		}
	}

	// The Pod ends: the sandbox stays, Expired (not Pending, not Gone).
	kl.Release(ns, "expiring")
	doc, raw = getSandboxJSON(t, c, ns, "expiring")
	if doc["state"] != model.StateExpired.String() {
		t.Errorf("expired sandbox state = %v, want Expired\n%s", doc["state"], raw)
	}
	rep, raw = sweepJSON(t, c, ns)
	for _, f := range findingsOf(rep, "expiring") {
		if f.Severity == model.SeverityError {
			t.Errorf("expired sandbox: %s %q\n%s", f.Code, f.Message, raw)
		}
	}
}

// v1beta1 pauses with spec.operatingMode: Suspended. While the Pod
// terminates the controller keeps podIPs (Ready False SandboxSuspended);
// once it is gone it clears them and sets Suspended True. The sandbox
// reads Suspended, not Pending.
func TestAgentSandboxSuspendedWithTheRealCRDs(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct, kl := c.Controller(t), c.Kubelet(t)
	sb := runningAgentSandbox(t, c, ns, "paused", "10.244.3.8", map[string]any{"operatingMode": "Suspended"})
	sel, _, _ := unstructured.NestedString(sb.Object, "status", "selector")

	kl.DeleteHeld(ns, "paused")
	kl.Release(ns, "paused")
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "paused", map[string]any{
		"selector": sel,
		"conditions": append(readyCondition("False", model.ReasonSandboxSuspended), map[string]any{"type": "Suspended", "status": "True",
			"reason": "SandboxSuspended", "message": "", "observedGeneration": 1, "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}),
	})
	doc, raw := getSandboxJSON(t, c, ns, "paused")
	if doc["state"] != model.StateSuspended.String() {
		t.Errorf("suspended sandbox state = %v, want Suspended\n%s", doc["state"], raw)
	}

	// Read fresh, with nothing seen before: a suspended Sandbox with no Pod.
	obj := testcluster.AgentSandbox("asleep", testcluster.SandboxPod("asleep", "python:3.12-slim"))
	obj.Object["spec"].(map[string]any)["operatingMode"] = "Suspended"
	ct.Create(testcluster.AgentSandboxGVR, ns, obj)
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "asleep", map[string]any{"conditions": readyCondition("False", model.ReasonSandboxSuspended)})
	doc, raw = getSandboxJSON(t, c, ns, "asleep")
	if doc["state"] != model.StateSuspended.String() {
		t.Errorf("fresh suspended sandbox state = %v, want Suspended\n%s", doc["state"], raw)
	}
}

// warningRecorder keeps the API server's warnings.
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// The Sandbox `create --engine agent` writes is one the v1beta1 schema
// takes as it is: no spec.replicas (pruned with an "unknown field" warning).
func TestAgentSandboxCreateObjectFitsV1beta1(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	src, err := kube.DiscoverSources(testcluster.Context(t), c.Kube.Discovery())
	if err != nil || src.Agent == nil {
		t.Fatalf("DiscoverSources: %+v, %v", src, err)
	}
	obj, err := kube.AgentSandboxObject(*src.Agent, kube.SandboxSpec{Namespace: ns, Name: "made", Image: "python:3.12-slim",
		Command: []string{"sleep", "infinity"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Config)
	warnings := &warningRecorder{}
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(*src.Agent).Namespace(ns).Create(testcluster.Context(t), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the Sandbox: %v", err)
	}
	for _, w := range warnings.msgs {
		if strings.Contains(w, "unknown field") {
			t.Errorf("the API server pruned a field: %s", w)
		}
	}
}
