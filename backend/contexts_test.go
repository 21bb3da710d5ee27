package backend

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/sandscope/sandscope/demo"
	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/ui"
)

// Two real API servers, one kubeconfig with a context for each and a third
// whose server never answers: both clusters' fleets are shown while the
// third is still connecting; a delete reaches the sandbox's own cluster;
// when one server is stopped its sandboxes turn UNKNOWN while the other's
// keep updating; and it comes back by itself.
func TestContextSetWithOneServerLost(t *testing.T) {
	alpha := testcluster.Start(t, testcluster.Options{})
	beta := testcluster.Start(t, testcluster.Options{})
	path := testcluster.Kubeconfig(t, []string{"alpha", "beta"}, alpha, beta)
	addSilentContext(t, path, "gamma", "https://"+deadserver.Silent(t))
	// The same namespace and names in both clusters: the rows differ by
	// context alone.
	ns := alpha.Namespace(t)
	if _, err := beta.Kube.CoreV1().Namespaces().Create(testcluster.Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*testcluster.Cluster{alpha, beta} {
		c.RunningSandbox(t, ns, "sbx-1", "10.9.0.1")
		c.RunningSandbox(t, ns, "doomed", "10.9.0.2")
	}

	flags := kube.NewConfigFlags()
	flags.KubeConfig = path
	flags.Overrides.Timeout = "10m" // gamma's first attempt outlasts the test
	e := New(Options{Kube: flags, AllNamespaces: true, StuckAfter: 5 * time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := openContexts(ctx, e, TUIOptions{}, []string{"alpha", "beta", "gamma"})
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
	if err := be.Delete(testcluster.Context(t), fleetOf(cs, "beta").Sandbox(key("doomed"))); err != nil {
		t.Fatal(err)
	}
	if _, err := beta.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Get(testcluster.Context(t), "doomed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("beta's doomed: %v, want NotFound", err)
	}
	if _, err := alpha.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Get(testcluster.Context(t), "doomed", metav1.GetOptions{}); err != nil {
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
func fleetOf(cs *contextSet, name string) *fleet.Snapshot {
	for _, f := range cs.Fleets() {
		if f.Context == name {
			return f.Snap
		}
	}
	return &fleet.Snapshot{}
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

// Each context of a set connects on its own: one that connects syncs; one
// whose server refuses the credentials is forbidden and not tried again;
// one whose kubeconfig cannot reach it is disconnected and not tried again;
// one whose server does not answer yet is disconnected, tried again, and
// syncs once it answers. :ctx shows one, all, or adds a kubeconfig context.
func TestContextSetStates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The contexts that connect are simulated fleets.
	sim := New(Options{Kube: kube.NewConfigFlags(), Demo: &demo.Options{}})
	var flaky atomic.Int32
	connects := map[string]func(context.Context) (*Conn, error){
		"ok": sim.Context("ok").Connect,
		"denied": func(context.Context) (*Conn, error) {
			return nil, &kube.ConnectError{Context: "denied", Reason: "credentials refused (401 Unauthorized)", Denied: true}
		},
		"broken": func(context.Context) (*Conn, error) {
			return nil, &kube.ConnectError{Context: "broken", Reason: "context not found in kubeconfig", Local: true}
		},
		"flaky": func(ctx context.Context) (*Conn, error) {
			if flaky.Add(1) == 1 {
				return nil, &kube.ConnectError{Context: "flaky", Reason: "cluster did not answer within 1s"}
			}
			return sim.Context("flaky").Connect(ctx)
		},
		"extra": sim.Context("extra").Connect,
	}
	// The set's and sessions' own environment is a cluster's, as in the TUI.
	e := New(Options{Kube: kube.NewConfigFlags()})
	cs := newContextSet(ctx, e, TUIOptions{}, func(ctx context.Context, name string) *member {
		return &member{name: name, s: newSession(ctx, e, TUIOptions{}), connect: connects[name]}
	})
	cs.contexts = func() []string { return []string{"ok", "denied", "broken", "flaky", "extra"} }
	for _, name := range []string{"ok", "denied", "broken", "flaky"} {
		cs.add(name)
	}
	defer cs.stop()
	waitUntil(t, cs, "every context settled", func() bool {
		ok, denied, broken, flakySt := fleetOf(cs, "ok").Status, fleetOf(cs, "denied").Status, fleetOf(cs, "broken").Status, fleetOf(cs, "flaky").Status
		return ok.Synced && len(denied.Forbidden) == 1 && broken.DisconnectedSince != nil && flakySt.Synced && flaky.Load() == 2
	})
	if st := fleetOf(cs, "denied").Status; st.DisconnectedSince != nil || !strings.Contains(st.Forbidden[0], "401") {
		t.Errorf("denied: %+v", st)
	}
	if st := fleetOf(cs, "broken").Status; strings.Contains(strings.Join(st.Notes, " "), "trying again") {
		t.Errorf("a context the kubeconfig cannot reach is retried: %+v", st)
	}
	if _, err := cs.backend().ForContext("denied").YAML(ctx, &model.Sandbox{}); err == nil {
		t.Error("an action on a context with no connection did not refuse")
	}

	be := cs.backend()
	names := func() []string {
		var out []string
		for _, f := range cs.Fleets() {
			out = append(out, f.Context)
		}
		return out
	}
	for _, step := range []struct {
		ctx  string
		want []string
	}{
		{"ok", []string{"ok"}},
		{"", []string{"ok", "denied", "broken", "flaky"}},
		{"extra", []string{"extra"}},
		{"", []string{"ok", "denied", "broken", "flaky", "extra"}},
	} {
		if err := be.SwitchContext(step.ctx); err != nil {
			t.Fatalf(":ctx %q: %v", step.ctx, err)
		}
		if got := names(); !slices.Equal(got, step.want) {
			t.Fatalf(":ctx %q shows %v, want %v", step.ctx, got, step.want)
		}
	}
	if err := be.SwitchContext("nowhere"); err == nil || !strings.Contains(err.Error(), `no context "nowhere"`) {
		t.Fatalf(":ctx nowhere: %v", err)
	}
}

// The contexts' watchers publish their freshness at the same instants, a
// few milliseconds apart: the UI hears of them together, as one change to
// draw, not one frame each.
func TestContextSetGathersTheContextsChanges(t *testing.T) {
	cs := newContextSet(t.Context(), New(Options{}), TUIOptions{}, nil)
	var due []func()
	cs.after = func(_ time.Duration, f func()) { due = append(due, f) }
	sub, unsubscribe := cs.Subscribe()
	defer unsubscribe()
	<-sub // the first snapshot's

	for range 10 {
		cs.notifySoon()
		select {
		case <-sub:
			t.Fatal("a context's change reached the UI before the others' could join it")
		default:
		}
	}
	if len(due) != 1 {
		t.Fatalf("%d signals waiting for the others, want 1", len(due))
	}
	due[0]()
	select {
	case <-sub:
	default:
		t.Fatal("the gathered changes never reached the UI")
	}
	cs.notifySoon()
	if len(due) != 2 {
		t.Fatalf("a change after the gathered ones: %d signals waiting, want a new one", len(due)-1)
	}
}
