package clustertest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
)

// agentFleet is a cluster of the test's own with the upstream agent-sandbox
// CRDs (Sandbox and the extensions) and a test kubelet registered as node,
// which serves the pods/exec the API server sends it.
type agentFleet struct {
	t       *testing.T
	c       *testcluster.Cluster
	ns      string
	node    string
	kubelet *kubelettest.Server
	pool    *unstructured.Unstructured
}

func newAgentFleet(t *testing.T) *agentFleet {
	t.Helper()
	c := testcluster.Start(t, testcluster.Options{CRDs: testcluster.UpstreamCRDs})
	f := &agentFleet{t: t, c: c, ns: c.Namespace(t), node: "agent-node"}
	var err error
	f.kubelet, err = kubelettest.Start(kubelettest.Config{Addr: "127.0.0.1:0", LookupPod: kubelettest.APIPodLookup(c.Kube),
		Exec: kubelettest.ShellExec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.kubelet.Close() })
	if _, err := f.kubelet.RegisterNode(testcluster.Context(t), c.Kube, f.node); err != nil {
		t.Fatal(err)
	}
	ct := c.Controller(t)
	ct.Create(testcluster.SandboxTemplateGVR, f.ns, testcluster.SandboxTemplate("python", testcluster.SandboxPod("tmpl", "python:3.12-slim")))
	f.pool = ct.Create(testcluster.SandboxWarmPoolGVR, f.ns, testcluster.SandboxWarmPool("py", "python", 2))
	return f
}

func controllerRef(owner *unstructured.Unstructured) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(),
		UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}
}

