package deploy_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sandscope/sandscope/actions/sweep"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/syncbuf"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/serve"
)

// TestServeScrapedByPrometheus is the whole chain with the real parts: the
// real API server holds a fleet with IP_TAKEN, a stuck Terminating Pod and
// OOM restarts; sandscope serve watches it as the deploy/ ServiceAccount
// (through the ClusterRole, impersonated), a real Prometheus scrapes it
// every second with deploy/alerts.yaml loaded, and the test reads what
// Prometheus stored: the IP_TAKEN series goes 1 → 0 when the IP is freed,
// and the IP_TAKEN alert fires.
func TestServeScrapedByPrometheus(t *testing.T) {
	promBin := tool(t, "prometheus")
	c, ns := testcluster.GetWithNamespace(t)
	k, ct := c.Kubelet(t), c.Controller(t)
	ctx := testcluster.Context(t)

	// The fleet. serve watches every namespace, so its IPs must be this
	// run's own: another run's live Pods would hold them (IP_TAKEN).
	block := ipBlock.Add(1)
	ip := func(host int) string { return fmt.Sprintf("10.7.%d.%d", block, host) }
	sandbox := func(name, ip string, edit func(*corev1.Pod)) {
		pod := testcluster.SandboxPod(name+"-0", "python:3.12-slim", "python", "-m", "server")
		bsbx := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox(name, pod))
		testcluster.OwnedByBatchSandbox(pod, bsbx, 0)
		if edit != nil {
			edit(pod)
		}
		k.CreatePod(ns, pod)
		if ip != "" {
			k.SetRunning(ns, name+"-0", ip)
			ct.SetEndpoints(ns, name, ip)
			ct.SetBatchSandboxStatus(ns, name, map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
		}
	}
	sandbox("healthy", ip(1), nil)
	// IP_TAKEN: the victim's container exits, its IP goes to the thief's Pod.
	sandbox("victim", ip(2), nil)
	k.Terminate(ns, "victim-0", osv1.ContainerSandbox, 1, "Error")
	k.SetPhase(ns, "victim-0", corev1.PodFailed, "", "")
	sandbox("thief", ip(2), nil)
	// Stuck Terminating: deleted, held by a finalizer, main container still
	// in PodInitializing; grace 1 s + stuck-after 1 s.
	grace := int64(1)
	sandbox("stuck", "", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &grace })
	k.Schedule(ns, "stuck-0", testcluster.DefaultNode)
	k.SetWaiting(ns, "stuck-0", osv1.ContainerSandbox, "PodInitializing", "")
	k.DeleteHeld(ns, "stuck-0")
	t.Cleanup(func() { k.Release(ns, "stuck-0") })
	// Restarted twice by the OOM killer once serve is watching (below).
	sandbox("oom", ip(3), func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
	})

	// serve, as the deploy/ ServiceAccount: only the ClusterRole's verbs.
	cfg := serviceAccountConfig(t, c, ns)
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		t.Fatal(err)
	}
	clients.Context = "testcluster"
	srv := startServe(t, ctx, clients, serve.Options{StuckAfter: time.Second, AnalyzeEvery: time.Second, Log: logWriter{t}})
	base := "https://" + srv.addr
	eventually(t, 30*time.Second, "serve ready", func() (bool, string) {
		code, body := get(base + "/readyz")
		return code == http.StatusOK, fmt.Sprintf("/readyz %d %s", code, body)
	})

	// The scraper: a ServiceAccount bound to deploy/'s metrics reader role,
	// as deploy/monitoring binds Prometheus's.
	scraper := readerToken(t, c, ns, "prometheus", true)

	// The first analysis is the restart counter's baseline; the OOM kills
	// come after it.
	eventually(t, 30*time.Second, "first analysis", func() (bool, string) {
		code, body := getAs(base+"/findings", scraper)
		return code == http.StatusOK, fmt.Sprintf("/findings %d %s", code, body)
	})
	k.Restart(ns, "oom-0", osv1.ContainerSandbox, 137, "OOMKilled")
	k.Restart(ns, "oom-0", osv1.ContainerSandbox, 137, "OOMKilled")

	// A real Prometheus scraping it over HTTPS with the scraper's token, as
	// deploy/monitoring/servicemonitor.yaml configures it, the alert rules
	// loaded with every `for` cut to 0 s so the test need not wait out the
	// real durations.
	prom := startPrometheus(t, promBin, srv.addr, scraper)

	eventually(t, 60*time.Second, "IP_TAKEN scraped as 1", func() (bool, string) {
		v, ok := prom.value(t, fmt.Sprintf(`sandscope_identity{namespace=%q,state="IP_TAKEN"}`, ns))
		return ok && v == 1, fmt.Sprintf("value %v (present %v)", v, ok)
	})
	eventually(t, 30*time.Second, "the stuck Pod and the OOM restarts scraped", func() (bool, string) {
		stuck, _ := prom.value(t, fmt.Sprintf(`sandscope_stuck_terminating_pods{namespace=%q,phase="init"}`, ns))
		oom, _ := prom.value(t, fmt.Sprintf(`sandscope_restarts_total{namespace=%q,cause="oom"}`, ns))
		return stuck == 1 && oom == 2, fmt.Sprintf("stuck %v, oom restarts %v", stuck, oom)
	})
	// pods, batchsandboxes, pools, agent sandboxes, and agent-sandbox's
	// sandboxclaims, sandboxwarmpools and sandboxtemplates.
	eventually(t, 30*time.Second, "every watch up", func() (bool, string) {
		down, _ := prom.value(t, `count(sandscope_watch_up == 0) or vector(0)`)
		up, _ := prom.value(t, `count(sandscope_watch_up == 1)`)
		return down == 0 && up == 7, fmt.Sprintf("%v up, %v down", up, down)
	})
	if f := srv.State().Snapshot.Status.Forbidden; len(f) > 0 {
		t.Errorf("the ClusterRole lacks a verb serve uses: %v", f)
	}
	eventually(t, 30*time.Second, "SandscopeIPTaken firing", func() (bool, string) {
		return prom.firing(t, "SandscopeIPTaken", ns)
	})

	// /findings is the sweep's report: the same findings as `sweep -o json`.
	compareWithSweep(t, base, scraper, c, ns)

	// Free the IP: the thief's Pod goes away; the victim is dead, no longer
	// answered by another container.
	k.ForceDelete(ns, "thief-0")
	eventually(t, 60*time.Second, "IP_TAKEN scraped as 0", func() (bool, string) {
		v, ok := prom.value(t, fmt.Sprintf(`sandscope_identity{namespace=%q,state="IP_TAKEN"}`, ns))
		return ok && v == 0, fmt.Sprintf("value %v (present %v)", v, ok)
	})

	// SIGTERM's path: the context ends, serve shuts down cleanly.
	srv.stop()
	select {
	case err := <-srv.served:
		if err != nil {
			t.Errorf("serve returned %v on shutdown", err)
		}
		srv.served <- nil // for the cleanup
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop within 15 s of its context ending")
	}
}

