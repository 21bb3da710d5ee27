package sweep_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/actions/sweep"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// forge writes, as the tenant, an Event that copies what the kubelet
// writes (source kubelet on the Pod's node, involvedObject with the Pod's
// UID and the container's fieldPath). involved overrides the object (a
// Node), when set.
func (f *fleet) forge(tenant kubernetes.Interface, pod *corev1.Pod, involved *corev1.ObjectReference, reason, message string, first, last time.Time, count int32) {
	f.t.Helper()
	ev := testcluster.KubeletEvent(pod, "spec.containers{"+osv1.ContainerSandbox+"}", corev1.EventTypeWarning, reason, message, first, last, count)
	if involved != nil {
		ev.InvolvedObject = *involved
	}
	testcluster.ForgeEvent(f.t, tenant, ev)
}

// sigkilled records what the kubelet writes when a container was killed
// (exit 137, reason Error) at end and started again.
func (f *fleet) sigkilled(pod string, end time.Time) *corev1.Pod {
	f.t.Helper()
	return f.k.Restarted(f.ns, pod, osv1.ContainerSandbox, 1, 137, "Error", end.Add(-10*time.Minute), end)
}

// TestForgedEventsDecideNoVerdict: a tenant allowed to create Events in its
// namespace writes what the kubelet would (Unhealthy and Killing for a
// liveness probe, a node's SystemOOM, an Evicted) about its own Pods, none
// of which has a liveness probe, was evicted, or has a node that reported
// an OOM kill. Neither the sweep nor the detail view's classification
// reaches the verdict those Events claim. A Pod with a liveness probe,
// the kubelet's termination and the kubelet's Events still reads
// RESTART_LIVENESS, its Events labelled as claims.
func TestForgedEventsDecideNoVerdict(t *testing.T) {
	f := newFleet(t)
	plain := "python:3.12-slim"
	node := "node-" + f.ns
	f.k.EnsureNode(node)
	end := time.Now().Add(-time.Minute).Truncate(time.Second)
	withProbe := func(p *corev1.Pod) {
		testcluster.WithLivenessProbe(p, "curl", "-sf", "localhost:8080/healthz")
		g := int64(30)
		p.Spec.TerminationGracePeriodSeconds = &g
	}
	killed := func(name, ip string, edit func(*corev1.Pod)) *corev1.Pod {
		f.sandbox(name, plain, userCommand, edit)
		f.k.Schedule(f.ns, name+"-0", node)
		f.running(name, ip, "Succeed")
		return f.sigkilled(name+"-0", end)
	}
	noProbe := killed("noprobe", "10.5.0.1", nil)
	oom := killed("nooom", "10.5.0.2", nil)
	evict := killed("noevict", "10.5.0.3", nil)
	probed := killed("probed", "10.5.0.4", withProbe)

	// The kubelet's own Events for the probed Pod: 3 failed probes, the
	// Killing 30 s (its grace) before the container ended.
	field := "spec.containers{" + osv1.ContainerSandbox + "}"
	f.k.EventFor(probed, field, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: command timed out", end.Add(-50*time.Second), end.Add(-30*time.Second), 3)
	f.k.EventFor(probed, field, corev1.EventTypeNormal, "Killing", "Container sandbox failed liveness probe, will be restarted", end.Add(-30*time.Second), time.Time{}, 1)

	tenant := f.c.Tenant(t, f.ns)
	f.forge(tenant, noProbe, nil, "Unhealthy", "Liveness probe failed: command timed out", end.Add(-50*time.Second), end.Add(-30*time.Second), 3)
	f.forge(tenant, noProbe, nil, "Killing", "Container sandbox failed liveness probe, will be restarted", end.Add(-30*time.Second), end.Add(-30*time.Second), 1)
	// The API server takes an Event about a Node in a tenant's namespace
	// when its involvedObject names that namespace.
	f.forge(tenant, oom, &corev1.ObjectReference{Kind: "Node", Name: node, APIVersion: "v1", Namespace: f.ns}, "SystemOOM",
		"System OOM encountered, victim process: python, pid: 4242", end, end, 1)
	f.forge(tenant, evict, nil, "Evicted", "The node was low on resource: memory.", end, end, 1)

	// The sweep.
	out, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json", "--timeout", "30s", "--fail-on", "warning")
	if code != 1 {
		t.Errorf("exit %d, want 1 (RESTART_* warnings); stderr %s", code, errOut)
	}
	rep := decodeReport(t, out)
	bySandbox := map[string][]model.Finding{}
	for _, fd := range rep.Findings {
		if strings.HasPrefix(fd.Code, "RESTART_") {
			bySandbox[fd.Sandbox] = append(bySandbox[fd.Sandbox], fd)
		}
	}
	t.Logf("sweep:\n%s", dumpFindings(append(append(append(bySandbox["noprobe"], bySandbox["nooom"]...), bySandbox["noevict"]...), bySandbox["probed"]...)))
	checkForged(t, "sweep", bySandbox["noprobe"], bySandbox["nooom"], bySandbox["noevict"])
	checkCorroborated(t, "sweep", bySandbox["probed"], node)

	// The detail view: its Backend's Restarts, as cli/session.go wires it.
	clients, err := kube.NewClients(f.c.Config, f.ns)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	snap, err := sweep.ClientsSource(clients).Snapshot(ctx, sweep.Options{Namespace: f.ns, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	detail := func(name string) []model.Finding {
		sb := snap.Sandbox("bsbx/" + f.ns + "/" + name)
		if sb == nil {
			t.Fatalf("sandbox %s not in the snapshot", name)
		}
		notices, notes := inspect.NewForensics(snap, clients).ExplainSandbox(ctx, sb)
		if len(notes) > 0 {
			t.Fatalf("notes: %v", notes)
		}
		var out []model.Finding
		for _, n := range notices {
			out = append(out, model.Finding{Code: n.Code, Sandbox: name, Pod: n.Pod, Message: n.Message, Evidence: n.Evidence})
		}
		return out
	}
	checkForged(t, "detail view", detail("noprobe"), nil, detail("noevict"))
	checkCorroborated(t, "detail view", detail("probed"), node)
}

func dumpFindings(fs []model.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s: %s\n", f.Code, f.Sandbox, f.Message)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "  %s: %s\n", e.Kind, e.Text)
		}
	}
	return b.String()
}

// checkForged: the Pods the tenant forged Events about read
// RESTART_UNEXPLAINED, each forged Event listed as a claim set aside.
func checkForged(t *testing.T, where string, noProbe, oom, evict []model.Finding) {
	t.Helper()
	want := func(name string, got []model.Finding, setAside ...string) {
		t.Helper()
		dump := dumpFindings(got)
		if len(got) != 1 || got[0].Code != model.CodeRestartUnexplained {
			t.Errorf("%s: %s: want one RESTART_UNEXPLAINED, got\n%s", where, name, dump)
			return
		}
		for _, s := range setAside {
			if !hasEvidence(got[0], model.Claimed, s) {
				t.Errorf("%s: %s: no claimed evidence %q:\n%s", where, name, s, dump)
			}
		}
		if strings.Contains(dump, "liveness probe: failureThreshold") || strings.Contains(dump, "killed by its liveness probe") {
			t.Errorf("%s: %s: a liveness probe that does not exist:\n%s", where, name, dump)
		}
	}
	want("noprobe", noProbe,
		"set aside: Killing Event at", "container sandbox has no liveness probe in the Pod's spec",
		"set aside: Unhealthy Event at", `an Event's claim (reported by "kubelet" on "node-`)
	if oom != nil {
		want("nooom", oom, "set aside: SystemOOM Event at", `recorded in namespace "`)
	}
	want("noevict", evict, "set aside: Evicted Event at", "the Pod's status records no eviction")
}

// checkCorroborated: probe in the spec, the kubelet's termination and its
// Events: RESTART_LIVENESS, the Events labelled as claims from the Pod's node.
func checkCorroborated(t *testing.T, where string, got []model.Finding, node string) {
	t.Helper()
	dump := dumpFindings(got)
	if len(got) != 1 || got[0].Code != model.CodeRestartLiveness || !strings.Contains(got[0].Message, "killed by its liveness probe") {
		t.Fatalf("%s: probed: want RESTART_LIVENESS, got\n%s", where, dump)
	}
	for _, w := range []struct {
		kind model.EvidenceKind
		text string
	}{
		{model.Claimed, `Killing Event at `},
		{model.Claimed, `an Event's claim (reported by "kubelet" on "` + node + `", the Pod's node`},
		{model.Claimed, `Unhealthy Event(s) "Liveness probe failed"`},
		{model.Observed, "liveness probe: failureThreshold 3, periodSeconds 10; terminationGracePeriodSeconds 30"},
		{model.Inferred, "the verdict stands on the Pod's spec (a liveness probe on container sandbox) and status"},
	} {
		if !hasEvidence(got[0], w.kind, w.text) {
			t.Errorf("%s: probed: no %s evidence %q:\n%s", where, w.kind, w.text, dump)
		}
	}
}