func agentReady(status, reason string) []map[string]any {
	return []map[string]any{{"type": "Ready", "status": status, "reason": reason, "message": reason,
		"observedGeneration": 1, "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}}
}

// member makes what the warm-pool controller makes: a Sandbox py-<suffix>
// owned by the pool and labelled with its hash, the pod-name annotation,
// and its Pod (named like it, owned by it, the name-hash label), on the
// test kubelet's node, Running at ip, with the status the Sandbox
// controller then writes (selector, podIPs, nodeName, Ready True).
func (f *agentFleet) member(suffix, ip string) (*unstructured.Unstructured, *corev1.Pod) {
	f.t.Helper()
	ct, kl := f.c.Controller(f.t), f.c.Kubelet(f.t)
	name := f.pool.GetName() + "-" + suffix
	obj := testcluster.AgentSandbox(name, testcluster.SandboxPod(name, "python:3.12-slim"))
	obj.SetOwnerReferences(controllerRef(f.pool))
	obj.SetLabels(map[string]string{agentsandbox.LabelWarmPoolSandbox: "hpy"})
	obj.SetAnnotations(map[string]string{agentsandbox.AnnotationPodName: name})
	sb := ct.Create(testcluster.AgentSandboxGVR, f.ns, obj)
	pod := testcluster.SandboxPod(name, "python:3.12-slim", "python", "-m", "http.server")
	pod.Labels = map[string]string{agentsandbox.LabelNameHash: "h" + name}
	pod.OwnerReferences = controllerRef(sb)
	kl.CreatePod(f.ns, pod)
	kl.Schedule(f.ns, name, f.node)
	running := kl.SetRunning(f.ns, name, ip)
	ct.SetStatus(testcluster.AgentSandboxGVR, f.ns, name, map[string]any{
		"selector": agentsandbox.LabelNameHash + "=h" + name, "podIPs": []string{ip}, "nodeName": f.node,
		"conditions": agentReady("True", "DependenciesReady"),
	})
	return sb, running
}

// claim writes a SandboxClaim on the pool; with sb, the claim controller's
// adoption follows: the Sandbox keeps its name and Pod, its controller
// ownerReference moves from the pool to the claim, the pool label goes and
// claim-uid is set; the claim gets the sandbox-name annotation, and status
// sandbox {name, podIPs} and Ready True.
func (f *agentFleet) claim(name string, sb *unstructured.Unstructured, ip string) {
	f.t.Helper()
	ct := f.c.Controller(f.t)
	claim := ct.Create(testcluster.SandboxClaimGVR, f.ns, testcluster.SandboxClaim(name, f.pool.GetName()))
	if sb == nil {
		return
	}
	cur := ct.Get(testcluster.AgentSandboxGVR, f.ns, sb.GetName())
	cur.SetOwnerReferences(controllerRef(claim))
	cur.SetLabels(map[string]string{agentsandbox.LabelClaimUID: string(claim.GetUID())})
	if _, err := f.c.Dynamic.Resource(testcluster.AgentSandboxGVR).Namespace(f.ns).Update(testcluster.Context(f.t), cur, metav1.UpdateOptions{}); err != nil {
		f.t.Fatalf("adopting %s: %v", sb.GetName(), err)
	}
	ct.SetAnnotations(testcluster.SandboxClaimGVR, f.ns, name, map[string]string{agentsandbox.AnnotationSandboxName: sb.GetName()})
	ct.SetStatus(testcluster.SandboxClaimGVR, f.ns, name, map[string]any{
		"sandbox":    map[string]any{"name": sb.GetName(), "podIPs": []string{ip}},
		"conditions": []map[string]any{{"type": "Ready", "status": "True", "reason": "SandboxAdopted", "message": "SandboxAdopted", "lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339)}},
	})
}

// execsIn counts the exec requests the API server sent the kubelet for pod.
func (f *agentFleet) execsIn(pod string) int {
	n := 0
	for _, r := range f.kubelet.Requests() {
		if strings.HasPrefix(r.Path, "/exec/"+f.ns+"/"+pod+"/") {
			n++
		}
	}
	return n
}

// refusalCode is the code of the one JSON error object on stderr, which
// must say that nothing ran.
func refusalCode(t *testing.T, stderr string) (code, message string) {
	t.Helper()
	e := clitest.Result{Stderr: stderr}.ErrorObject(t, "code", "message", "executed")
	if e["executed"] != "no" {
		t.Errorf("refusal says executed %v: %s", e["executed"], stderr)
	}
	code, _ = e["code"].(string)
	message, _ = e["message"].(string)
	return code, message
}

// `sandscope exec CLAIM` as a user of an agent-sandbox fleet runs it, on a
// real API server with the upstream CRDs, through pods/exec to the test
// kubelet: a bound claim runs in its Sandbox's Pod; a claim whose Sandbox's
// Pod ended and whose IP went to another Pod is refused with nothing run
// in that stranger; a claim not bound yet is refused, naming the claim.
func TestExecByClaimName(t *testing.T) {
	f := newAgentFleet(t)
	kl := f.c.Kubelet(t)

	// alice adopted py-a7k2p, Running.
	alice, alicePod := f.member("a7k2p", "10.50.0.11")
	f.claim("alice", alice, "10.50.0.11")
	// bob adopted py-b9x4q; its main container then exited: the Pod is
	// kept (never re-created), the Sandbox Ready False PodFailed, Finished
	// True, podIPs still the dead Pod's IP. The pool's replacement member
	// py-c3m8r was given that IP.
	bob, _ := f.member("b9x4q", "10.50.0.12")
	f.claim("bob", bob, "10.50.0.12")
	kl.Terminate(f.ns, bob.GetName(), "sandbox", 1, "Error")
	kl.SetPhase(f.ns, bob.GetName(), corev1.PodFailed, "", "")
	conds := agentReady("False", "PodFailed")
	finished := agentReady("True", "PodFailed")[0]
	finished["type"] = "Finished"
	f.c.Controller(t).SetStatus(testcluster.AgentSandboxGVR, f.ns, bob.GetName(), map[string]any{
		"selector": agentsandbox.LabelNameHash + "=h" + bob.GetName(), "podIPs": []string{"10.50.0.12"}, "nodeName": f.node,
		"conditions": append(conds, finished),
	})
	stranger, _ := f.member("c3m8r", "10.50.0.12")
	// carol is written and not bound yet: no status, no annotation.
	f.claim("carol", nil, "")

	t.Run("bound claim runs in its Pod", func(t *testing.T) {
		out, errOut, code := f.run("exec", "alice", "--", "echo", "hi")
		if code != 0 || !strings.HasSuffix(out, "hi\n") || errOut != "" {
			t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
		}
		if !strings.Contains(out, "pod="+f.ns+"/"+alice.GetName()+" uid="+string(alicePod.UID)) {
			t.Fatalf("ran somewhere other than %s (%s): %q", alice.GetName(), alicePod.UID, out)
		}
	})
	t.Run("claim on a dead Pod whose IP another Pod holds is refused", func(t *testing.T) {
		out, errOut, code := f.run("exec", "bob", "--", "echo", "hi")
		c, msg := refusalCode(t, errOut)
		if code != 125 || out != "" || c != "IP_TAKEN" {
			t.Fatalf("exit %d code %s stdout %q stderr %s", code, c, out, errOut)
		}
		if !strings.Contains(msg, bob.GetName()) && !strings.Contains(msg, "bob") {
			t.Errorf("the refusal names neither the claim nor its sandbox: %s", msg)
		}
		if n := f.execsIn(stranger.GetName()); n != 0 {
			t.Fatalf("the stranger %s received %d exec request(s)", stranger.GetName(), n)
		}
		if n := f.execsIn(bob.GetName()); n != 0 {
			t.Fatalf("the dead Pod %s received %d exec request(s)", bob.GetName(), n)
		}
	})
	t.Run("pending claim is refused, naming it", func(t *testing.T) {
		out, errOut, code := f.run("exec", "carol", "--", "echo", "hi")
		c, msg := refusalCode(t, errOut)
		if code != 125 || out != "" || c != "NOT_EXEC_READY" || !strings.Contains(msg, "carol") || !strings.Contains(msg, "not bound") {
			t.Fatalf("exit %d code %s stdout %q stderr %s", code, c, out, errOut)
		}
	})
	// alice's Pod received exactly the one command.
	if n := f.execsIn(alice.GetName()); n != 1 {
		t.Errorf("alice's Pod received %d exec requests, want 1", n)
	}
}

func (f *agentFleet) run(args ...string) (string, string, int) {
	return runWith(f.c.Kubeconfig, append([]string{"-n", f.ns}, args...)...)
}
