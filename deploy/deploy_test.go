// Package deploy_test checks the in-cluster manifests and alert rules with
// the real parts: the test cluster's API server (server-side dry run),
// kubectl's kustomize, promtool, and a real Prometheus scraping sandscope
// serve (e2e_test.go).
package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/sandscope/sandscope/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// tool finds a binary the test needs: it skips when it is missing, and
// fails under CI=true, where scripts/test.sh installs it.
func tool(t *testing.T, name string, dirs ...string) string {
	t.Helper()
	for _, d := range dirs {
		if p := filepath.Join(d, name); isExecutable(p) {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " not found (Debian: apt-get install prometheus; scripts/test.sh installs it)"
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true: " + msg)
	}
	t.Skip(msg)
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func kubectl(t *testing.T) string { return tool(t, "kubectl", testcluster.BinDir()) }

func run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.Bytes()
}

// TestManifestsDryRunServer renders deploy/ with kubectl's kustomize and
// has the real API server validate every object (schema, RBAC references,
// field values) without keeping them.
func TestManifestsDryRunServer(t *testing.T) {
	c := testcluster.Get(t)
	k := kubectl(t)
	rendered := run(t, nil, k, "kustomize", ".")
	for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Service", "NetworkPolicy"} {
		if !bytes.Contains(rendered, []byte("\nkind: "+kind+"\n")) {
			t.Errorf("kustomize output has no %s", kind)
		}
	}
	// Objects in a namespace that does not exist yet fail a server-side dry
	// run (nothing is created), so the namespace is made for real first.
	ctx := testcluster.Context(t)
	_, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sandscope"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	out := run(t, rendered, k, "--kubeconfig", c.Kubeconfig, "apply", "--dry-run=server", "-f", "-")
	t.Logf("%s", out)
	for _, want := range []string{"clusterrole.rbac.authorization.k8s.io/sandscope-readonly", "clusterrole.rbac.authorization.k8s.io/sandscope-auth",
		"clusterrole.rbac.authorization.k8s.io/sandscope-metrics-reader", "networkpolicy.networking.k8s.io/sandscope", "deployment.apps/sandscope", "service/sandscope"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("dry run did not report %s", want)
		}
	}
	// The monitoring kustomization renders (its CRDs belong to the
	// Prometheus Operator, not installed here).
	mon := run(t, nil, k, "kustomize", "monitoring")
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule", "ClusterRoleBinding"} {
		if !bytes.Contains(mon, []byte("kind: "+kind+"\n")) {
			t.Errorf("monitoring kustomize output has no %s", kind)
		}
	}
	// The scraper's binding keeps Prometheus's namespace through kustomize.
	if !bytes.Contains(mon, []byte("  name: prometheus-k8s\n  namespace: monitoring\n")) {
		t.Errorf("monitoring kustomize moved the scraper's ServiceAccount:\n%s", mon)
	}
}

