package kube_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// deadSandboxIPTakenElsewhere plays a dead sandbox whose IP a new Pod took across namespaces: the
// BatchSandbox "dead" in ns records ip; its Pod exited; a Pod of another
// namespace holds ip now. It returns that namespace.
func deadSandboxIPTakenElsewhere(t *testing.T, c *testcluster.Cluster, ns, ip string) string {
	t.Helper()
	other := c.Namespace(t)
	kl, ct := c.Kubelet(t), c.Controller(t)
	pod := testcluster.SandboxPod("dead-0", "")
	bsbx := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("dead", pod))
	testcluster.OwnedByBatchSandbox(pod, bsbx, 0)
	kl.CreatePod(ns, pod)
	kl.SetRunning(ns, "dead-0", ip)
	ct.SetEndpoints(ns, "dead", ip)
	ct.SetBatchSandboxStatus(ns, "dead", map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
	kl.Terminate(ns, "dead-0", osv1.ContainerSandbox, 137, "Error")
	kl.SetPhase(ns, "dead-0", corev1.PodFailed, "", "")
	kl.CreatePod(other, testcluster.SandboxPod("thief-0", ""))
	kl.SetRunning(other, "thief-0", ip)
	return other
}

// namespaceReader is a config for a user whose Role reads what sandscope
// watches in ns only.
func namespaceReader(t *testing.T, c *testcluster.Cluster, ns string) *rest.Config {
	t.Helper()
	read := []string{"get", "list", "watch"}
	return c.ConfigAs(t, ns, "sandbox-reader", "sandbox-reader",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{"sandbox.opensandbox.io"}, Resources: []string{"batchsandboxes", "pools"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{"agents.x-k8s.io"}, Resources: []string{"sandboxes"}, Verbs: read},
	)
}

// Viewing one namespace must not turn IP_TAKEN into POD_DEAD: the holder
// lives in another namespace, which the watch does not cover.
func TestIdentityAcrossNamespaces(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	const ip = "127.0.0.81"
	other := deadSandboxIPTakenElsewhere(t, c, ns, ip)

	w := startWatcher(t, c.Config, kube.WatcherOptions{Namespace: ns})
	key := "bsbx/" + ns + "/dead"
	snap, _ := waitFor(t, w, time.Now(), waitTimeout, "IP_TAKEN by the Pod of the other namespace", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(key)
		return sb != nil && sb.Identity() == model.IdentityIPTaken
	})
	sl := snap.Sandbox(key).PrimarySlot()
	if h := sl.Holder; h == nil || h.Namespace != other || h.Pod != "thief-0" || sl.NamespaceOnly {
		t.Errorf("slot %+v holder %+v; want thief-0 of %s", sl, sl.Holder, other)
	}
}

// Where RBAC forbids listing Pods outside the namespace, the slot says it
// was checked in its namespace only instead of claiming POD_DEAD for sure.
func TestIdentityAcrossNamespacesForbidden(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	const ip = "127.0.0.82"
	deadSandboxIPTakenElsewhere(t, c, ns, ip)
	w := startWatcher(t, namespaceReader(t, c, ns), kube.WatcherOptions{Namespace: ns})
	key := "bsbx/" + ns + "/dead"
	snap, _ := waitFor(t, w, time.Now(), waitTimeout, "POD_DEAD checked in its namespace only", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(key)
		return sb != nil && sb.PrimarySlot() != nil && sb.PrimarySlot().NamespaceOnly
	})
	sb := snap.Sandbox(key)
	if sb.Identity() != model.IdentityPodDead {
		t.Errorf("identity %s, want POD_DEAD (the only Pod it may see)", sb.Identity())
	}
	found := false
	for _, n := range sb.Notices {
		if n.Code == model.CodePodDead && strings.Contains(n.Message, "other namespaces were not checked") {
			found = true
		}
	}
	if !found {
		t.Errorf("POD_DEAD does not say other namespaces were not checked: %+v", sb.Notices)
	}
}

// A lookup of other namespaces that fails (here: the server answers the
// cluster-wide list with 503) leaves the slot unchecked, not a plain
// POD_DEAD; once the list answers, the thief is found.
func TestIdentityAcrossNamespacesLookupFails(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	const ip = "127.0.0.83"
	other := deadSandboxIPTakenElsewhere(t, c, ns, ip)
	var failing atomic.Bool
	failing.Store(true)
	cfg := rest.CopyConfig(c.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if failing.Load() && strings.Contains(r.URL.RawQuery, "metadata.namespace") && r.URL.Path == "/api/v1/pods" {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
					Header: http.Header{"Content-Type": []string{"text/plain"}}, Body: io.NopCloser(strings.NewReader("unavailable")), Request: r}, nil
			}
			return rt.RoundTrip(r)
		})
	}
	w := startWatcher(t, cfg, kube.WatcherOptions{Namespace: ns})
	key := "bsbx/" + ns + "/dead"
	snap, _ := waitFor(t, w, time.Now(), waitTimeout, "POD_DEAD unchecked", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(key)
		return sb != nil && sb.PrimarySlot() != nil && sb.Identity() == model.IdentityPodDead && sb.PrimarySlot().NamespaceOnly
	})
	if err := w.ResolveForeignHolders(testcluster.Context(t)); err == nil {
		t.Error("a lookup answered 503 reported no error")
	}
	if sl := snap.Sandbox(key).PrimarySlot(); !sl.NamespaceOnly {
		t.Errorf("after a failed lookup: slot %+v, want unchecked", sl)
	}
	failing.Store(false)
	snap, _ = waitFor(t, w, time.Now(), waitTimeout, "IP_TAKEN once the lookup answers", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(key)
		return sb != nil && sb.Identity() == model.IdentityIPTaken
	})
	if h := snap.Sandbox(key).PrimarySlot().Holder; h == nil || h.Namespace != other {
		t.Errorf("holder %+v, want thief-0 of %s", h, other)
	}
}