// TestServeSaysWhichVerbIsMissing: a ServiceAccount whose role lacks the
// OpenSandbox verbs still gets the rest of the fleet served; the watches it
// may not list read 0 and the log names the refused request.
func TestServeSaysWhichVerbIsMissing(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	cfg := serviceAccountConfigWith(t, c, ns, func(cr *rbacv1.ClusterRole) {
		cr.Rules = slices.DeleteFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, "sandbox.opensandbox.io")
		})
	})
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	srv := startServe(t, testcluster.Context(t), clients, serve.Options{AnalyzeEvery: time.Second, Log: log})
	base := "https://" + srv.addr
	scraper := readerToken(t, c, ns, "prometheus", true)
	eventually(t, 30*time.Second, "batchsandboxes and pools down, pods up", func() (bool, string) {
		_, body := getAs(base+"/metrics", scraper)
		ok := strings.Contains(body, `sandscope_watch_up{resource="batchsandboxes"} 0`) &&
			strings.Contains(body, `sandscope_watch_up{resource="pools"} 0`) &&
			strings.Contains(body, `sandscope_watch_up{resource="pods"} 1`)
		return ok, body
	})
	eventually(t, 30*time.Second, "the log names the refused request", func() (bool, string) {
		l := log.String()
		return strings.Contains(l, "refuses: forbidden: list batchsandboxes.sandbox.opensandbox.io in all namespaces (deploy/clusterrole.yaml grants it)"), l
	})
}