// TestAuthRolesAreWhatServeNeeds: serve's own auth role only asks the API
// server (token and access reviews, nothing else); the readers' role grants
// get on the two endpoints with fleet data and nothing more; the
// NetworkPolicy admits only the serve port of serve's Pods. The e2e tests
// create these roles for real and scrape through them.
func TestAuthRolesAreWhatServeNeeds(t *testing.T) {
	t.Parallel()
	var auth, reader rbacv1.ClusterRole
	readYAML(t, "auth-clusterrole.yaml", &auth)
	readYAML(t, "metrics-reader-clusterrole.yaml", &reader)
	wantAuth := []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	}
	if !reflect.DeepEqual(auth.Rules, wantAuth) {
		t.Errorf("auth-clusterrole.yaml rules = %+v, want %+v", auth.Rules, wantAuth)
	}
	wantReader := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics", "/findings"}, Verbs: []string{"get"}}}
	if !reflect.DeepEqual(reader.Rules, wantReader) {
		t.Errorf("metrics-reader-clusterrole.yaml rules = %+v, want %+v", reader.Rules, wantReader)
	}
	var binding rbacv1.ClusterRoleBinding
	readYAML(t, "auth-clusterrolebinding.yaml", &binding)
	if binding.RoleRef.Name != auth.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != "sandscope" {
		t.Errorf("auth-clusterrolebinding.yaml does not bind %s to the sandscope ServiceAccount: %+v", auth.Name, binding)
	}

	var np networkingv1.NetworkPolicy
	readYAML(t, "networkpolicy.yaml", &np)
	var d struct {
		Spec struct {
			Template struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
				Spec     corev1.PodSpec    `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	readYAML(t, "deployment.yaml", &d)
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Metadata.Labels)) {
		t.Errorf("the NetworkPolicy's podSelector %v does not select serve's Pods %v", np.Spec.PodSelector, d.Spec.Template.Metadata.Labels)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Ingress) != 1 {
		t.Fatalf("the NetworkPolicy is not one ingress rule: %+v", np.Spec)
	}
	in := np.Spec.Ingress[0]
	if len(in.From) == 0 || len(in.Ports) != 1 || in.Ports[0].Port == nil || in.Ports[0].Port.String() != d.Spec.Template.Spec.Containers[0].Ports[0].Name {
		t.Errorf("the NetworkPolicy does not admit only serve's port from named peers: %+v", in)
	}
	for _, peer := range in.From {
		if peer.NamespaceSelector == nil || len(peer.NamespaceSelector.MatchLabels) == 0 || peer.PodSelector == nil || len(peer.PodSelector.MatchLabels) == 0 {
			t.Errorf("the NetworkPolicy admits a peer by less than namespace and Pod labels: %+v", peer)
		}
	}
}

// TestDeploymentHardening keeps the Deployment non-root, read-only and
// probed on the endpoints serve answers.
func TestDeploymentHardening(t *testing.T) {
	t.Parallel()
	var d struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	readYAML(t, "deployment.yaml", &d)
	ps := d.Spec.Template.Spec
	if ps.SecurityContext == nil || ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
		t.Error("pod does not require a non-root user")
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%d containers", len(ps.Containers))
	}
	ctr := ps.Containers[0]
	sc := ctr.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("container root filesystem not read-only or privilege escalation allowed")
	}
	if ctr.Resources.Requests.Cpu().IsZero() || ctr.Resources.Requests.Memory().IsZero() {
		t.Error("no CPU or memory request")
	}
	if ctr.LivenessProbe == nil || ctr.LivenessProbe.HTTPGet == nil || ctr.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Error("liveness probe is not GET /healthz")
	}
	if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet == nil || ctr.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("readiness probe is not GET /readyz")
	}
	if len(ctr.Args) == 0 || ctr.Args[0] != "serve" {
		t.Errorf("args %v do not run serve", ctr.Args)
	}
}

// TestClusterRoleIsReadOnly: no verb that changes anything, no secrets.
func TestClusterRoleIsReadOnly(t *testing.T) {
	t.Parallel()
	var cr rbacv1.ClusterRole
	readYAML(t, "clusterrole.yaml", &cr)
	if len(cr.Rules) == 0 {
		t.Fatal("no rules")
	}
	for _, r := range cr.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" {
				t.Errorf("verb %q on %v", v, r.Resources)
			}
		}
		for _, res := range r.Resources {
			if res == "*" || res == "secrets" || strings.Contains(res, "/") {
				t.Errorf("resource %q", res)
			}
		}
	}
}

// TestAlertRules runs the rules' unit tests with promtool.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	promtool := tool(t, "promtool")
	run(t, nil, promtool, "check", "rules", "alerts.yaml")
	out := run(t, nil, promtool, "test", "rules", "alerts_test.yaml")
	t.Logf("%s", out)
}

// TestPrometheusRuleMatchesAlerts keeps the Operator's copy of the rules
// equal to alerts.yaml.
func TestPrometheusRuleMatchesAlerts(t *testing.T) {
	t.Parallel()
	var file struct {
		Groups []any `json:"groups"`
	}
	var pr struct {
		Spec struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	readYAML(t, "alerts.yaml", &file)
	readYAML(t, filepath.Join("monitoring", "prometheusrule.yaml"), &pr)
	if len(file.Groups) == 0 || !reflect.DeepEqual(file.Groups, pr.Spec.Groups) {
		t.Error("monitoring/prometheusrule.yaml's groups differ from alerts.yaml")
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestReadmeRBACMatchesClusterRole keeps the README's RBAC table generated
// from clusterrole.yaml, the one source of truth.
func TestReadmeRBACMatchesClusterRole(t *testing.T) {
	t.Parallel()
	var cr rbacv1.ClusterRole
	readYAML(t, "clusterrole.yaml", &cr)
	var b strings.Builder
	b.WriteString("| API group | resources | verbs |\n|---|---|---|\n")
	for _, r := range cr.Rules {
		group := strings.Join(r.APIGroups, ", ")
		if group == "" {
			group = "core"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", group, strings.Join(r.Resources, ", "), strings.Join(r.Verbs, ", "))
	}
	want := b.String()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- rbac: generated from deploy/clusterrole.yaml -->\n", "<!-- rbac end -->"
	_, rest, ok := strings.Cut(string(readme), begin)
	got, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("README.md has no %q ... %q block", strings.TrimSpace(begin), end)
	}
	if got != want {
		t.Errorf("README's RBAC table differs from deploy/clusterrole.yaml; it should read:\n%s", want)
	}
}
