package create_test

import (
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
)

// create --warm-pool makes a SandboxClaim and follows it: Queued, Bound
// (the controller adopted a running member: same name, same Pod), then
// Ready once a command ran in that Pod; the result names the claim, the
// Sandbox and the Pod. A claim never bound fails TIMEOUT and is deleted.
func TestCreateClaimsFromAWarmPool(t *testing.T) {
	h := newHarness(t)
	pool := h.ct.Create(testcluster.SandboxWarmPoolGVR, h.ns, testcluster.SandboxWarmPool("agents-warm", "python", 1))
	yes := true
	owner := func(u *unstructured.Unstructured, kind, name string, uid types.UID) {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: kind, Name: name, UID: uid, Controller: &yes}})
	}
	member := testcluster.AgentSandbox("agents-warm-k2x9p", testcluster.SandboxPod("agents-warm-k2x9p", ""))
	owner(member, agentsandbox.KindSandboxWarmPool, "agents-warm", pool.GetUID())
	sb := h.ct.Create(testcluster.AgentSandboxGVR, h.ns, member)
	pod := testcluster.SandboxPod("agents-warm-k2x9p", "")
	delete(pod.Labels, osv1.LabelSandboxID)
	pod.Labels[agentsandbox.LabelNameHash] = "hk2x9p"
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: sb.GetAPIVersion(), Kind: "Sandbox", Name: sb.GetName(), UID: sb.GetUID(), Controller: &yes}}
	h.kl.CreatePod(h.ns, pod)
	running := h.kl.SetRunning(h.ns, "agents-warm-k2x9p", "127.0.0.61")
	h.ct.SetStatus(testcluster.AgentSandboxGVR, h.ns, sb.GetName(), map[string]any{"selector": agentsandbox.LabelNameHash + "=hk2x9p",
		"podIPs": []string{"127.0.0.61"}, "conditions": []map[string]any{{"type": "Ready", "status": "True", "reason": "DependenciesReady",
			"message": "", "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}}})
	h.prober.setUp(true)

	r := h.start(create.Request{WarmPool: "agents-warm"})
	claim := r.until(t, create.StageQueued).Sandbox
	// The controller adopts the member for the claim.
	cl := h.ct.Get(testcluster.SandboxClaimGVR, h.ns, claim)
	if ref, _, _ := unstructured.NestedString(cl.Object, "spec", "warmPoolRef", "name"); ref != "agents-warm" {
		t.Fatalf("claim %s spec %v", claim, cl.Object["spec"])
	}
	cur := h.ct.Get(testcluster.AgentSandboxGVR, h.ns, sb.GetName())
	owner(cur, agentsandbox.KindSandboxClaim, claim, cl.GetUID())
	if _, err := h.c.Dynamic.Resource(testcluster.AgentSandboxGVR).Namespace(h.ns).Update(h.ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.ct.SetStatus(testcluster.SandboxClaimGVR, h.ns, claim, map[string]any{"sandbox": map[string]any{"name": sb.GetName(), "podIPs": []string{"127.0.0.61"}}})
	res, err := r.wait(t)
	if err != nil {
		t.Fatalf("create --warm-pool: %+v", err)
	}
	if res.Stage != create.StageReady || res.Claim != claim || res.Sandbox != sb.GetName() || res.Pod == nil || res.Pod.UID != string(running.UID) {
		t.Errorf("result %+v pod %+v", res, res.Pod)
	}
	if got := stagesOf(r.seen); !slices.Contains(got, create.StageBound) || got[len(got)-1] != create.StageReady {
		t.Errorf("stages %v, want Queued, Bound, ..., Ready", got)
	}
	if h.prober.last.Sandbox != sb.GetName() {
		t.Errorf("the Ready probe ran in %q, want the claimed Sandbox", h.prober.last.Sandbox)
	}

	// A dry pool: never bound within the wait, the claim is deleted.
	r = h.start(create.Request{WarmPool: "agents-warm", WaitTimeout: 2 * time.Second})
	claim = r.until(t, create.StageQueued).Sandbox
	_, e := r.wait(t)
	if e == nil || e.Code != create.CodeTimeout || e.Cleanup == nil || !e.Cleanup.Deleted {
		t.Fatalf("unbound claim: %+v", e)
	}
	if _, err := h.c.Dynamic.Resource(testcluster.SandboxClaimGVR).Namespace(h.ns).Get(h.ctx, claim, metav1.GetOptions{}); err == nil {
		t.Errorf("claim %s still exists after the failed create", claim)
	}
}

// create --template makes a v1beta1 Sandbox with the SandboxTemplate's pod
// (no spec.replicas, no service-account token) and follows it to Ready.
func TestCreateFromATemplate(t *testing.T) {
	h := newHarness(t)
	tpod := testcluster.SandboxPod("x", "python:3.12-slim", "python", "-m", "http.server")
	tpod.Spec.InitContainers = nil
	tpod.Spec.Containers[0].Command = []string{"python", "-m", "http.server"}
	tpod.Spec.Containers[0].VolumeMounts, tpod.Spec.Volumes = nil, nil
	tpod.Labels = map[string]string{"app": "agent"}
	h.ct.Create(testcluster.SandboxTemplateGVR, h.ns, testcluster.SandboxTemplate("python", tpod))
	h.prober.setUp(true)
	r := h.start(create.Request{Template: "python"})
	id := r.until(t, create.StageQueued).Sandbox
	obj := h.ct.Get(testcluster.AgentSandboxGVR, h.ns, id)
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); found {
		t.Errorf("spec.replicas written")
	}
	if auto, found, _ := unstructured.NestedBool(obj.Object, "spec", "podTemplate", "spec", "automountServiceAccountToken"); !found || auto {
		t.Errorf("automountServiceAccountToken %v (found %v), want false", auto, found)
	}
	labels, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "podTemplate", "metadata", "labels")
	pod := testcluster.SandboxPod(id, "python:3.12-slim")
	pod.Labels, pod.Spec.InitContainers = labels, nil
	h.kl.CreatePod(h.ns, pod)
	h.kl.SetRunning(h.ns, id, "10.0.2.9")
	res, err := r.wait(t)
	if err != nil || res.Stage != create.StageReady || res.Entrypoint.Source != create.SourceTemplate ||
		!slices.Equal(res.Entrypoint.Argv, []string{"python", "-m", "http.server"}) || labels["app"] != "agent" {
		t.Fatalf("create --template: %+v %v (labels %v)", res, err, labels)
	}
}

// A create asks the server which engines it serves once, through
// Clients.Sources (which takes the discovery the connection started, when
// there is one): --template chose the engine and then read the template's
// resource from a discovery each.
func TestCreateDiscoversTheEnginesOnce(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	var groups atomic.Int32 // GET /apis: one per discovery of the engines
	cfg := rest.CopyConfig(c.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/apis" {
				groups.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		t.Fatal(err)
	}
	creator := &create.Creator{Clients: clients, Prober: &fakeProber{}, ProbeInterval: 50 * time.Millisecond,
		Images: imageconfig.New(imageconfig.Options{Timeout: time.Second})}
	_, err = creator.Run(testcluster.Context(t), create.Request{Template: "no-such-template"}, nil)
	var ce *create.Error
	if !errors.As(err, &ce) || ce.Created() {
		t.Fatalf("create --template of a missing template: %v, want an error before creating", err)
	}
	if n := groups.Load(); n != 1 {
		t.Errorf("the create discovered the API groups %d times, want 1", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
