package kube_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// waitTimeout is generous on purpose: the tests assert that a state appears,
// never how fast. The latency is measured and logged instead.
const waitTimeout = 10 * time.Second

// startWatcher runs a Watcher over the test cluster until the test ends and
// waits for its initial sync.
func startWatcher(t *testing.T, cfg *rest.Config, opts kube.WatcherOptions) *kube.Watcher {
	t.Helper()
	clients, err := kube.NewClients(cfg, opts.Namespace)
	if err != nil {
		t.Fatalf("clients: %v", err)
	}
	return runWatcher(t, clients, opts)
}

// runWatcher runs a Watcher over clients until the test ends and waits for
// its initial sync.
func runWatcher(t *testing.T, clients *kube.Clients, opts kube.WatcherOptions) *kube.Watcher {
	t.Helper()
	w := kube.NewWatcher(clients, opts)
	ctx := t.Context() // ends just before the cleanup below runs
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("Run did not return 15s after its context ended")
		}
	})
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if err := w.WaitForSync(syncCtx); err != nil {
		select {
		case runErr := <-done:
			t.Fatalf("watcher stopped: %v", runErr)
		default:
		}
		t.Fatalf("WaitForSync: %v (status %+v)", err, w.Status())
	}
	return w
}

// waitFor waits until cond holds for a fleet snapshot and returns the
// snapshot and the time since start (taken just before the write the test
// waits to see).
func waitFor(t *testing.T, w *kube.Watcher, start time.Time, timeout time.Duration, what string, cond func(*fleet.Snapshot) bool) (*fleet.Snapshot, time.Duration) {
	t.Helper()
	changes, unsubscribe := w.Subscribe()
	defer unsubscribe()
	deadline := time.After(timeout)
	for {
		snap := w.Fleet().Snapshot()
		if cond(snap) {
			return snap, time.Since(start)
		}
		select {
		case <-changes:
		case <-deadline:
			t.Fatalf("no %s after %s; fleet:\n%s", what, timeout, describe(snap))
		}
	}
}

func describe(s *fleet.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  status: synced=%v disconnectedSince=%v forbidden=%v notes=%v\n", s.Status.Synced, s.Status.DisconnectedSince, s.Status.Forbidden, s.Status.Notes)
	for _, sb := range s.Sandboxes() {
		fmt.Fprintf(&b, "  %s phase=%q state=%s identity=%s", sb.Key, sb.EnginePhase, sb.State, sb.Identity())
		for _, sl := range sb.Slots {
			fmt.Fprintf(&b, " slot%d{ip=%q pod=%s id=%s", sl.Index, sl.RecordedIP, sl.PodName, sl.Identity)
			if sl.Holder != nil {
				fmt.Fprintf(&b, " holder=%s", sl.Holder.Pod)
			}
			if sl.Stuck != nil {
				fmt.Fprintf(&b, " stuck=%+v", *sl.Stuck)
			}
			b.WriteString("}")
		}
		for _, n := range sb.Notices {
			fmt.Fprintf(&b, " [%s: %s]", n.Code, n.Message)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func slotIdentity(s *fleet.Snapshot, key string) model.IdentityState {
	sb := s.Sandbox(key)
	if sb == nil || sb.PrimarySlot() == nil {
		return ""
	}
	return sb.PrimarySlot().Identity
}

func hasNotice(sb *model.Sandbox, code string) *model.Notice {
	if sb == nil {
		return nil
	}
	for i := range sb.Notices {
		if sb.Notices[i].Code == code {
			return &sb.Notices[i]
		}
	}
	return nil
}

func bsbxKey(ns, name string) string { return string(model.EngineBatchSandbox) + "/" + ns + "/" + name }

// runningStatus is what the OpenSandbox controller writes for a ready sandbox
// ("Succeed" means running).
var runningStatus = map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1, "taskRunning": 1}

// createBatchSandbox creates a non-pooled BatchSandbox and its Pod <name>-0,
// as the OpenSandbox controller does, and returns the Pod.
func createBatchSandbox(kl *testcluster.Kubelet, ct *testcluster.Controller, ns, name string, pod *corev1.Pod) *corev1.Pod {
	if pod == nil {
		pod = testcluster.SandboxPod(name+"-0", "")
	}
	bs := ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.BatchSandbox(name, pod))
	return kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(pod, bs, 0))
}

