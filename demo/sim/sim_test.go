package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

var t0 = time.Date(2026, 11, 29, 17, 24, 5, 0, time.UTC)

func newFakes() (*kubefake.Clientset, *dynamicfake.FakeDynamicClient) {
	listKinds := map[schema.GroupVersionResource]string{
		BatchSandboxGVR:                             "BatchSandboxList",
		PoolGVR:                                     "PoolList",
		AgentSandboxGVR("v1beta1"):                  "SandboxList",
		ExtensionGVR("sandboxclaims", "v1beta1"):    "SandboxClaimList",
		ExtensionGVR("sandboxwarmpools", "v1beta1"): "SandboxWarmPoolList",
		ExtensionGVR("sandboxtemplates", "v1beta1"): "SandboxTemplateList",
	}
	// NewSimpleClientset: the field-managed tracker of NewClientset rebuilds a
	// REST mapper on every write, which makes simulated hours take minutes.
	return kubefake.NewSimpleClientset(), dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
}

// run plays a simulation on fresh fakes for d of virtual time and returns
// its operation log.
func run(t *testing.T, cfg Config, d time.Duration) (*Sim, *kubefake.Clientset, *dynamicfake.FakeDynamicClient, []string) {
	t.Helper()
	kube, dyn := newFakes()
	var ops []string
	cfg.EmulateServer = true
	cfg.Clock = testingclock.NewFakeClock(t0)
	cfg.OnOp = func(o Op) { ops = append(ops, o.String()) }
	s, err := New(kube, dyn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.RunUntil(ctx, t0.Add(d)); err != nil {
		t.Fatal(err)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("simulated operations failed: %v", errs)
	}
	return s, kube, dyn, ops
}

func TestSameSeedSameOperations(t *testing.T) {
	cfg := Config{Seed: 42, Examples: true, ChurnPerHour: 2000, Namespaces: []string{"a", "b"}}
	_, _, _, first := run(t, cfg, 10*time.Minute)
	_, _, _, second := run(t, cfg, 10*time.Minute)
	if len(first) < 500 {
		t.Fatalf("only %d operations in 10 simulated minutes", len(first))
	}
	if !slices.Equal(first, second) {
		for i := range min(len(first), len(second)) {
			if first[i] != second[i] {
				t.Fatalf("runs diverge at operation %d:\n%s\n%s", i, first[i], second[i])
			}
		}
		t.Fatalf("runs differ in length: %d vs %d", len(first), len(second))
	}
	cfg.Seed = 43
	_, _, _, other := run(t, cfg, 10*time.Minute)
	if slices.Equal(first, other) {
		t.Fatal("a different seed produced the same operations")
	}
}

func TestIPAMReusesTheLastFreedAddressFirst(t *testing.T) {
	t.Parallel()
	a, err := newIPAM(mustAddr("10.244.0.0"), 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	first := a.allocate(1)
	second := a.allocate(1)
	if first != "10.244.1.2" || second != "10.244.1.3" {
		t.Fatalf("node 1 handed out %s, %s; want 10.244.1.2, 10.244.1.3", first, second)
	}
	a.release(1, first)
	if got := a.allocate(1); got != first {
		t.Fatalf("after freeing %s the next address is %s", first, got)
	}
	for a.available(1) > 0 {
		a.allocate(1)
	}
	if got := a.allocate(1); got != "" {
		t.Fatalf("exhausted block handed out %s", got)
	}
}

// TestEveryStateAppears checks, on the objects the simulator wrote (not
// through sandscope's model, which has its own tests), that within three
// simulated minutes the fleet shows every situation sandscope must surface.
func TestEveryStateAppears(t *testing.T) {
	s, kube, dyn, ops := run(t, Config{Seed: 7, Examples: true}, 3*time.Minute)
	ctx := context.Background()
	pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bsbxs, err := dyn.Resource(BatchSandboxGVR).Namespace("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agents, err := dyn.Resource(AgentSandboxGVR("v1beta1")).Namespace("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*corev1.Pod{}
	liveByIP := map[string][]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		byName[p.Namespace+"/"+p.Name] = p
		if p.Status.PodIP != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			liveByIP[p.Status.PodIP] = append(liveByIP[p.Status.PodIP], p)
		}
	}
	for ip, holders := range liveByIP {
		if len(holders) > 1 {
			t.Errorf("two live Pods hold %s: %s and %s", ip, holders[0].Name, holders[1].Name)
		}
	}
	seen := map[string]string{}
	see := func(what, where string) {
		if _, ok := seen[what]; !ok {
			seen[what] = where
		}
	}
	deadRecorded := func(where, ip string, linked *corev1.Pod) {
		if linked == nil {
			see("POD_GONE", where)
		} else if linked.Status.Phase == corev1.PodSucceeded || linked.Status.Phase == corev1.PodFailed {
			see("POD_DEAD", where)
		} else if linked.Status.PodIP != ip {
			see("IP_STALE", where)
		}
		for _, h := range liveByIP[ip] {
			if linked == nil || h.UID != linked.UID {
				see("IP_TAKEN", where+" by "+h.Name)
			}
		}
	}
	for _, b := range bsbxs.Items {
		where := "bsbx " + b.GetName()
		if b.GetDeletionTimestamp() != nil {
			see("BSBX_FINALIZER_STUCK", where)
		}
		if _, ok, _ := unstructured.NestedString(b.Object, "spec", "expireTime"); ok {
			see("EXPIRING_SOON", where)
		}
		for _, field := range []string{"replicas", "allocated", "ready", "taskRunning", "taskSucceed", "taskFailed", "taskPending", "taskUnknown"} {
			if _, ok, _ := unstructured.NestedInt64(b.Object, "status", field); !ok {
				t.Errorf("%s: status.%s missing", where, field)
			}
		}
		var eps []string
		if err := json.Unmarshal([]byte(b.GetAnnotations()[osv1.AnnotationEndpoints]), &eps); err != nil {
			see("BAD_ANNOTATION", where)
			continue
		}
		phase, _, _ := unstructured.NestedString(b.Object, "status", "phase")
		var linked []string
		if alloc := b.GetAnnotations()[osv1.AnnotationAllocStatus]; alloc != "" {
			var a struct{ Pods []string }
			if err := json.Unmarshal([]byte(alloc), &a); err != nil {
				t.Errorf("%s: alloc-status %q: %v", where, alloc, err)
			}
			linked = a.Pods
		} else {
			for i := range eps {
				linked = append(linked, fmt.Sprintf("%s-%d", b.GetName(), i))
			}
		}
		for i, ip := range eps {
			if ip == "" || i >= len(linked) {
				continue
			}
			pod := byName[b.GetNamespace()+"/"+linked[i]]
			deadRecorded(where, ip, pod)
			if phase == "Failed" && pod != nil && podReady(pod) {
				see("FAILED_STICKY", where)
			}
		}
	}
	for _, a := range agents.Items {
		ips, _, _ := unstructured.NestedStringSlice(a.Object, "status", "podIPs")
		sel, _, _ := unstructured.NestedString(a.Object, "status", "selector")
		conds, _, _ := unstructured.NestedSlice(a.Object, "status", "conditions")
		expired := len(conds) == 1 && conds[0].(map[string]any)["reason"] == "SandboxExpired"
		switch {
		case expired && (sel != "" || len(ips) > 0):
			t.Errorf("expired agent %s: status not wiped (selector %q, podIPs %v)", a.GetName(), sel, ips)
		case expired:
			see("AGENT_EXPIRED", "agent "+a.GetName())
		case sel == "":
			t.Errorf("agent %s has no status.selector", a.GetName())
		}
		for _, ip := range ips {
			deadRecorded("agent "+a.GetName(), ip, byName[a.GetNamespace()+"/"+a.GetName()])
		}
	}
	reader := ImageReader{}
	for _, p := range pods.Items {
		where := "pod " + p.Name
		if len(p.Status.ContainerStatuses) == 0 {
			continue
		}
		main := p.Spec.Containers[0]
		if main.Name != "sandbox" || p.Spec.InitContainers[0].Name != "execd-installer" {
			t.Errorf("%s: not the OpenSandbox layout: %v", where, main.Command)
		}
		if main.Command[0] != osv1.BootstrapPath && p.Status.Phase == corev1.PodRunning {
			see("NOT_EXEC_READY", where)
		}
		if p.DeletionTimestamp != nil && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "PodInitializing" {
			see("STUCK_TERMINATING_PODINITIALIZING", where)
		}
		if p.Status.Reason == "Evicted" {
			see("EVICTED", where)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.LastTerminationState.Terminated; t != nil {
				switch {
				case t.Reason == "OOMKilled" && t.ExitCode == 137:
					see("RESTART_OOM", where)
				case t.ExitCode == 137:
					see("RESTART_137", where)
				default:
					see("RESTART_OTHER", where)
				}
			}
		}
		cfg, err := reader.Read(ctx, p.Status.ContainerStatuses[0].ImageID)
		if p.Status.ContainerStatuses[0].ImageID == "" {
			cfg, err = reader.Read(ctx, main.Image)
		}
		if err != nil {
			see("IMAGE_CONFIG_UNREADABLE", where)
		} else if strings.Join(main.Command[1:], " ") == "tail -f /dev/null" && len(cfg.Entrypoint) > 0 {
			see("ENTRYPOINT_NOT_RUN", where)
		}
		if p.Labels[osv1.LabelSandboxID] != "" && p.Labels[osv1.LabelBatchSandboxName] == "" && p.Labels[osv1.LabelPoolName] == "" {
			see("PLAIN_POD", where)
		}
	}
	// Liveness: Unhealthy x3 and Killing, and the kill lands at
	// first failure + (threshold-1) x period + grace.
	unhealthy := map[string]corev1.Event{}
	for _, e := range events.Items {
		if e.Reason == "Unhealthy" && e.Count >= livenessThreshold {
			unhealthy[e.InvolvedObject.Name] = e
		}
	}
	for _, e := range events.Items {
		if e.Reason != "Killing" || !strings.Contains(e.Message, "liveness") {
			continue
		}
		u, ok := unhealthy[e.InvolvedObject.Name]
		pod := byName[e.Namespace+"/"+e.InvolvedObject.Name]
		if !ok || pod == nil {
			continue
		}
		last := pod.Status.ContainerStatuses[0].LastTerminationState.Terminated
		if last == nil {
			continue
		}
		want := u.FirstTimestamp.Add((livenessThreshold-1)*livenessPeriod*time.Second + livenessGrace*time.Second)
		if !last.FinishedAt.Time.Equal(want) {
			t.Errorf("liveness kill of %s finished at %s, want %s", pod.Name, last.FinishedAt.Time, want)
		}
		see("RESTART_LIVENESS", "pod "+pod.Name)
	}
	for i, o := range ops {
		if strings.Contains(o, " delete pods ") {
			name := strings.Fields(o)[3]
			for _, later := range ops[i+1:] {
				if strings.Contains(later, " create pods "+name+" ") {
					see("UID_CHANGED", "pod "+name)
				}
			}
		}
	}
	want := []string{"IP_TAKEN", "POD_DEAD", "POD_GONE", "IP_STALE", "UID_CHANGED", "STUCK_TERMINATING_PODINITIALIZING",
		"BSBX_FINALIZER_STUCK", "ENTRYPOINT_NOT_RUN", "IMAGE_CONFIG_UNREADABLE", "FAILED_STICKY", "EXPIRING_SOON",
		"BAD_ANNOTATION", "NOT_EXEC_READY", "RESTART_OOM", "RESTART_LIVENESS", "EVICTED", "RESTART_OTHER", "PLAIN_POD", "AGENT_EXPIRED"}
	for _, w := range want {
		if _, ok := seen[w]; !ok {
			t.Errorf("no %s in the simulated fleet after 3 minutes", w)
		} else {
			t.Logf("%-34s %s", w, seen[w])
		}
	}
	t.Logf("%d operations, %d pods, %d batchsandboxes, %d agent sandboxes", s.Ops(), len(pods.Items), len(bsbxs.Items), len(agents.Items))
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