// TestServeAuthorizesWithTheAPIServer: over TLS, /metrics and /findings
// answer 401 without a token or with one the API server does not know, 403
// to a ServiceAccount not bound to deploy/'s metrics reader role, 200 to
// one that is; the probes' endpoints answer anyone. serve asks as deploy/'s
// ServiceAccount, through deploy/'s auth role.
func TestServeAuthorizesWithTheAPIServer(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	clients, err := kube.NewClients(serviceAccountConfig(t, c, ns), ns)
	if err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	srv := startServe(t, testcluster.Context(t), clients, serve.Options{AnalyzeEvery: time.Second, Log: log})
	base := "https://" + srv.addr
	eventually(t, 30*time.Second, "serve ready", func() (bool, string) {
		code, body := get(base + "/readyz")
		return code == http.StatusOK, fmt.Sprintf("/readyz %d %s", code, body)
	})
	reader := readerToken(t, c, ns, "reader", true)
	stranger := readerToken(t, c, ns, "stranger", false)
	for _, path := range []string{"/metrics", "/findings"} {
		for _, tc := range []struct {
			who, token string
			want       int
		}{
			{"no token", "", http.StatusUnauthorized},
			{"a token the API server does not know", "not-a-token-of-this-cluster", http.StatusUnauthorized},
			{"a user without get " + path, stranger, http.StatusForbidden},
			{"a user bound to the metrics reader role", reader, http.StatusOK},
		} {
			var code int
			var body string
			// The first analysis may still be running: /findings answers
			// 503 to an allowed user until then.
			eventually(t, 30*time.Second, path+" for "+tc.who, func() (bool, string) {
				code, body = getAs(base+path, tc.token)
				return code != http.StatusServiceUnavailable, body
			})
			if code != tc.want {
				t.Errorf("GET %s with %s: %d, want %d: %.200s", path, tc.who, code, tc.want, body)
			}
			if code != http.StatusOK && (strings.Contains(body, "sandscope_") || strings.Contains(body, "go_goroutines") || strings.Contains(body, `"findings"`)) {
				t.Errorf("GET %s with %s: refused but the body tells about the fleet: %s", path, tc.who, body)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(base + path); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d %s, want 200 (the kubelet's probes send none)", path, code, body)
		}
	}
	// Plain HTTP on the TLS port gets no fleet data.
	if code, body := get("http://" + srv.addr + "/metrics"); code == http.StatusOK {
		t.Errorf("plain HTTP answered /metrics: %s", body)
	}
	if l := log.String(); !strings.Contains(l, "may not get the non-resource URL") {
		t.Errorf("the log does not say why the stranger was refused: %s", l)
	}
}

// ipBlock numbers the runs of the end-to-end test in this process (-count).
var ipBlock atomic.Int32

// serviceAccountConfig creates deploy/'s ClusterRole for real, a
// ServiceAccount in ns bound to it, and returns an admin config that
// impersonates that ServiceAccount.
func serviceAccountConfig(t *testing.T, c *testcluster.Cluster, ns string) *rest.Config {
	return serviceAccountConfigWith(t, c, ns, nil)
}

// serviceAccountConfigWith is serviceAccountConfig with the ClusterRole's
// rules edited first.
func serviceAccountConfigWith(t *testing.T, c *testcluster.Cluster, ns string, edit func(*rbacv1.ClusterRole)) *rest.Config {
	t.Helper()
	ctx := testcluster.Context(t)
	var cr rbacv1.ClusterRole
	readYAML(t, "clusterrole.yaml", &cr)
	if edit != nil {
		edit(&cr)
	}
	cr.Name = "sandscope-e2e-" + ns
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, &cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sandscope"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: cr.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "sandscope", Namespace: ns}},
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// deploy/'s token and access reviews, bound as deploy/ binds them.
	bindClusterRoleFile(t, c, "auth-clusterrole.yaml", ns, "sandscope")
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":sandscope"}
	return cfg
}

// bindClusterRoleFile creates the ClusterRole of deploy/file for real
// (renamed for this test's namespace) and binds it to the ServiceAccount
// ns/sa.
func bindClusterRoleFile(t *testing.T, c *testcluster.Cluster, file, ns, sa string) {
	t.Helper()
	ctx := testcluster.Context(t)
	var cr rbacv1.ClusterRole
	readYAML(t, file, &cr)
	cr.Name = cr.Name + "-e2e-" + ns + "-" + sa
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, &cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: cr.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// readerToken creates the ServiceAccount ns/name, bound to deploy/'s
// metrics reader role when allowed, and returns a token of it from the API
// server's TokenRequest, as the kubelet mounts one into Prometheus's Pod.
func readerToken(t *testing.T, c *testcluster.Cluster, ns, name string, allowed bool) string {
	t.Helper()
	ctx := testcluster.Context(t)
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if allowed {
		bindClusterRoleFile(t, c, "metrics-reader-clusterrole.yaml", ns, name)
	}
	expiry := int64(3600)
	tr, err := c.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// serving is a serve.Server running on a free loopback port until stop or
// the end of the test.
type serving struct {
	*serve.Server
	addr   string
	stop   context.CancelFunc
	served chan error // what Serve returned
}

func startServe(t *testing.T, ctx context.Context, clients *kube.Clients, opts serve.Options) *serving {
	t.Helper()
	srv, err := serve.New(clients, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(ctx)
	s := &serving{Server: srv, addr: ln.Addr().String(), stop: stop, served: make(chan error, 1)}
	go func() { s.served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		<-s.served
	})
	return s
}

// compareWithSweep reads /findings and `sandscope sweep -o json` on the same
// namespace and compares their findings (code, sandbox, severity).
func compareWithSweep(t *testing.T, base, token string, c *testcluster.Cluster, ns string) {
	t.Helper()
	type key struct{ code, sandbox, severity string }
	keys := func(r sweep.Report) []key {
		var out []key
		for _, f := range r.Findings {
			if f.Namespace == ns {
				out = append(out, key{f.Code, f.Sandbox, string(f.Severity)})
			}
		}
		slices.SortFunc(out, func(a, b key) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		return out
	}
	run := clitest.Run(cli.Main, "", "sweep", "--kubeconfig", c.Kubeconfig, "-n", ns, "-o", "json", "--stuck-after", "1s")
	var want sweep.Report
	if err := json.Unmarshal([]byte(run.Stdout), &want); err != nil {
		t.Fatalf("sweep -o json: %v\n%s%s", err, run.Stdout, run.Stderr)
	}
	var got sweep.Report
	var last string
	eventually(t, 30*time.Second, "/findings equal to sweep's", func() (bool, string) {
		code, body := getAs(base+"/findings", token)
		if code != http.StatusOK {
			return false, fmt.Sprintf("/findings %d %s", code, body)
		}
		got = sweep.Report{}
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			return false, err.Error()
		}
		last = fmt.Sprintf("serve %v\nsweep %v", keys(got), keys(want))
		return slices.Equal(keys(got), keys(want)), last
	})
	if len(got.Contexts) != 1 || !got.Contexts[0].Reachable || got.Contexts[0].Name != "testcluster" {
		t.Errorf("/findings contexts = %+v", got.Contexts)
	}
	for _, code := range []string{model.CodeIPTaken, model.CodeStuckTerminating, model.CodeRestartOOM} {
		if !slices.ContainsFunc(got.Findings, func(f model.Finding) bool { return f.Code == code && f.Namespace == ns }) {
			t.Errorf("/findings has no %s", code)
		}
	}
}

type prometheus struct {
	base string
}

// startPrometheus runs Debian's prometheus on a free loopback port with a
// generated config: scrape target every second over HTTPS with token as
// its bearer token file (serve's certificate is self-signed: not
// verified), deploy/alerts.yaml with every `for` set to 0s. It is killed
// when the test ends.
func startPrometheus(t *testing.T, bin, target, token string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	var rules map[string]any
	readYAML(t, "alerts.yaml", &rules)
	for _, g := range rules["groups"].([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r.(map[string]any)["for"] = "0s"
		}
	}
	writeYAML(t, filepath.Join(dir, "rules.yaml"), rules)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	writeYAML(t, filepath.Join(dir, "prometheus.yml"), map[string]any{
		"global":     map[string]any{"scrape_interval": "1s", "evaluation_interval": "1s"},
		"rule_files": []string{filepath.Join(dir, "rules.yaml")},
		"scrape_configs": []any{map[string]any{
			"job_name":       "sandscope",
			"scheme":         "https",
			"authorization":  map[string]any{"type": "Bearer", "credentials_file": tokenFile},
			"tls_config":     map[string]any{"insecure_skip_verify": true},
			"static_configs": []any{map[string]any{"targets": []string{target}}},
		}},
	})
	addr := freePort(t)
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("prometheus log:\n%s", b)
		}
	})
	p := &prometheus{base: "http://" + addr}
	eventually(t, 60*time.Second, "prometheus ready", func() (bool, string) {
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("prometheus exited:\n%s", b)
		default:
		}
		code, body := get(p.base + "/-/ready")
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
	return p
}

// value runs an instant query and returns the first sample.
func (p *prometheus) value(t *testing.T, query string) (float64, bool) {
	t.Helper()
	code, body := get(p.base + "/api/v1/query?query=" + url.QueryEscape(query))
	if code != http.StatusOK {
		return 0, false
	}
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Data.Result) == 0 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// firing reports whether alert is firing for namespace ns.
func (p *prometheus) firing(t *testing.T, alert, ns string) (bool, string) {
	t.Helper()
	code, body := get(p.base + "/api/v1/alerts")
	if code != http.StatusOK {
		return false, fmt.Sprintf("/api/v1/alerts %d", code)
	}
	var r struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return false, err.Error()
	}
	for _, a := range r.Data.Alerts {
		if a.Labels["alertname"] == alert && a.Labels["namespace"] == ns && a.State == "firing" {
			return true, ""
		}
	}
	return false, body
}