// Incident 002: sandbox A's container exits, the engine keeps forwarding to
// A's recorded IP, and a new sandbox B's Pod gets that IP.
func TestIncidentIPTaken(t *testing.T) {
	ns, kl, ct, w := watchedNamespace(t, kube.WatcherOptions{})
	const ip = "127.0.0.7"
	keyA, keyB := bsbxKey(ns, "sbx-a"), bsbxKey(ns, "sbx-b")

	createBatchSandbox(kl, ct, ns, "sbx-a", nil)
	kl.SetRunning(ns, "sbx-a-0", ip)
	ct.SetEndpoints(ns, "sbx-a", ip)
	start := time.Now()
	ct.SetBatchSandboxStatus(ns, "sbx-a", runningStatus)
	_, d := waitFor(t, w, start, waitTimeout, "A OK", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, keyA) == model.IdentityOK
	})
	t.Logf("latency: BatchSandbox status write → A OK in snapshot: %s", d)

	createBatchSandbox(kl, ct, ns, "sbx-b", nil)

	// 17:24:44: A's container exits; the Pod fails.
	start = time.Now()
	kl.Terminate(ns, "sbx-a-0", osv1.ContainerSandbox, 137, "Error")
	kl.SetPhase(ns, "sbx-a-0", corev1.PodFailed, "", "")
	_, d = waitFor(t, w, start, waitTimeout, "A POD_DEAD", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, keyA) == model.IdentityPodDead
	})
	t.Logf("latency: Pod A Failed (2 status writes) → A POD_DEAD: %s", d)
	// The engine drops A back to Pending but keeps advertising the IP.
	ct.SetBatchSandboxStatus(ns, "sbx-a", map[string]any{"phase": "Pending", "replicas": 1, "allocated": 1})

	// 17:25:19: B's Pod starts with A's old IP.
	start = time.Now()
	kl.SetRunning(ns, "sbx-b-0", ip)
	snap, d := waitFor(t, w, start, waitTimeout, "A IP_TAKEN by B", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(keyA)
		return slotIdentity(s, keyA) == model.IdentityIPTaken && sb.PrimarySlot().Holder != nil
	})
	t.Logf("latency: Pod B status write (Running, podIP %s) → A IP_TAKEN: %s", ip, d)
	holder := snap.Sandbox(keyA).PrimarySlot().Holder
	if holder.Pod != "sbx-b-0" || holder.Namespace != ns || holder.Sandbox != keyB {
		t.Errorf("holder = %+v, want Pod sbx-b-0 of sandbox %s", *holder, keyB)
	}
	if hasNotice(snap.Sandbox(keyA), model.CodeIPTaken) == nil {
		t.Errorf("A has no %s notice:\n%s", model.CodeIPTaken, describe(snap))
	}

	start = time.Now()
	ct.SetEndpoints(ns, "sbx-b", ip)
	ct.SetBatchSandboxStatus(ns, "sbx-b", runningStatus)
	snap, d = waitFor(t, w, start, waitTimeout, "B OK", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, keyB) == model.IdentityOK
	})
	t.Logf("latency: B endpoints+status writes → B OK: %s", d)
	if got := slotIdentity(snap, keyA); got != model.IdentityIPTaken {
		t.Errorf("A = %s once B is OK, want IP_TAKEN", got)
	}

	hist := snap.IPHistory(ip)
	var pods []string
	for _, h := range hist {
		pods = append(pods, h.Pod)
	}
	if len(hist) != 2 || hist[0].Pod != "sbx-a-0" || hist[1].Pod != "sbx-b-0" || hist[0].To == nil || hist[1].To != nil {
		t.Errorf("IP history of %s = %v, want sbx-a-0 (ended) then sbx-b-0 (current)", ip, pods)
	}
}

