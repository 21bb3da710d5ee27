package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/kubetest"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/ui"
)

// Two real API servers, one kubeconfig with a context for each and a third
// whose server never answers: both clusters' fleets are shown while the
// third is still connecting; a delete reaches the sandbox's own cluster;
// when one server is stopped its sandboxes turn UNKNOWN while the other's
// keep updating; and it comes back by itself.
func TestContextSetWithOneServerLost(t *testing.T) {
	alpha := kubetest.Start(t, kubetest.Options{})
	beta := kubetest.Start(t, kubetest.Options{})
	path := kubetest.Kubeconfig(t, []string{"alpha", "beta"}, alpha, beta)
	addSilentContext(t, path, "gamma", silentServer(t))
	// The same namespace and names in both clusters: the rows differ by
	// context alone.
	ns := alpha.Namespace(t)
	if _, err := beta.Kube.CoreV1().Namespaces().Create(kubetest.Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*kubetest.Cluster{alpha, beta} {
		c.RunningSandbox(t, ns, "sbx-1", "10.9.0.1")
		c.RunningSandbox(t, ns, "doomed", "10.9.0.2")
	}

	g := &Globals{Kube: kube.NewConfigFlags(), AllNamespaces: true, ImageChecks: "off", StuckAfter: 5 * time.Minute,
		Out: io.Discard, Err: io.Discard}
	g.Kube.KubeConfig = path
	g.Kube.Overrides.Timeout = "10m" // gamma's first attempt outlasts the test
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs, err := openContexts(ctx, g, []string{"alpha", "beta", "gamma"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.stop()
	key := func(name string) string { return "bsbx/" + ns + "/" + name }
	identity := func(ctx, name string) model.IdentityState {
		if sb := fleetOf(cs, ctx).Sandbox(key(name)); sb != nil {
			return sb.Identity()
		}
		return "absent"
	}

	waitUntil(t, cs, "alpha and beta synced, sbx-1 OK in both", func() bool {
		return identity("alpha", "sbx-1") == model.IdentityOK && identity("beta", "sbx-1") == model.IdentityOK
	})
	if st := fleetOf(cs, "gamma").Status; st.Synced || st.DisconnectedSince != nil || !strings.Contains(strings.Join(st.Notes, " "), "connecting") {
		t.Fatalf("gamma should still be connecting, not %+v", st)
	}

	// A delete through beta's backend reaches beta's cluster only.
	be := cs.backend().ForContext("beta")
	if err := be.Delete(kubetest.Context(t), fleetOf(cs, "beta").Sandbox(key("doomed"))); err != nil {
		t.Fatal(err)
	}
	if _, err := beta.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Get(kubetest.Context(t), "doomed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("beta's doomed: %v, want NotFound", err)
	}
	if _, err := alpha.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Get(kubetest.Context(t), "doomed", metav1.GetOptions{}); err != nil {
		t.Fatalf("alpha's doomed went too: %v", err)
	}

	beta.StopAPIServer(t)
	waitUntil(t, cs, "beta disconnected, its sbx-1 UNKNOWN", func() bool {
		return fleetOf(cs, "beta").Status.DisconnectedSince != nil && identity("beta", "sbx-1") == model.IdentityUnknown
	})
	alpha.RunningSandbox(t, ns, "sbx-2", "10.9.0.3")
	waitUntil(t, cs, "alpha's new sbx-2 OK while beta is down", func() bool {
		return identity("alpha", "sbx-2") == model.IdentityOK && identity("alpha", "sbx-1") == model.IdentityOK
	})
	if st := fleetOf(cs, "beta").Status; st.DisconnectedSince == nil || identity("beta", "sbx-1") != model.IdentityUnknown {
		t.Fatalf("beta came back while its server is down: %+v", st)
	}

	beta.StartAPIServer(t)
	waitUntil(t, cs, "beta back, sbx-1 OK", func() bool {
		return fleetOf(cs, "beta").Status.DisconnectedSince == nil && identity("beta", "sbx-1") == model.IdentityOK
	})
}

// fleetOf is context name's latest snapshot in the set.
func fleetOf(cs *contextSet, name string) *model.Snapshot {
	for _, f := range cs.Fleets() {
		if f.Context == name {
			return f.Snap
		}
	}
	return &model.Snapshot{}
}

// waitUntil polls cond until it holds, failing with every context's state.
func waitUntil(t *testing.T, cs *contextSet, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // no speed target: a bound for a loaded machine
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, f := range cs.Fleets() {
				fmt.Fprintf(&b, "\n  %s: %d sandboxes, %+v", f.Context, f.Snap.NumSandboxes(), f.Snap.Status)
			}
			t.Fatalf("never: %s%s", what, b.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// addSilentContext adds context name to the kubeconfig at path, its server
// one that accepts connections and never answers.
func addSilentContext(t *testing.T, path, name, server string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "not-a-real-token"}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

var _ ui.MultiSource = (*contextSet)(nil)
