package sim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// agentState is what a reader of an agent Sandbox saw in one write: its
// owner, podIPs, selector and Ready reason.
func agentState(u *unstructured.Unstructured) string {
	owner := "<none>"
	if refs := u.GetOwnerReferences(); len(refs) > 0 {
		owner = refs[0].Kind + "/" + refs[0].Name
	}
	ips, _, _ := unstructured.NestedStringSlice(u.Object, "status", "podIPs")
	sel, _, _ := unstructured.NestedString(u.Object, "status", "selector")
	reason := "<no Ready>"
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			reason, _ = m["reason"].(string)
		}
	}
	return owner + " ips=" + strings.Join(ips, ",") + " selector=" + boolWord(sel != "") + " " + reason
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestAgentControllerSequencesOnARealAPIServer is the agent-sandbox twin
// of TestControllerSequencesOnARealAPIServer: the simulator plays the
// agent-sandbox controller with --extensions through the real API server
// and the real CRDs, and what a reader sees, write by write, is what the
// facts file says the controller writes: adoption moves the owner and
// keeps the Sandbox's name and Pod; expiry wipes the status while the Pod
// still terminates. The fleet model reading the same watches makes the
// right rows of it.
func TestAgentControllerSequencesOnARealAPIServer(t *testing.T) {
	r := startReplay(t, testcluster.AgentSandboxGVR, Config{Seed: 5, ChurnPerHour: -1, PoolBuffer: -1, WarmPools: true})
	c, ns, ctx, s, w, sbs, pods := r.c, r.ns, r.ctx, r.s, r.w, r.objects, r.pods
	s.mu.Lock()
	err := s.createSandbox(ctx, createOpts{engine: EngineAgent, scenario: ExpiringSoon, node: -1})
	var expiring *sandbox
	for _, sb := range s.sandboxes {
		if sb.expire != nil {
			expiring = sb
		}
	}
	s.mu.Unlock()
	if err != nil || expiring == nil {
		t.Fatalf("creating the expiring Sandbox: %v", err)
	}
	done := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		bound := 0
		for _, sb := range s.sandboxes {
			if sb.claim != nil || sb.obj != nil && len(sb.obj.GetOwnerReferences()) > 0 && sb.obj.GetOwnerReferences()[0].Kind == agentsandbox.KindSandboxClaim {
				bound++
			}
		}
		return bound == 3 && expiring.expired && firstPod(expiring) == nil
	}
	r.runUntil(t, time.Second, 4*time.Minute, done, "no three claims bound and no expired Pod gone within 4 simulated minutes")
	s.mu.Lock()
	lastRV, exp := expiring.obj.GetResourceVersion(), expiring.name
	s.mu.Unlock()
	// The simulation has deleted the Pod; the Pods' recorder hears of it on
	// a watch of its own, which may come after the Sandboxes' and the fleet's.
	podGone := func() bool {
		return slices.ContainsFunc(pods.snapshot(), func(ev watch.Event) bool {
			p, ok := ev.Object.(*corev1.Pod)
			return ok && p.Name == exp && ev.Type == watch.Deleted
		})
	}
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got := sbs.holds(lastRV) && podGone()
		snap := w.Fleet().Snapshot()
		row := snap.Sandbox(model.SandboxKey(model.EngineAgent, ns, exp))
		return got && row != nil && row.State == model.StateExpired && len(snap.ClaimRows()) == 3, nil
	})

	// Expiry, as the controller writes it: Ready True with the Pod's IP,
	// then at once no podIPs and no selector, Ready False SandboxExpired,
	// while the Pod is still there, deleting; then the Pod goes.
	var seq []string
	for _, ev := range sbs.snapshot() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == exp {
			if st := agentState(u); len(seq) == 0 || seq[len(seq)-1] != st {
				seq = append(seq, st)
			}
		}
	}
	wiped := "<none> ips= selector=no " + model.ReasonSandboxExpired
	if i := slices.Index(seq, wiped); i < 1 || !strings.Contains(seq[i-1], "DependenciesReady") || !strings.Contains(seq[i-1], "ips=10.") || i != len(seq)-1 {
		t.Errorf("expiring Sandbox %s as a reader saw it:\n  %s\nwant Ready (DependenciesReady) with its IP, then last %q", exp, strings.Join(seq, "\n  "), wiped)
	}
	t.Logf("expiring Sandbox %s:\n  %s", exp, strings.Join(seq, "\n  "))
	var podSeq []string
	for _, ev := range pods.snapshot() {
		if p, ok := ev.Object.(*corev1.Pod); ok && p.Name == exp {
			st := string(ev.Type)
			if p.DeletionTimestamp != nil {
				st += " deleting"
			}
			if len(podSeq) == 0 || podSeq[len(podSeq)-1] != st {
				podSeq = append(podSeq, st)
			}
		}
	}
	if len(podSeq) < 2 || podSeq[len(podSeq)-1] != "DELETED deleting" || !slices.Contains(podSeq, "MODIFIED deleting") {
		t.Errorf("expired Sandbox's Pod: %v, want it deleting (still there) and then gone", podSeq)
	}

	t.Logf("its Pod: %v", podSeq)

	// Adoption: the Sandbox keeps its pool-generated name and its Pod; its
	// owner moves from the pool to the claim.
	owners := map[string][]string{}
	for _, ev := range sbs.snapshot() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok && strings.HasPrefix(u.GetName(), "agents-warm-") {
			o := "<none>"
			if refs := u.GetOwnerReferences(); len(refs) > 0 {
				o = refs[0].Kind + "/" + refs[0].Name
			}
			if l := owners[u.GetName()]; len(l) == 0 || l[len(l)-1] != o {
				owners[u.GetName()] = append(l, o)
			}
		}
	}
	adopted := 0
	for name, l := range owners {
		if len(l) == 2 && l[0] == agentsandbox.KindSandboxWarmPool+"/agents-warm" && strings.HasPrefix(l[1], agentsandbox.KindSandboxClaim+"/") {
			adopted++
			p, err := c.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.OwnerReferences[0].Name != name {
				t.Errorf("adopted %s lost its Pod: %v", name, err)
			}
		} else if len(l) != 1 {
			t.Errorf("warm Sandbox %s owners %v", name, l)
		}
	}
	if adopted != 2 {
		t.Errorf("%d Sandboxes adopted from agents-warm, want 2: %v", adopted, owners)
	}

	// The fleet model: Expired, no error on it; every claim bound with its
	// launch type; the dry pool exhausted.
	snap := w.Fleet().Snapshot()
	row := snap.Sandbox(model.SandboxKey(model.EngineAgent, ns, exp))
	if row == nil || row.State != model.StateExpired {
		t.Fatalf("expired row: %+v", row)
	}
	for _, n := range row.Notices {
		if n.Severity == model.SeverityError {
			t.Errorf("expired Sandbox: %s %s", n.Code, n.Message)
		}
	}
	launches := map[string]string{}
	for _, r := range snap.ClaimRows() {
		if r.Sandbox == nil {
			t.Errorf("claim %s: no sandbox in the model", r.Claim.Name)
			continue
		}
		launches[r.Claim.Name] = r.Sandbox.LaunchType()
	}
	if launches["alice-session"] != model.LaunchWarm || launches["bob-session"] != model.LaunchWarm || launches["carol-session"] != model.LaunchCold {
		t.Errorf("claims' launch types %v", launches)
	}
	var exhausted bool
	for _, x := range snap.ExtensionFindings(time.Now()) {
		exhausted = exhausted || x.Notice.Code == model.CodeWarmPoolExhausted && strings.Contains(x.Notice.Message, "agents-dry")
	}
	if !exhausted {
		t.Errorf("no WARM_POOL_EXHAUSTED for agents-dry: %+v", snap.WarmPoolRows())
	}
}