// A same-name re-creation (new UID) behind a sandbox is not the Pod first bound.
func TestIncidentUIDChanged(t *testing.T) {
	ns, kl, ct, w := watchedNamespace(t, kube.WatcherOptions{})
	const ip = "127.0.0.8"
	key := bsbxKey(ns, "sbx-u")

	first := createBatchSandbox(kl, ct, ns, "sbx-u", nil)
	kl.SetRunning(ns, "sbx-u-0", ip)
	ct.SetEndpoints(ns, "sbx-u", ip)
	ct.SetBatchSandboxStatus(ns, "sbx-u", runningStatus)
	waitFor(t, w, time.Now(), waitTimeout, "OK", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, key) == model.IdentityOK
	})

	start := time.Now()
	kl.ForceDelete(ns, "sbx-u-0")
	_, d := waitFor(t, w, start, waitTimeout, "POD_GONE", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, key) == model.IdentityPodGone
	})
	t.Logf("latency: Pod delete → POD_GONE: %s", d)

	bs := ct.Get(testcluster.BatchSandboxGVR, ns, "sbx-u")
	second := kl.CreatePod(ns, testcluster.OwnedByBatchSandbox(testcluster.SandboxPod("sbx-u-0", ""), bs, 0))
	if second.UID == first.UID {
		t.Fatalf("re-created Pod kept UID %s", first.UID)
	}
	start = time.Now()
	kl.SetRunning(ns, "sbx-u-0", ip)
	snap, d := waitFor(t, w, start, waitTimeout, "UID_CHANGED", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, key) == model.IdentityUIDChanged
	})
	t.Logf("latency: re-created Pod Running → UID_CHANGED: %s", d)
	sl := snap.Sandbox(key).PrimarySlot()
	if sl.BoundUID != string(first.UID) || sl.Pod == nil || sl.Pod.UID != second.UID {
		t.Errorf("slot bound %s, pod %v; want bound %s and current %s", sl.BoundUID, sl.Pod, first.UID, second.UID)
	}
}

// Incident 000's aftermath: deleted Pods stuck Terminating, most with the
// main container still waiting in PodInitializing.
func TestIncidentStuckTerminating(t *testing.T) {
	ns, kl, ct, w := watchedNamespace(t, kube.WatcherOptions{StuckAfter: time.Second})
	key := bsbxKey(ns, "sbx-s")

	pod := testcluster.SandboxPod("sbx-s-0", "")
	grace := int64(1)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	createBatchSandbox(kl, ct, ns, "sbx-s", pod)
	kl.Schedule(ns, "sbx-s-0", testcluster.DefaultNode)
	kl.SetWaiting(ns, "sbx-s-0", osv1.ContainerExecdInstaller, "ContainerCreating", "")
	kl.SetWaiting(ns, "sbx-s-0", osv1.ContainerSandbox, "PodInitializing", "")

	start := time.Now()
	deleted := kl.DeleteHeld(ns, "sbx-s-0")
	t.Cleanup(func() { kl.Release(ns, "sbx-s-0") })
	if deleted.DeletionTimestamp == nil {
		t.Fatalf("pod has no deletionTimestamp after DeleteHeld")
	}
	snap, d := waitFor(t, w, start, waitTimeout+5*time.Second, "stuck Terminating", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(key)
		return sb != nil && sb.PrimarySlot() != nil && sb.PrimarySlot().Stuck != nil && hasNotice(sb, model.CodeStuckTerminating) != nil
	})
	stuck := snap.Sandbox(key).PrimarySlot().Stuck
	t.Logf("delete → STUCK_TERMINATING: %s (grace %ds, StuckAfter 1s, deletionTimestamp %s; the Tick drives it)",
		d, grace, deleted.DeletionTimestamp.Format(time.RFC3339))
	if !stuck.PodInitializing {
		t.Errorf("stuck = %+v, want PodInitializing", *stuck)
	}
	if stuck.GraceSeconds != grace {
		t.Errorf("stuck grace = %d, want %d", stuck.GraceSeconds, grace)
	}
}

