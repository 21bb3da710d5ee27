package testcluster

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Start starts a test cluster of the test's own (its own etcd and
// kube-apiserver, with opts' CRDs and flags) and stops it when the test
// ends: for tests of sandscope watching several clusters at once, beside
// the package's (Get), or in a package without Main. Without the binaries
// it skips the test (fails under CI=true), as Get does. Starting one takes
// seconds: use it where a second cluster is the point of the test.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	pc, stop := start(opts)
	t.Cleanup(stop)
	return pc.clusterFor(t)
}

// Kubeconfig writes a kubeconfig holding one context per cluster, names[i]
// for clusters[i] (its cluster and user named the same), the first one
// current, and returns its path: what an operator's kubeconfig with
// several clusters looks like.
func Kubeconfig(t testing.TB, names []string, clusters ...*Cluster) string {
	t.Helper()
	if len(names) != len(clusters) || len(names) == 0 {
		t.Fatalf("testcluster.Kubeconfig: %d names for %d clusters", len(names), len(clusters))
	}
	out := clientcmdapi.NewConfig()
	for i, c := range clusters {
		in, err := clientcmd.LoadFromFile(c.Kubeconfig)
		if err != nil {
			t.Fatalf("testcluster.Kubeconfig: %v", err)
		}
		kctx := in.Contexts[in.CurrentContext]
		if kctx == nil {
			t.Fatalf("testcluster.Kubeconfig: %s has no current context", c.Kubeconfig)
		}
		name := names[i]
		out.Clusters[name] = in.Clusters[kctx.Cluster]
		out.AuthInfos[name] = in.AuthInfos[kctx.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: kctx.Namespace}
	}
	out.CurrentContext = names[0]
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatalf("testcluster.Kubeconfig: writing %s: %v", path, err)
	}
	return path
}

// RunningSandbox creates BatchSandbox name in ns and its Pod name-0 Running
// at ip, linked and reported as OpenSandbox's controller and the kubelet do
// (owner reference and labels, the endpoints annotation, phase Succeed),
// and returns the Pod.
func (c *Cluster) RunningSandbox(t testing.TB, ns, name, ip string) *corev1.Pod {
	t.Helper()
	ct, k := c.Controller(t), c.Kubelet(t)
	pod := SandboxPod(name+"-0", "python:3.12-slim", "python", "-m", "server")
	OwnedByBatchSandbox(pod, ct.Create(BatchSandboxGVR, ns, BatchSandbox(name, pod)), 0)
	k.CreatePod(ns, pod)
	ct.SetEndpoints(ns, name, ip)
	ct.SetBatchSandboxStatus(ns, name, map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
	return k.SetRunning(ns, name+"-0", ip)
}

// ConfigAs binds user to a Role named role in ns that grants rules, and
// returns the cluster's config impersonating user: a client with only the
// rights an operator's RBAC gives it.
func (c *Cluster) ConfigAs(t testing.TB, ns, user, role string, rules ...rbacv1.PolicyRule) *rest.Config {
	t.Helper()
	ctx := Context(t)
	r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns}, Rules: rules}
	if _, err := c.Kube.RbacV1().Roles(ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testcluster: creating role %s/%s: %v", ns, role, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user, APIGroup: rbacv1.GroupName}},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: role, APIGroup: rbacv1.GroupName},
	}
	if _, err := c.Kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testcluster: binding role %s/%s to %s: %v", ns, role, user, err)
	}
	// The API server's RBAC authorizer learns of the binding from its
	// informers, a moment after the create returns: a request sent at once
	// can still be forbidden. Wait until it allows the first rule.
	if len(rules) > 0 && len(rules[0].Verbs) > 0 && len(rules[0].Resources) > 0 && len(rules[0].APIGroups) > 0 {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: rules[0].Verbs[0],
				Group: rules[0].APIGroups[0], Resource: rules[0].Resources[0]}}}
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := c.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			return err == nil && got.Status.Allowed, nil
		})
		if err != nil {
			t.Fatalf("testcluster: role %s/%s bound to %s never took effect: %v", ns, role, user, err)
		}
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

// Tenant is a client with a tenant's rights in ns (user tenant-NS, through
// ConfigAs): read its Pods and create Events, nothing else (no Pod status,
// no Nodes). That is enough to forge the kubelet's Events (ForgeEvent).
func (c *Cluster) Tenant(t testing.TB, ns string) kubernetes.Interface {
	t.Helper()
	cfg := c.ConfigAs(t, ns, "tenant-"+ns, "tenant-events",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("testcluster: the tenant's client in %s: %v", ns, err)
	}
	return cs
}

// ForgeEvent writes ev (KubeletEvent's, perhaps edited) as tenant: an
// Event that claims to be the kubelet's but is not.
func ForgeEvent(t testing.TB, tenant kubernetes.Interface, ev *corev1.Event) {
	t.Helper()
	if _, err := tenant.CoreV1().Events(ev.Namespace).Create(Context(t), ev, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testcluster: the tenant writing a %s Event in %s: %v", ev.Reason, ev.Namespace, err)
	}
}