func get(u string) (int, string) { return getAs(u, "") }

// testClient speaks plain HTTP to Prometheus and HTTPS to serve, whose
// certificate is self-signed; each request on a new connection.
var testClient = &http.Client{Transport: &http.Transport{
	TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // serve's self-signed certificate
	DisableKeepAlives: true,
}}

// getAs is get with token as the bearer token ("" sends none).
func getAs(u, token string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, limit, true, func(context.Context) (bool, error) {
		var ok bool
		ok, last = cond()
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s; last: %s", what, limit, last)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestServeCommandStopsOnSIGTERM runs `sandscope serve` through cli.Main
// (flags, connection, listener) and sends the process SIGTERM, as the
// kubelet does: serve stops gracefully and exits 0.
func TestServeCommandStopsOnSIGTERM(t *testing.T) {
	c := testcluster.Get(t)
	var out bytes.Buffer
	errOut := &syncbuf.Buffer{}
	code := make(chan int, 1)
	go func() {
		code <- cli.Main([]string{"serve", "--kubeconfig", c.Kubeconfig, "-A", "--listen", "127.0.0.1:0", "--image-checks=off"},
			strings.NewReader(""), &out, errOut)
	}()
	var base string
	eventually(t, 30*time.Second, "serve listening", func() (bool, string) {
		_, rest, ok := strings.Cut(errOut.String(), "listening on ")
		if !ok {
			select {
			case n := <-code:
				t.Fatalf("serve exited %d: %s", n, errOut.String())
			default:
			}
			return false, errOut.String()
		}
		base = "https://" + strings.Fields(rest)[0]
		return true, ""
	})
	eventually(t, 30*time.Second, "serve ready", func() (bool, string) {
		n, body := get(base + "/readyz")
		return n == http.StatusOK, body
	})
	// cli.Main's signal context is registered: SIGTERM ends serve, not the test.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-code:
		if n != 0 {
			t.Errorf("exit %d after SIGTERM, want 0; stderr: %s", n, errOut.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve still running 15 s after SIGTERM")
	}
	if !strings.Contains(errOut.String(), "sandscope serve: stopped") {
		t.Errorf("no graceful stop in the log: %s", errOut.String())
	}
	if n, _ := get(base + "/healthz"); n != 0 {
		t.Errorf("still answering after the stop: %d", n)
	}
}

func TestServeCommandRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "9808"},
		{"serve", "--analyze-every", "0s"},
		{"serve", "-n", "a", "-A"},
		{"serve", "--max-connections", "0"},
		{"serve", "--tls-cert-file", "tls.crt"},
		{"serve", "--insecure-plain-http", "--tls-cert-file", "tls.crt", "--tls-private-key-file", "tls.key"},
		{"serve", "--demo"},
	} {
		r := clitest.Run(cli.Main, "", args...)
		if r.Code != cli.ExitUsage || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || r.Stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, r.Code, r.Stderr)
		}
	}
}
