package kube_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// requestLog records the requests a client sends.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.urls = append(l.urls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// loggedClients are clients for ns that record their requests in log.
func loggedClients(t *testing.T, cfg *rest.Config, ns string) (_ *kube.Clients, log *requestLog) {
	t.Helper()
	log = &requestLog{}
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = log.wrap
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		t.Fatal(err)
	}
	return clients, log
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A one-shot lookup reads the sandbox, its Pods and the holders of its
// address, and derives the same identity as the watched model, without a
// watch and without listing the namespace's fleet (its cost must not grow
// with the namespace).
func TestLookupSandboxIsTargeted(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl, ct := c.Kubelet(t), c.Controller(t)

	// Noise: other sandboxes in the namespace that a namespace-wide read would touch.
	for _, n := range []string{"noise-1", "noise-2", "noise-3"} {
		kl.CreatePod(ns, testcluster.SandboxPod(n, ""))
	}
	bs := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("sbx-a", testcluster.SandboxPod("t", "")))
	kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(testcluster.SandboxPod("sbx-a-0", ""), bs, 0))
	kl.SetRunning(ns, "sbx-a-0", "10.250.13.77")
	ct.SetEndpoints(ns, "sbx-a", "10.250.13.77")
	// Its container dies, and the address goes to a Pod in
	// another namespace: IP_TAKEN.
	kl.Terminate(ns, "sbx-a-0", osv1.ContainerSandbox, 137, "Error")
	kl.SetPhase(ns, "sbx-a-0", corev1.PodFailed, "", "")
	other := c.Namespace(t)
	kl.CreatePod(other, testcluster.SandboxPod("taker", ""))
	kl.SetRunning(other, "taker", "10.250.13.77")

	clients, log := loggedClients(t, c.Config, ns)
	for _, searchNS := range []string{ns, ""} {
		log.urls = nil
		snap, err := clients.LookupSandbox(testcluster.Context(t), "sbx-a", kube.LookupOptions{Namespace: searchNS})
		if err != nil {
			t.Fatal(err)
		}
		var found *model.Sandbox
		for _, sb := range snap.Sandboxes() {
			if sb.Key == model.SandboxKey(model.EngineBatchSandbox, ns, "sbx-a") {
				found = sb
			}
		}
		if found == nil {
			t.Fatalf("namespace %q: sbx-a not in the lookup's snapshot", searchNS)
		}
		if found.Identity() != model.IdentityIPTaken || found.PrimarySlot().Holder == nil || found.PrimarySlot().Holder.Pod != "taker" {
			t.Errorf("namespace %q: identity %s holder %+v, want IP_TAKEN by taker", searchNS, found.Identity(), found.PrimarySlot().Holder)
		}
		for _, sb := range snap.Sandboxes() {
			if strings.Contains(sb.Key, "noise") {
				t.Errorf("namespace %q: the lookup read unrelated sandbox %s", searchNS, sb.Key)
			}
		}
		for _, u := range log.urls {
			if strings.Contains(u, "watch=true") {
				t.Errorf("namespace %q: the lookup started a watch: %s", searchNS, u)
			}
			if strings.HasPrefix(u, "GET /api/v1/namespaces/"+ns+"/pods?") && !strings.Contains(u, "Selector=") {
				t.Errorf("namespace %q: the lookup listed the namespace's Pods: %s", searchNS, u)
			}
			if strings.Contains(u, "/batchsandboxes?") && !strings.Contains(u, "Selector=") {
				t.Errorf("namespace %q: the lookup listed every BatchSandbox: %s", searchNS, u)
			}
		}
		t.Logf("namespace %q: %d requests: %v", searchNS, len(log.urls), log.urls)
	}
}

// A sandbox whose Pod serves its address (Running there, not deleting)
// needs no cluster-wide list of the Pods holding that address: no other
// live Pod can hold it. That list scans every Pod on the server.
func TestLookupHealthySandboxListsNoHolders(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl, ct := c.Kubelet(t), c.Controller(t)
	bs := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox("sbx-h", testcluster.SandboxPod("t", "")))
	kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(testcluster.SandboxPod("sbx-h-0", ""), bs, 0))
	kl.SetRunning(ns, "sbx-h-0", "10.250.13.88")
	ct.SetEndpoints(ns, "sbx-h", "10.250.13.88")

	clients, log := loggedClients(t, c.Config, ns)
	snap, err := clients.LookupSandbox(testcluster.Context(t), "sbx-h", kube.LookupOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	sb := snap.Sandbox(model.SandboxKey(model.EngineBatchSandbox, ns, "sbx-h"))
	if sb == nil || sb.Identity() != model.IdentityOK {
		t.Fatalf("healthy sandbox: %+v", sb)
	}
	for _, u := range log.urls {
		if strings.Contains(u, "status.podIP") {
			t.Errorf("a healthy sandbox's lookup listed the holders of its address: %s", u)
		}
	}
}