// pushImage pushes an image with the given config to the registry at host.
func pushImage(t *testing.T, host, repo string, cfg v1.Config) (string, v1.Hash) {
	t.Helper()
	img, err := mutate.Config(empty.Image, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref.String(), digest
}

// Incident 000: the engine replaced the image's ENTRYPOINT with a keep-alive,
// so the image's service never started; and a failed registry read must show.
func TestIncidentEntrypointNotRun(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := c.Kubelet(t)

	var pushed, bareRead atomic.Bool
	regHandler := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	reg := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		regHandler.ServeHTTP(rw, r)
		if pushed.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/team/bare/blobs/") {
			bareRead.Store(true)
		}
	}))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	svc, svcDigest := pushImage(t, host, "team/svc:v1", v1.Config{Entrypoint: []string{"/app/server"}, Cmd: []string{"--listen", ":8080"}})
	bare, _ := pushImage(t, host, "team/bare:v1", v1.Config{})
	pushed.Store(true)
	down := deadserver.Refusing(t) + "/team/svc:v1"

	reader := imageconfig.New(imageconfig.Options{Timeout: 5 * time.Second})
	w := startWatcher(t, c.Config, kube.WatcherOptions{Namespace: ns, ImageConfig: reader})

	start := time.Now()
	for i, img := range []string{svc, down, bare} {
		podName := []string{"keepalive", "registry-down", "bare"}[i]
		kl.CreatePod(ns, testcluster.SandboxPod(podName, img, "tail", "-f", "/dev/null"))
		kl.SetRunning(ns, podName, fmt.Sprintf("127.0.0.%d", 40+i))
	}
	// The runtime reports the digest it pulled; the config is read by digest.
	kl.UpdatePodStatus(ns, "keepalive", func(p *corev1.Pod) {
		for i := range p.Status.ContainerStatuses {
			if p.Status.ContainerStatuses[i].Name == osv1.ContainerSandbox {
				p.Status.ContainerStatuses[i].ImageID = "docker-pullable://" + host + "/team/svc@" + svcDigest.String()
			}
		}
	})

	snap, d := waitFor(t, w, start, waitTimeout, "ENTRYPOINT_NOT_RUN and IMAGE_CONFIG_UNREADABLE", func(s *fleet.Snapshot) bool {
		return hasNotice(s.SandboxOfPod(ns, "keepalive"), model.CodeEntrypointNotRun) != nil &&
			hasNotice(s.SandboxOfPod(ns, "registry-down"), model.CodeImageConfigUnreadable) != nil
	})
	t.Logf("latency: Pods created+Running → both image notices: %s", d)
	n := hasNotice(snap.SandboxOfPod(ns, "keepalive"), model.CodeEntrypointNotRun)
	if !strings.Contains(n.Message, "/app/server") {
		t.Errorf("ENTRYPOINT_NOT_RUN message %q does not name the image's entrypoint", n.Message)
	}
	n = hasNotice(snap.SandboxOfPod(ns, "registry-down"), model.CodeImageConfigUnreadable)
	if !strings.Contains(n.Message, "image config unreadable") || !strings.Contains(n.Message, "unreachable") {
		t.Errorf("IMAGE_CONFIG_UNREADABLE message %q does not say why", n.Message)
	}

	// The bare image has neither ENTRYPOINT nor CMD: a keep-alive loses
	// nothing, and the successful read must not count as a failure. Once the
	// registry served its config blob the result lands within moments; watch
	// for a wrong notice for a while after that (nothing must happen in the
	// window, so it is timed).
	waitUntil(t, waitTimeout, "the bare image's config read", func() bool { return bareRead.Load() })
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		sb := w.Fleet().Snapshot().SandboxOfPod(ns, "bare")
		if n := hasNotice(sb, model.CodeImageConfigUnreadable); n != nil {
			t.Fatalf("bare image reported unreadable: %s", n.Message)
		}
		if n := hasNotice(sb, model.CodeEntrypointNotRun); n != nil {
			t.Fatalf("bare image reported ENTRYPOINT_NOT_RUN: %s", n.Message)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("no %s after %s", what, timeout)
	}
}

// watchedNamespace starts a Watcher with opts on a fresh namespace of the
// package's cluster and returns the namespace, its kubelet and controller.
func watchedNamespace(t *testing.T, opts kube.WatcherOptions) (ns string, kl *testcluster.Kubelet, ct *testcluster.Controller, w *kube.Watcher) {
	t.Helper()
	c := testcluster.Get(t)
	opts.Namespace = c.Namespace(t)
	return opts.Namespace, c.Kubelet(t), c.Controller(t), startWatcher(t, c.Config, opts)
}

// watchedRunningSandbox starts a watcher on a fresh namespace holding one
// running BatchSandbox recording ip, and waits until the model holds it OK.
func watchedRunningSandbox(t *testing.T, name, ip string) (*kube.Watcher, string) {
	t.Helper()
	ns, kl, ct, w := watchedNamespace(t, kube.WatcherOptions{})
	return w, runningSandbox(t, kl, ct, w, ns, name, ip)
}

