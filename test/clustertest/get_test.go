package clustertest

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/internal/testcluster"
)

// sandscope get prints the synced fleet with kubectl's conventions.
func TestGet(t *testing.T) {
	f := newFleet(t)

	out, errOut, code := f.run("get", "sandboxes", "-n", f.ns)
	if code != 0 {
		t.Fatalf("get sandboxes: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME ") || strings.Contains(lines[0], "NAMESPACE") {
		t.Fatalf("get sandboxes: want a header and 3 rows, no NAMESPACE column:\n%s", out)
	}
	mustContain(t, "get sandboxes", out, "ENGINE", "IDENTITY", "NOTICES")
	for _, row := range []struct{ name, want string }{{"alpha", "Running"}, {"beta", "POD_DEAD"}, {"plain", "pod"}} {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, row.name+" ") })
		if i < 0 || !strings.Contains(lines[i], row.want) {
			t.Errorf("get sandboxes: no row %s with %s:\n%s", row.name, row.want, out)
		}
	}

	out, _, code = f.run("get", "sb", "-n", f.ns, "-l", "team=rl", "-o", "name")
	if code != 0 || out != "batchsandbox.sandbox.opensandbox.io/alpha\n" {
		t.Errorf("get sb -l team=rl -o name: exit %d\n%s", code, out)
	}

	out, _, code = f.run("get", "sandbox", "alpha", "-n", f.ns, "-o", "json")
	var sb struct {
		APIVersion, Kind, Identity string
		Metadata                   metav1.ObjectMeta
		Slots                      []struct{ RecordedIP string }
	}
	if err := json.Unmarshal([]byte(out), &sb); err != nil || code != 0 {
		t.Fatalf("get sandbox alpha -o json: exit %d, %v\n%s", code, err, out)
	}
	if sb.APIVersion != "sandscope.io/v1" || sb.Kind != "Sandbox" || sb.Metadata.Name != "alpha" || sb.Identity != "OK" ||
		len(sb.Slots) != 1 || sb.Slots[0].RecordedIP != "10.9.0.1" {
		t.Errorf("get sandbox alpha -o json = %+v", sb)
	}

	out, _, code = f.run("get", "po", "-n", f.ns, "-o", "jsonpath={.items[*].metadata.name}")
	if code != 0 || out != "alpha-0 beta-0 plain" {
		t.Errorf("get po -o jsonpath: exit %d: %q", code, out)
	}

	out, _, code = f.run("get", "pools", "-n", f.ns, "--no-headers")
	if code != 0 || !strings.HasPrefix(out, "warm ") || strings.Count(out, "\n") != 1 {
		t.Errorf("get pools --no-headers: exit %d:\n%s", code, out)
	}

	out, _, code = f.run("get", "findings", "-n", f.ns, "-o", "yaml")
	var findings struct {
		Kind  string
		Items []struct{ Code, Sandbox, Severity string }
	}
	if err := yaml.Unmarshal([]byte(out), &findings); err != nil || code != 0 || findings.Kind != "List" {
		t.Fatalf("get findings -o yaml: exit %d, %v\n%s", code, err, out)
	}
	if !slices.ContainsFunc(findings.Items, func(i struct{ Code, Sandbox, Severity string }) bool {
		return i.Code == "POD_DEAD" && i.Sandbox == "beta" && i.Severity == "error"
	}) {
		t.Errorf("get findings: no POD_DEAD error for beta: %+v", findings.Items)
	}

	out, _, code = f.run("get", "sb", "-A", "-l", "team=rl")
	if code != 0 || !strings.HasPrefix(out, "NAMESPACE ") || !strings.Contains(out, f.ns) {
		t.Errorf("get sb -A: exit %d, want a NAMESPACE column:\n%s", code, out)
	}
}

