package sweep_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/kube/kubetest"
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
	f.k.CreatePod(other, kubetest.SandboxPod("thief-0", ""))
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

	ctx := kubetest.Context(t)
	read := []string{"get", "list", "watch"}
	if _, err := f.c.Kube.RbacV1().Roles(f.ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: f.ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "events", "configmaps"}, Verbs: read},
			{APIGroups: []string{"sandbox.opensandbox.io"}, Resources: []string{"batchsandboxes", "pools"}, Verbs: read},
			{APIGroups: []string{"agents.x-k8s.io"}, Resources: []string{"sandboxes"}, Verbs: read},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Kube.RbacV1().RoleBindings(f.ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: f.ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user, APIGroup: rbacv1.GroupName}},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "reader", APIGroup: rbacv1.GroupName},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
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
}