// runningSandbox creates a running BatchSandbox recording ip in ns and
// waits until w's model holds it OK: its key.
func runningSandbox(t *testing.T, kl *testcluster.Kubelet, ct *testcluster.Controller, w *kube.Watcher, ns, name, ip string) string {
	t.Helper()
	key := bsbxKey(ns, name)
	createBatchSandbox(kl, ct, ns, name, nil)
	kl.SetRunning(ns, name+"-0", ip)
	ct.SetEndpoints(ns, name, ip)
	ct.SetBatchSandboxStatus(ns, name, runningStatus)
	waitFor(t, w, time.Now(), waitTimeout, "OK", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, key) == model.IdentityOK
	})
	return key
}

// waitDisconnected waits for w to call its connection lost, with key's
// identity UNKNOWN.
func waitDisconnected(t *testing.T, w *kube.Watcher, key string, start time.Time) (*fleet.Snapshot, time.Duration) {
	t.Helper()
	return waitFor(t, w, start, waitTimeout, "disconnected + UNKNOWN", func(s *fleet.Snapshot) bool {
		return s.Status.DisconnectedSince != nil && slotIdentity(s, key) == model.IdentityUnknown
	})
}

// waitReconnected waits for w to be connected again, with key's identity
// OK. The watches retry on a back-off capped at 2 s (reconnectBackoff).
func waitReconnected(t *testing.T, w *kube.Watcher, key string, start time.Time) (*fleet.Snapshot, time.Duration) {
	t.Helper()
	return waitFor(t, w, start, 90*time.Second, "reconnected + OK", func(s *fleet.Snapshot) bool {
		return s.Status.DisconnectedSince == nil && slotIdentity(s, key) == model.IdentityOK
	})
}

// A lost API server turns every identity UNKNOWN (never a stale OK) until
// every informer is back: a killed one, and a frozen one (the process
// stopped: connections accepted, nothing answered), which must not wait for
// the request timeout either.
func TestWatcherLostAPIServer(t *testing.T) {
	c := testcluster.Get(t)
	for _, tc := range []struct {
		name, sandbox, ip string
		lose, regain      func(testing.TB)
	}{
		{"killed", "sbx-d", "127.0.0.9", c.StopAPIServer, c.StartAPIServer},
		{"frozen", "sbx-f", "127.0.0.19", c.FreezeAPIServer, c.ThawAPIServer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, key := watchedRunningSandbox(t, tc.sandbox, tc.ip)

			start := time.Now()
			tc.lose(t)
			snap, d := waitDisconnected(t, w, key, start)
			t.Logf("latency: kube-apiserver %s → DisconnectedSince set, identity UNKNOWN: %s", tc.name, d)
			if st := w.Status(); st.DisconnectedSince == nil || !st.DisconnectedSince.Equal(*snap.Status.DisconnectedSince) {
				t.Errorf("Status().DisconnectedSince = %v, snapshot says %v", st.DisconnectedSince, snap.Status.DisconnectedSince)
			}
			if sb := snap.Sandbox(key); sb.State != model.StateUnknown {
				t.Errorf("state while disconnected = %s, want Unknown", sb.State)
			}
			asOf := snap.Status.AsOf
			if asOf.IsZero() || asOf.After(*snap.Status.DisconnectedSince) {
				t.Errorf("AsOf = %v, want the last contact before the loss at %v", asOf, *snap.Status.DisconnectedSince)
			}

			start = time.Now()
			tc.regain(t)
			t.Logf("kube-apiserver back after %s", time.Since(start))
			_, d = waitReconnected(t, w, key, start)
			t.Logf("latency: kube-apiserver back → reconnected, identity OK again: %s", d)
		})
	}
}

