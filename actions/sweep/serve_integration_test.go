package sweep_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/serve"
)

// TestServeOneNamespaceIPTakenElsewhere: `serve -n` answers as `sweep -n`
// does. With the rights to list Pods everywhere, the dead sandbox whose IP
// a Pod of another namespace holds is IP_TAKEN in /findings; for a user who
// may read the namespace only, it is a POD_DEAD that says other namespaces
// were not checked, the context is partial, and /metrics counts the
// CONTEXT_PARTIAL finding.
func TestServeOneNamespaceIPTakenElsewhere(t *testing.T) {
	f := newFleet(t)
	other := f.c.Namespace(t)
	const ip = "10.1.0.92"
	f.sandbox("victim", "python:3.12-slim", userCommand, nil)
	f.running("victim", ip, "Succeed")
	f.exit("victim", 137)
	f.k.CreatePod(other, testcluster.SandboxPod("thief-0", ""))
	f.k.SetRunning(other, "thief-0", ip)
	read := []string{"get", "list", "watch"}
	reader := f.c.ConfigAs(t, f.ns, "serve-reader", "serve-reader",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{"sandbox.opensandbox.io"}, Resources: []string{"batchsandboxes", "pools"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{"agents.x-k8s.io"}, Resources: []string{"sandboxes"}, Verbs: read},
	)

	admin := serveFindings(t, f.c.Config, f.ns, func(r sweep.Report) bool { return len(findings(r.Findings, model.CodeIPTaken)) == 1 })
	if taken := findings(admin.Findings, model.CodeIPTaken); len(taken) != 1 || !strings.Contains(taken[0].Message, "thief-0") {
		t.Errorf("serve -n as admin: IP_TAKEN %+v; want victim's IP held by %s/thief-0", taken, other)
	}
	if len(admin.Contexts) != 1 || admin.Contexts[0].Partial {
		t.Errorf("serve -n as admin: contexts %+v; want one, read fully", admin.Contexts)
	}

	var metrics string
	limited := serveFindings(t, reader, f.ns, func(r sweep.Report) bool { return len(r.Contexts) == 1 && r.Contexts[0].Partial }, &metrics)
	dead := findings(limited.Findings, model.CodePodDead)
	if len(dead) != 1 || !strings.Contains(dead[0].Message, "other namespaces were not checked") {
		t.Errorf("serve -n as a namespace reader: POD_DEAD %+v; want one saying other namespaces were not checked", dead)
	}
	if len(findings(limited.Findings, model.CodeContextPartial)) != 1 {
		t.Errorf("serve -n as a namespace reader: no CONTEXT_PARTIAL finding: %+v", limited.Findings)
	}
	if !strings.Contains(metrics, `code="CONTEXT_PARTIAL"`) {
		t.Errorf("serve -n as a namespace reader: /metrics lacks the CONTEXT_PARTIAL finding")
	}
}

// serveFindings runs serve -n ns with cfg until its /findings satisfies
// done (or a minute passes) and returns the last report; metrics, when
// given, receives /metrics as it was then.
func serveFindings(t *testing.T, cfg *rest.Config, ns string, done func(sweep.Report) bool, metrics ...*string) sweep.Report {
	t.Helper()
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		t.Fatal(err)
	}
	// Plain HTTP: what is tested here is what the exporter says, not who
	// may read it (serve's own tests cover that).
	s, err := serve.New(clients, serve.Options{ContextName: "test", Namespace: ns, AnalyzeEvery: 200 * time.Millisecond, InsecurePlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	get := func(path string) (string, int) {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			return "", 0
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), resp.StatusCode
	}
	var rep sweep.Report
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		body, code := get("/findings")
		if code != http.StatusOK {
			continue
		}
		rep = sweep.Report{}
		if err := json.Unmarshal([]byte(body), &rep); err != nil {
			t.Fatalf("/findings: %v\n%s", err, body)
		}
		if done(rep) {
			break
		}
	}
	if len(metrics) > 0 {
		*metrics[0], _ = get("/metrics")
	}
	return rep
}
