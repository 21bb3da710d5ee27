package kube_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

// The package's cluster (TestMain in main_test.go) has sandscope's minimal
// CRDs; DiscoverSources must find every engine resource through real
// discovery, the agent Sandbox at its preferred (storage) version v1beta1.
// The absent-CRD notes are tested against a cluster without CRDs in
// test/nocrds.
func TestDiscoverSourcesFindsEngineCRDs(t *testing.T) {
	c := testcluster.Get(t)
	clients, err := kube.NewClients(c.Config, "default")
	if err != nil {
		t.Fatalf("kube.NewClients: %v", err)
	}
	src, err := kube.DiscoverSources(testcluster.Context(t), clients.Discovery)
	if err != nil {
		t.Fatalf("DiscoverSources: %v", err)
	}
	if !src.BatchSandbox || !src.Pool || !src.Snapshot {
		t.Errorf("OpenSandbox sources = batchsandbox %v, pool %v, snapshot %v; want all true", src.BatchSandbox, src.Pool, src.Snapshot)
	}
	if src.Agent == nil || *src.Agent != testcluster.AgentSandboxGVR {
		t.Errorf("agent source = %v, want %v", src.Agent, testcluster.AgentSandboxGVR)
	}
	if len(src.Notes) != 0 {
		t.Errorf("notes with every CRD installed: %q", src.Notes)
	}
	for _, gvr := range []struct{ got, want any }{
		{kube.BatchSandboxGVR, testcluster.BatchSandboxGVR},
		{kube.PoolGVR, testcluster.PoolGVR},
		{kube.SandboxSnapshotGVR, testcluster.SandboxSnapshotGVR},
	} {
		if gvr.got != gvr.want {
			t.Errorf("kube GVR %v differs from the installed CRD's %v", gvr.got, gvr.want)
		}
	}
}

// What discovery finds can be listed: the agent Sandbox at the discovered
// version, through sandscope's own dynamic client.
func TestDiscoveredAgentSandboxCanBeListed(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatalf("kube.NewClients: %v", err)
	}
	ctx := testcluster.Context(t)
	src, err := kube.DiscoverSources(ctx, clients.Discovery)
	if err != nil {
		t.Fatalf("DiscoverSources: %v", err)
	}
	if src.Agent == nil {
		t.Fatalf("agent sandbox not discovered: %+v", src)
	}
	c.Controller(t).Create(testcluster.AgentSandboxGVR, ns, testcluster.AgentSandbox("agent", testcluster.SandboxPod("agent", "")))
	list, err := clients.Dynamic.Resource(*src.Agent).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "agent" {
		t.Fatalf("listing %v: %d items, err %v", *src.Agent, len(list.Items), err)
	}
}

// A server that refuses discovery is reported in its own words, not only
// with the status code client-go's raw read of /api keeps.
func TestDiscoverSourcesKeepsTheRefusalsWords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "Status", "status": "Failure",
			"reason": "Forbidden", "code": 403, "message": `forbidden: User "x" cannot get path "` + r.URL.Path + `"`})
	}))
	defer srv.Close()
	clients, err := kube.NewClients(&rest.Config{Host: srv.URL}, "default")
	if err != nil {
		t.Fatal(err)
	}
	_, err = kube.DiscoverSources(t.Context(), clients.Discovery)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "x" cannot get path`) {
		t.Fatalf("refused discovery: %v, want the server's forbidden message", err)
	}
}