// agent-sandbox Sandboxes find their Pod through status.selector; plain Pods
// are sandboxes through their opensandbox.io/id label.
func TestWatcherAgentSandboxAndPlainPod(t *testing.T) {
	ns, kl, ct, w := watchedNamespace(t, kube.WatcherOptions{})
	if st := w.Status(); len(st.Notes) != 0 || len(st.Namespaces) != 1 || st.Namespaces[0] != ns || st.Server == "" {
		t.Errorf("status = %+v, want no notes (all CRDs installed), namespace %s and a server", st, ns)
	}

	agentPod := testcluster.SandboxPod("agent-1-pod", "")
	delete(agentPod.Labels, osv1.LabelSandboxID)
	agentPod.Labels["agents.x-k8s.io/sandbox-name-hash"] = "h4sh"
	ct.Create(testcluster.AgentSandboxGVR, ns, testcluster.AgentSandbox("agent-1", agentPod))
	kl.CreatePod(ns, agentPod)
	kl.SetRunning(ns, "agent-1-pod", "127.0.0.30")
	start := time.Now()
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "agent-1", map[string]any{
		"selector": "agents.x-k8s.io/sandbox-name-hash=h4sh",
		"podIPs":   []any{"127.0.0.30"},
		"replicas": 1,
	})
	agentKey := string(model.EngineAgent) + "/" + ns + "/agent-1"
	snap, d := waitFor(t, w, start, waitTimeout, "agent sandbox OK", func(s *fleet.Snapshot) bool {
		return slotIdentity(s, agentKey) == model.IdentityOK
	})
	t.Logf("latency: Sandbox status write (selector, podIPs) → OK: %s", d)
	if sl := snap.Sandbox(agentKey).PrimarySlot(); sl.PodName != "agent-1-pod" || sl.RecordedIP != "127.0.0.30" {
		t.Errorf("agent slot = pod %q ip %q, want agent-1-pod 127.0.0.30", sl.PodName, sl.RecordedIP)
	}

	kl.CreatePod(ns, testcluster.SandboxPod("plain-1", ""))
	start = time.Now()
	kl.SetRunning(ns, "plain-1", "127.0.0.31")
	snap, d = waitFor(t, w, start, waitTimeout, "plain Pod sandbox Running", func(s *fleet.Snapshot) bool {
		sb := s.SandboxOfPod(ns, "plain-1")
		return sb != nil && sb.Engine() == model.EnginePod && sb.State == model.StateRunning
	})
	t.Logf("latency: plain Pod Running → sandbox Running: %s", d)
	if got := snap.SandboxOfPod(ns, "plain-1").Identity(); got != model.IdentityOK {
		t.Errorf("plain Pod sandbox identity = %s, want OK", got)
	}
}

// The Pod cache holds slim Pods, and the custom resource caches hold slim
// model structs whose keys work: an update and a delete reach the fleet.
func TestWatcherTransforms(t *testing.T) {
	ns, kl, ct, w := watchedNamespace(t, kube.WatcherOptions{})

	pod := testcluster.SandboxPod("fat", "")
	pod.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: strings.Repeat("x", 4096)}
	created := kl.CreatePod(ns, pod)
	if len(created.ManagedFields) == 0 {
		t.Fatalf("the API server returned no managedFields; the test would prove nothing")
	}
	key := bsbxKey(ns, "sbx-t")
	createBatchSandbox(kl, ct, ns, "sbx-t", nil)
	snap, _ := waitFor(t, w, time.Now(), waitTimeout, "pod and sandbox", func(s *fleet.Snapshot) bool {
		return s.SandboxOfPod(ns, "fat") != nil && s.Sandbox(key) != nil
	})
	var cached *model.Pod
	for _, p := range snap.Pods() {
		if p.Namespace == ns && p.Name == "fat" {
			cached = p
		}
	}
	if cached == nil {
		t.Fatalf("pod fat not in the snapshot")
	}
	// model.Pod has no field for them; through metav1.Object they read empty.
	if len(cached.GetManagedFields()) != 0 || cached.GetAnnotations()[corev1.LastAppliedConfigAnnotation] != "" || cached.UID != created.UID {
		t.Errorf("cached Pod keeps managedFields (%d) or last-applied-configuration, or lost its UID", len(cached.GetManagedFields()))
	}

	ct.SetBatchSandboxStatus(ns, "sbx-t", map[string]any{"phase": "Paused"})
	waitFor(t, w, time.Now(), waitTimeout, "phase update", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(key)
		return sb != nil && sb.EnginePhase == "Paused"
	})
	ct.Delete(testcluster.BatchSandboxGVR, ns, "sbx-t")
	// Its Pod remains (no garbage collector runs here): the row stays, as
	// the deleted sandbox's, until the Pod goes too.
	waitFor(t, w, time.Now(), waitTimeout, "the deleted sandbox's row", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(key)
		return sb != nil && sb.EnginePhase == model.PhaseDeleted
	})
	kl.ForceDelete(ns, "sbx-t-0")
	waitFor(t, w, time.Now(), waitTimeout, "sandbox gone after its Pod", func(s *fleet.Snapshot) bool {
		return s.Sandbox(key) == nil
	})
}