// Exit codes: 1 when a NAME is not there or the cluster cannot be read,
// 2 for usage; an empty answer is kubectl's line on stderr, exit 0.
func TestGetExitCodes(t *testing.T) {
	f := newFleet(t)
	empty := f.c.Namespace(t)
	for _, tc := range []struct {
		name       string
		kubeconfig string
		args       []string
		code       int
		stderr     string
	}{
		{"not found", "", []string{"get", "sb", "alpha", "nope", "-n", f.ns}, 1, `sandboxes "nope" not found`},
		{"empty namespace", "", []string{"get", "sb", "-n", empty}, 0, "No resources found in " + empty + " namespace."},
		{"unknown resource", "", []string{"get", "deployments"}, 2, "unknown resource"},
		{"bad output", "", []string{"get", "sb", "-o", "csv"}, 2, "-o must be one of"},
		{"bad selector", "", []string{"get", "sb", "-l", "a=(b"}, 2, "-l"},
		{"name across namespaces", "", []string{"get", "sb", "alpha", "-A"}, 2, "across all namespaces"},
		{"names of findings", "", []string{"get", "findings", "-o", "name"}, 2, "findings have no names"},
		{"no resource", "", []string{"get"}, 2, "sandboxes (sb), pods (po), pools, claims or findings"},
		{"unreachable", kubeconfigAt(t, f.c, "https://"+deadserver.Refusing(t)), []string{"get", "sb", "--request-timeout", "2s"}, 1, "cannot reach cluster"},
	} {
		kc := tc.kubeconfig
		if kc == "" {
			kc = f.c.Kubeconfig
		}
		out, errOut, code := runWith(kc, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q); stdout:\n%s", tc.name, code, tc.code, errOut, tc.stderr, out)
		}
		if strings.Count(errOut, "\n") > 1 {
			t.Errorf("%s: stderr is more than one line:\n%s", tc.name, errOut)
		}
	}
}

// get needs no verb beyond deploy/clusterrole.yaml: with exactly that
// ClusterRole it reads every resource and warns of nothing. A role missing
// one makes get say which verb on which resource, and where.
func TestGetWithTheDeployedClusterRole(t *testing.T) {
	f := newFleet(t)
	deployed := serviceAccountWithRole(t, f, "full", nil)
	for _, resource := range []string{"sandboxes", "pods", "pools", "findings"} {
		for _, scope := range [][]string{{"-n", f.ns}, {"-A"}} {
			args := append([]string{"get", resource, "--as", deployed}, scope...)
			out, errOut, code := f.run(args...)
			if code != 0 || errOut != "" || out == "" {
				t.Errorf("%s as the deployed ServiceAccount: exit %d, stderr %q, stdout:\n%s", strings.Join(args, " "), code, errOut, out)
			}
		}
	}

	noPools := serviceAccountWithRole(t, f, "nopools", func(r *rbacv1.PolicyRule) {
		r.Resources = slices.DeleteFunc(r.Resources, func(res string) bool { return res == "pools" })
	})
	out, errOut, code := f.run("get", "sb", "-n", f.ns, "--as", noPools)
	want := "forbidden: list pools.sandbox.opensandbox.io in namespace " + f.ns + " (deploy/clusterrole.yaml grants it)"
	// A refused kind makes the read partial: everything seen is printed,
	// and the exit code says it was not the whole fleet.
	if code != 1 || !strings.Contains(errOut, "warning: partial:") || !strings.Contains(errOut, want) || !strings.Contains(out, "alpha") {
		t.Errorf("get sb without pools: exit %d, want 1, the sandboxes and a partial warning with %q on stderr, got %q\n%s", code, want, errOut, out)
	}
	if out, errOut, code := f.run("get", "sb", "-n", f.ns, "--as", noPools, "--allow-partial"); code != 0 || !strings.Contains(errOut, want) || !strings.Contains(out, "alpha") {
		t.Errorf("get sb --allow-partial without pools: exit %d, want 0 and %q on stderr, got %q\n%s", code, want, errOut, out)
	}
}

// serviceAccountWithRole creates a ServiceAccount bound to the ClusterRole
// of deploy/clusterrole.yaml (as edit changes each rule) and returns the
// user name to impersonate with --as.
func serviceAccountWithRole(t *testing.T, f *fleet, name string, edit func(*rbacv1.PolicyRule)) string {
	t.Helper()
	ctx := testcluster.Context(t)
	data, err := os.ReadFile(repoFile(t, "deploy/clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	role.Name = "sandscope-" + name + "-" + f.ns
	if edit != nil {
		for i := range role.Rules {
			edit(&role.Rules[i])
		}
		role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Resources) == 0 })
	}
	rbac := f.c.Kube.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: f.ns}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return "system:serviceaccount:" + f.ns + ":" + name
}
