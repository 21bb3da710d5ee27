package sweep_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// TestSweepOneNamespaceIPTakenElsewhere: `sweep -n NS` on a dead sandbox whose IP a new Pod took
// whose thief lives in another namespace reports IP_TAKEN naming it; with
// `--as` a user who may read NS only, POD_DEAD says other namespaces were
// not checked, with the evidence why.
func TestSweepOneNamespaceIPTakenElsewhere(t *testing.T) {
	f := newFleet(t)
	other := f.c.Namespace(t)
	const ip, user = "10.1.0.90", "ns-reader"
	f.sandbox("victim", "python:3.12-slim", userCommand, nil)
	f.running("victim", ip, "Succeed")
	f.exit("victim", 137)
	f.k.CreatePod(other, testcluster.SandboxPod("thief-0", ""))
	f.k.SetRunning(other, "thief-0", ip)

	out, errOut, _ := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns, "-o", "json")
	rep := decodeReport(t, out)
	taken := findings(rep.Findings, model.CodeIPTaken)
	if len(taken) != 1 || taken[0].Sandbox != "victim" || !strings.Contains(taken[0].Message, "thief-0") ||
		!hasEvidence(taken[0], model.Observed, other+"/thief-0") {
		t.Errorf("IP_TAKEN findings %+v (stderr %q); want victim's IP held by %s/thief-0", taken, errOut, other)
	}
	if dead := findings(rep.Findings, model.CodePodDead); len(dead) != 0 {
		t.Errorf("POD_DEAD where the IP is taken in another namespace: %+v", dead)
	}

	// Only sandscope's CLI acts as user (--as): the config ConfigAs returns is not needed.
	read := []string{"get", "list", "watch"}
	f.c.ConfigAs(t, f.ns, user, "reader",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "events", "configmaps"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{"sandbox.opensandbox.io"}, Resources: []string{"batchsandboxes", "pools"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{"agents.x-k8s.io"}, Resources: []string{"sandboxes"}, Verbs: read})
	out, errOut, _ = runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns, "-o", "json")
	rep = decodeReport(t, out)
	dead := findings(rep.Findings, model.CodePodDead)
	if len(dead) != 1 || !strings.Contains(dead[0].Message, "other namespaces were not checked") ||
		!hasEvidence(dead[0], model.Inferred, "other namespaces could not be read") {
		t.Errorf("as %s: POD_DEAD findings %+v (stderr %q); want one saying other namespaces were not checked", user, dead, errOut)
	}
	if taken := findings(rep.Findings, model.CodeIPTaken); len(taken) != 0 {
		t.Errorf("as %s: IP_TAKEN %+v, though it may not see the thief", user, taken)
	}
	// The unchecked slot makes the read partial: in the contract, as a
	// finding and in the exit code.
	if len(rep.Contexts) != 1 || !rep.Contexts[0].Partial || len(findings(rep.Findings, model.CodeContextPartial)) != 1 {
		t.Errorf("as %s: contexts %+v; want one partial context and a CONTEXT_PARTIAL finding", user, rep.Contexts)
	}
	out, _, _ = runCLI("get", "sb", "victim", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns, "-o", "json")
	if !strings.Contains(out, `"holderChecked": false`) {
		t.Errorf("as %s: get -o json of victim lacks \"holderChecked\": false:\n%s", user, out)
	}
	out, _, code := runCLI("get", "sb", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns)
	if !strings.Contains(out, "POD_DEAD (unchecked)") || code != 1 {
		t.Errorf("as %s: get sb exit %d:\n%s\nwant POD_DEAD (unchecked) and exit 1 (a partial read)", user, code, out)
	}
}

// TestSweepBlindToBatchSandboxes: a user allowed Pods but not
// BatchSandboxes sees the Pods of a broken fleet and none of its sandboxes.
// The sweep must not pass: the context is partial in JSON, JUnit has a
// failing CONTEXT_PARTIAL case naming the denied kind, the default exit is
// 1, and --fail-on error alone lets it pass. get says so too.
func TestSweepBlindToBatchSandboxes(t *testing.T) {
	f := newFleet(t)
	const user = "pods-only"
	f.sandbox("dead", "python:3.12-slim", userCommand, nil)
	f.running("dead", "10.1.0.91", "Succeed")
	f.exit("dead", 137)
	read := []string{"get", "list", "watch"}
	f.c.ConfigAs(t, f.ns, user, "pods-only", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: read})

	// The admin sees the dead sandbox and fails.
	if _, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "-n", f.ns); code != 1 {
		t.Fatalf("admin sweep: exit %d (stderr %q), want 1", code, errOut)
	}
	out, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns, "-o", "json")
	rep := decodeReport(t, out)
	if code != 1 {
		t.Errorf("as %s: exit %d (stderr %q), want 1: the read could not see BatchSandboxes", user, code, errOut)
	}
	if len(rep.Contexts) != 1 || !rep.Contexts[0].Reachable || !rep.Contexts[0].Partial ||
		!strings.Contains(strings.Join(rep.Contexts[0].Unseen, "\n"), "batchsandboxes") {
		t.Errorf("as %s: contexts %+v; want reachable, partial, batchsandboxes unseen", user, rep.Contexts)
	}
	partial := findings(rep.Findings, model.CodeContextPartial)
	if len(partial) != 1 || !hasEvidence(partial[0], model.Observed, "batchsandboxes") {
		t.Errorf("as %s: CONTEXT_PARTIAL findings %+v; want one naming batchsandboxes", user, partial)
	}

	out, _, code = runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns, "-o", "junit")
	if code != 1 || !strings.Contains(out, `type="CONTEXT_PARTIAL"`) || strings.Contains(out, `failures="0"`) {
		t.Errorf("as %s: junit exit %d; want 1 and a CONTEXT_PARTIAL failure:\n%s", user, code, out)
	}
	if _, errOut, code := runCLI("sweep", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns, "--fail-on", "error"); code != 0 {
		t.Errorf("as %s: --fail-on error (partial accepted): exit %d (stderr %q), want 0", user, code, errOut)
	}

	_, errOut, code = runCLI("get", "sb", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns)
	if code != 1 || !strings.Contains(errOut, "warning: partial:") || !strings.Contains(errOut, "batchsandboxes") {
		t.Errorf("as %s: get exit %d, stderr %q; want 1 and a partial warning naming batchsandboxes", user, code, errOut)
	}
	if _, errOut, code := runCLI("get", "sb", "--allow-partial", "--kubeconfig", f.c.Kubeconfig, "--as", user, "-n", f.ns); code != 0 {
		t.Errorf("as %s: get --allow-partial exit %d (stderr %q), want 0", user, code, errOut)
	}
}