// The slim structs the dynamic informers cache must key like the objects
// they come from (the store and the delete handler rely on it).
func TestWatcherSlimObjectsHaveStoreKeys(t *testing.T) {
	t.Parallel()
	u := testcluster.BatchSandbox("b", nil)
	u.SetNamespace("ns")
	u.SetUID("u1")
	a := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
		"metadata": map[string]any{"name": "a", "namespace": "ns"},
	}}
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "sandbox.opensandbox.io/v1alpha1", "kind": "Pool",
		"metadata": map[string]any{"name": "p", "namespace": "ns"},
	}}
	for _, tc := range []struct {
		obj  any
		want string
	}{
		{model.BatchSandboxFromUnstructured(u), "ns/b"},
		{model.AgentSandboxFromUnstructured(a, "v1beta1"), "ns/a"},
		{model.PoolFromUnstructured(p), "ns/p"},
		{cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: model.BatchSandboxFromUnstructured(u)}, "ns/b"},
		{model.SandboxClaimFromUnstructured(p), "ns/p"},
		{model.WarmPoolFromUnstructured(p), "ns/p"},
		{model.SandboxTemplateFromUnstructured(p), "ns/p"},
	} {
		got, err := cache.DeletionHandlingMetaNamespaceKeyFunc(tc.obj)
		if err != nil || got != tc.want {
			t.Errorf("key of %T = %q, %v; want %q", tc.obj, got, err, tc.want)
		}
	}
}

// A resource the user may not list, or list but not watch, shows as
// forbidden, naming the verb, the resource with its group and the
// namespace; the others work.
func TestWatcherForbiddenResource(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := c.Kubelet(t)
	cfg := c.ConfigAs(t, ns, "sandscope-limited", "pods-only",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{"agents.x-k8s.io"}, Resources: []string{"sandboxes"}, Verbs: []string{"get", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{"sandbox.opensandbox.io"}, Resources: []string{"pools"}, Verbs: []string{"get", "list"}},
	)
	kl.CreatePod(ns, testcluster.SandboxPod("visible", ""))
	kl.SetRunning(ns, "visible", "127.0.0.50")
	w := startWatcher(t, cfg, kube.WatcherOptions{Namespace: ns})
	// agent-sandbox's extensions, not granted here, are denied too: said
	// once each, and the rest of the fleet works.
	want := []string{
		"list batchsandboxes.sandbox.opensandbox.io in namespace " + ns + " (deploy/clusterrole.yaml grants it)",
		"list sandboxclaims.extensions.agents.x-k8s.io in namespace " + ns + " (deploy/clusterrole.yaml grants it)",
		"list sandboxtemplates.extensions.agents.x-k8s.io in namespace " + ns + " (deploy/clusterrole.yaml grants it)",
		"list sandboxwarmpools.extensions.agents.x-k8s.io in namespace " + ns + " (deploy/clusterrole.yaml grants it)",
		"watch pools.sandbox.opensandbox.io in namespace " + ns + " (deploy/clusterrole.yaml grants it)",
	}
	snap, _ := waitFor(t, w, time.Now(), waitTimeout, "the plain Pod and the denials", func(s *fleet.Snapshot) bool {
		return s.SandboxOfPod(ns, "visible") != nil && len(s.Status.Forbidden) == len(want)
	})
	if !slices.Equal(snap.Status.Forbidden, want) || !snap.Status.Synced {
		t.Errorf("status forbidden=%v synced=%v, want %v and synced", snap.Status.Forbidden, snap.Status.Synced, want)
	}
	if got := snap.SandboxOfPod(ns, "visible").Identity(); got != model.IdentityOK {
		t.Errorf("plain Pod identity = %s, want OK while batchsandboxes are forbidden", got)
	}
}

func TestLivePod(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := c.Kubelet(t)
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	created := kl.CreatePod(ns, testcluster.SandboxPod("live", ""))
	kl.SetRunning(ns, "live", "127.0.0.60")
	got, err := clients.LivePod(testcluster.Context(t), ns, "live")
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != created.UID || got.Status.PodIP != "127.0.0.60" {
		t.Errorf("LivePod = uid %s ip %s, want %s 127.0.0.60 (the write just made)", got.UID, got.Status.PodIP, created.UID)
	}
	kl.ForceDelete(ns, "live")
	_, err = clients.LivePod(testcluster.Context(t), ns, "live")
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), ns+"/live") {
		t.Errorf("LivePod after delete: %v, want a NotFound naming the Pod", err)
	}
}