// The short id the TUI shows (the start of a BatchSandbox's id) finds its
// sandbox on a cluster, in -n or in every namespace; a short id several
// ids start with reads each of them, for the caller to say AMBIGUOUS.
func TestLookupSandboxByShortID(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl, ct := c.Kubelet(t), c.Controller(t)
	ids := []string{"16952042-4659-4a6b-9d3e-0c5aff3444d1", "8efd263d-1111-4a6b-9d3e-0c5aff3444d1", "8efd263e-2222-4a6b-9d3e-0c5aff3444d1"}
	for i, id := range ids {
		bs := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox(id, testcluster.SandboxPod("t", "")))
		kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(testcluster.SandboxPod(id+"-0", ""), bs, 0))
		ip := "10.250.14." + string(rune('1'+i))
		kl.SetRunning(ns, id+"-0", ip)
		ct.SetEndpoints(ns, id, ip)
	}
	clients, _ := loggedClients(t, c.Config, ns)
	names := func(ref, searchNS string) []string {
		t.Helper()
		snap, err := clients.LookupSandbox(testcluster.Context(t), ref, kube.LookupOptions{Namespace: searchNS})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, sb := range snap.Sandboxes() {
			out = append(out, sb.Name())
		}
		return out
	}
	for _, searchNS := range []string{ns, ""} {
		if got := names("16952042", searchNS); len(got) != 1 || got[0] != ids[0] {
			t.Errorf("namespace %q: short id 16952042 read %v, want %s", searchNS, got, ids[0])
		}
		if got := names("8efd263", searchNS); len(got) != 2 {
			t.Errorf("namespace %q: short id 8efd263 read %v, want both sandboxes it starts", searchNS, got)
		}
	}
	if got := names("sbx-nothing", ns); len(got) != 0 {
		t.Errorf("a name that is no id read %v", got)
	}
}

// explain restart reads a sandbox's Pod by the short id the TUI shows too;
// a short id several ids start with is an error naming them.
func TestResolvePodByShortID(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl, ct := c.Kubelet(t), c.Controller(t)
	for _, id := range []string{"2a0b0c0d-4659-4a6b-9d3e-0c5aff3444d1", "7f00aa01-1111-4a6b-9d3e-0c5aff3444d1", "7f00aa02-2222-4a6b-9d3e-0c5aff3444d1"} {
		bs := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox(id, testcluster.SandboxPod("t", "")))
		kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(testcluster.SandboxPod(id+"-0", ""), bs, 0))
	}
	clients, _ := loggedClients(t, c.Config, ns)
	pod, how, err := clients.ResolvePod(testcluster.Context(t), ns, "2a0b0c0d")
	if err != nil || pod.Name != "2a0b0c0d-4659-4a6b-9d3e-0c5aff3444d1-0" {
		t.Fatalf("ResolvePod(2a0b0c0d): %v, %q, %v", pod, how, err)
	}
	if _, _, err := clients.ResolvePod(testcluster.Context(t), ns, "7f00aa0"); err == nil || !strings.Contains(err.Error(), "several") {
		t.Errorf("ResolvePod(7f00aa0), two ids start so: %v, want an error naming both", err)
	}
}

// A name no label value can spell (as an operator may type it) names no
// sandbox: ResolvePod says not found, as for any name nothing carries. It
// asked the API server for Pods by a selector that cannot parse, and the
// server answered 400 (client-go's fake, the demo's, panicked).
func TestResolvePodOfANameNoLabelCanSpell(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	clients, _ := loggedClients(t, c.Config, ns)
	for _, name := range []string{"Foo_", "a b", "x!", strings.Repeat("x", 70)} {
		if _, _, err := clients.ResolvePod(testcluster.Context(t), ns, name); !apierrors.IsNotFound(err) {
			t.Errorf("ResolvePod(%q): %v, want not found", name, err)
		}
	}
}