// Clients without a rest.Config (the demo's, unit tests' fake clientsets)
// work too, with the sources given instead of discovered: their Pods and
// BatchSandboxes reach the fleet through the wire decoders, encoded as a
// server would send them.
func TestWatcherOverFakeClients(t *testing.T) {
	t.Parallel()
	kc := kubefake.NewClientset()
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		kube.BatchSandboxGVR: "BatchSandboxList",
	})
	clients := &kube.Clients{Kube: kc, Dynamic: dc, Context: "demo", Namespace: "demo", RequestTimeout: time.Second}
	ctx := t.Context()
	// One of each before the watcher starts (read by its list), one of each
	// after (read by its watch).
	listed := testcluster.BatchSandbox("sbx-listed", testcluster.SandboxPod("sbx-listed-0", ""))
	listed.SetNamespace("demo")
	if _, err := dc.Resource(kube.BatchSandboxGVR).Namespace("demo").Create(ctx, listed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w := runWatcher(t, clients, kube.WatcherOptions{Sources: &kube.Sources{BatchSandbox: true}, Demo: true})
	if sb := w.Fleet().Snapshot().Sandbox(bsbxKey("demo", "sbx-listed")); sb == nil {
		t.Errorf("the listed BatchSandbox is not in the synced fleet")
	}

	watched := testcluster.BatchSandbox("sbx-watched", testcluster.SandboxPod("sbx-watched-0", ""))
	watched.SetNamespace("demo")
	watched.Object["status"] = map[string]any{"phase": "Succeed"}
	if _, err := dc.Resource(kube.BatchSandboxGVR).Namespace("demo").Create(ctx, watched, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := testcluster.OwnedByBatchSandbox(testcluster.SandboxPod("sbx-watched-0", ""), watched, 0)
	pod.Namespace = "demo"
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}
	if _, err := kc.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, _ := waitFor(t, w, time.Now(), waitTimeout, "the watched sandbox with its Pod", func(s *fleet.Snapshot) bool {
		sb := s.Sandbox(bsbxKey("demo", "sbx-watched"))
		return sb != nil && sb.EnginePhase == "Succeed" && sb.PrimarySlot() != nil && sb.PrimarySlot().PodName == "sbx-watched-0"
	})
	if !snap.Status.Demo || !snap.Status.Synced || snap.Status.Context != "demo" {
		t.Errorf("status = %+v, want demo, synced, context demo", snap.Status)
	}
	if err := dc.Resource(kube.BatchSandboxGVR).Namespace("demo").Delete(ctx, "sbx-listed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, time.Now(), waitTimeout, "the deleted sandbox gone", func(s *fleet.Snapshot) bool {
		return s.Sandbox(bsbxKey("demo", "sbx-listed")) == nil
	})
}

// Discovered is true only once the watcher knows its sources: not while
// discovery waits, and not after Run has given a discovery up. A sweep whose
// time runs out reads it after Run may have done so, and must not then take
// the Pods' progress for the whole fleet's.
func TestDiscoveredOnlyOnceDiscoveryAnswered(t *testing.T) {
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select { // a server that takes every request and answers none
		case <-r.Context().Done():
		case <-hung:
		}
	}))
	defer srv.Close()
	defer close(hung)
	clients, err := kube.NewClients(&rest.Config{Host: srv.URL}, "ns")
	if err != nil {
		t.Fatal(err)
	}

	w := kube.NewWatcher(clients, kube.WatcherOptions{Namespace: "ns"})
	if w.Discovered() {
		t.Fatal("discovered before Run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := w.Run(ctx); err == nil {
		t.Fatal("Run ended without an error though discovery never answered")
	}
	if w.Discovered() {
		t.Fatal("a watcher whose discovery was given up reads as discovered")
	}

	given := kube.NewWatcher(clients, kube.WatcherOptions{Namespace: "ns", Sources: &kube.Sources{}})
	ctx2, cancel2 := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- given.Run(ctx2) }()
	waitUntil(t, 5*time.Second, "the given sources known", given.Discovered)
	cancel2()
	<-ran
}
