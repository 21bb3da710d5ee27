package testcluster_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

// Anonymous requests are refused in this package's cluster, so a wrong
// token gets 401 (with anonymous auth on, /version would answer it).
func TestMain(m *testing.M) {
	testcluster.MainWith(m, testcluster.Options{APIServerExtraArgs: []string{"--anonymous-auth=false"}})
}

// The issue-2 "Done when": a BatchSandbox and a Pod, the Pod driven to
// Running with an IP, both read back through sandscope's own clients.
func TestBatchSandboxAndRunningPodReadBackThroughSandscopeClients(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	c.RunningSandbox(t, ns, "sbx-1", "127.0.0.5")

	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatalf("kube.NewClients: %v", err)
	}
	if got := clients.Config.ContentType; got != "application/vnd.kubernetes.protobuf" {
		t.Fatalf("sandscope's Kube client content type = %q, want protobuf", got)
	}
	ctx := testcluster.Context(t)
	gotPod, err := clients.Kube.CoreV1().Pods(ns).Get(ctx, "sbx-1-0", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Pod with protobuf: %v", err)
	}
	if gotPod.Status.Phase != corev1.PodRunning || gotPod.Status.PodIP != "127.0.0.5" {
		t.Fatalf("pod phase/IP = %s/%s, want Running/127.0.0.5", gotPod.Status.Phase, gotPod.Status.PodIP)
	}
	if gotPod.Spec.Containers[0].Command[0] != osv1.BootstrapPath {
		t.Fatalf("sandbox container command = %v", gotPod.Spec.Containers[0].Command)
	}
	gotBsbx, err := clients.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Get(ctx, "sbx-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the BatchSandbox with JSON: %v", err)
	}
	if len(gotPod.OwnerReferences) != 1 || gotPod.OwnerReferences[0].UID != gotBsbx.GetUID() {
		t.Fatalf("pod owner = %+v, want the BatchSandbox %s", gotPod.OwnerReferences, gotBsbx.GetUID())
	}
	if phase, _, _ := unstructured.NestedString(gotBsbx.Object, "status", "phase"); phase != "Succeed" {
		t.Fatalf("BatchSandbox phase = %q, want Succeed", phase)
	}
	if ready, _, _ := unstructured.NestedInt64(gotBsbx.Object, "status", "ready"); ready != 1 {
		t.Fatalf("BatchSandbox ready = %d, want 1", ready)
	}
	if ep := gotBsbx.GetAnnotations()[osv1.AnnotationEndpoints]; ep != `["127.0.0.5"]` {
		t.Fatalf("endpoints annotation = %q", ep)
	}
	// The same Pod list over protobuf, as informers list.
	list, err := clients.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: osv1.LabelBatchSandboxName + "=sbx-1"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("listing pods by BatchSandbox label: %d items, err %v", len(list.Items), err)
	}
}

func newPod(t *testing.T, c *testcluster.Cluster, ns, name string) *testcluster.Kubelet {
	t.Helper()
	kl := c.Kubelet(t)
	kl.CreatePod(ns, testcluster.SandboxPod(name, ""))
	return kl
}

// runningPod creates Pod name in ns and sets it Running at ip.
func runningPod(t *testing.T, c *testcluster.Cluster, ns, name, ip string) *testcluster.Kubelet {
	t.Helper()
	kl := newPod(t, c, ns, name)
	kl.SetRunning(ns, name, ip)
	return kl
}

func TestScheduleBindsToNode(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := newPod(t, c, ns, "p")
	p := kl.Schedule(ns, "p", "node-a")
	if p.Spec.NodeName != "node-a" {
		t.Fatalf("nodeName = %q", p.Spec.NodeName)
	}
	if !hasPodCondition(p, corev1.PodScheduled, corev1.ConditionTrue) {
		t.Fatalf("PodScheduled not True: %+v", p.Status.Conditions)
	}
	n, err := c.Kube.CoreV1().Nodes().Get(testcluster.Context(t), "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node-a not created: %v", err)
	}
	if !nodeCondition(n, corev1.NodeReady, corev1.ConditionTrue) {
		t.Fatalf("node-a not Ready: %+v", n.Status.Conditions)
	}
}

func TestSetRunning(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := runningPod(t, c, ns, "p", "10.1.2.3")
	p := kl.GetPod(ns, "p")
	if p.Spec.NodeName != testcluster.DefaultNode {
		t.Errorf("nodeName = %q, want %q", p.Spec.NodeName, testcluster.DefaultNode)
	}
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP != "10.1.2.3" || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "10.1.2.3" {
		t.Errorf("phase/podIP/podIPs = %s/%s/%v", p.Status.Phase, p.Status.PodIP, p.Status.PodIPs)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if !hasPodCondition(p, typ, corev1.ConditionTrue) {
			t.Errorf("condition %s not True", typ)
		}
	}
	if s := p.Status.ContainerStatuses; len(s) != 1 || s[0].State.Running == nil || !s[0].Ready {
		t.Errorf("container statuses = %+v", s)
	}
	if s := p.Status.InitContainerStatuses; len(s) != 1 || s[0].State.Terminated == nil || s[0].State.Terminated.Reason != "Completed" {
		t.Errorf("init container statuses = %+v", s)
	}
}

func TestSetWaitingReasons(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	for _, tc := range []struct {
		container, reason string
	}{
		{osv1.ContainerExecdInstaller, "ErrImagePull"},
		{osv1.ContainerSandbox, "PodInitializing"},
		{osv1.ContainerSandbox, "ContainerCreating"},
		{osv1.ContainerSandbox, "ImagePullBackOff"},
		{osv1.ContainerSandbox, "CrashLoopBackOff"},
	} {
		name := strings.ToLower(tc.reason) + "-" + tc.container
		kl := newPod(t, c, ns, name)
		msg := "back-off pulling image"
		p := kl.SetWaiting(ns, name, tc.container, tc.reason, msg)
		statuses := p.Status.ContainerStatuses
		if tc.container == osv1.ContainerExecdInstaller {
			statuses = p.Status.InitContainerStatuses
			if !hasPodCondition(p, corev1.PodInitialized, corev1.ConditionFalse) {
				t.Errorf("%s: Initialized not False", name)
			}
		}
		if len(statuses) != 1 || statuses[0].State.Waiting == nil || statuses[0].State.Waiting.Reason != tc.reason || statuses[0].State.Waiting.Message != msg {
			t.Errorf("%s: statuses = %+v", name, statuses)
		}
		if p.Status.Phase != corev1.PodPending || !hasPodCondition(p, corev1.PodReady, corev1.ConditionFalse) {
			t.Errorf("%s: phase %s, conditions %+v", name, p.Status.Phase, p.Status.Conditions)
		}
	}
}

func TestCrashLoopBackOffKeepsRunningPhase(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := runningPod(t, c, ns, "p", "10.0.0.9")
	kl.Terminate(ns, "p", osv1.ContainerSandbox, 1, "Error")
	p := kl.SetWaiting(ns, "p", osv1.ContainerSandbox, "CrashLoopBackOff", "back-off 10s restarting failed container")
	if p.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase = %s, want Running", p.Status.Phase)
	}
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CrashLoopBackOff" {
		t.Fatalf("state = %+v", p.Status.ContainerStatuses[0].State)
	}
}

func TestTerminateAndRestart(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := runningPod(t, c, ns, "p", "10.0.0.1")
	p := kl.Terminate(ns, "p", osv1.ContainerSandbox, 137, "OOMKilled")
	term := p.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 137 || term.Reason != "OOMKilled" || term.FinishedAt.IsZero() {
		t.Fatalf("terminated = %+v", term)
	}
	if hasPodCondition(p, corev1.PodReady, corev1.ConditionTrue) {
		t.Fatal("pod still Ready after its only container terminated")
	}
	kl.Restart(ns, "p", osv1.ContainerSandbox, 137, "OOMKilled")
	p = kl.Restart(ns, "p", osv1.ContainerSandbox, 2, "Error")
	s := p.Status.ContainerStatuses[0]
	if s.RestartCount != 2 || s.State.Running == nil || !s.Ready {
		t.Fatalf("after two restarts: %+v", s)
	}
	last := s.LastTerminationState.Terminated
	if last == nil || last.ExitCode != 2 || last.Reason != "Error" || last.StartedAt.IsZero() || last.FinishedAt.IsZero() {
		t.Fatalf("lastState = %+v", s.LastTerminationState)
	}
}

func TestSetPhaseAndEvict(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := runningPod(t, c, ns, "done", "10.0.0.2")
	kl.Terminate(ns, "done", osv1.ContainerSandbox, 0, "Completed")
	if p := kl.SetPhase(ns, "done", corev1.PodSucceeded, "", ""); p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("phase = %s", p.Status.Phase)
	}
	runningPod(t, c, ns, "evicted", "10.0.0.3")
	p := kl.Evict(ns, "evicted", "The node was low on resource: memory.")
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Evicted" || !hasPodCondition(p, corev1.DisruptionTarget, corev1.ConditionTrue) {
		t.Fatalf("evicted pod: phase %s reason %s conditions %+v", p.Status.Phase, p.Status.Reason, p.Status.Conditions)
	}
	if p.Status.PodIP != "10.0.0.3" {
		t.Fatalf("evicted pod lost its IP: %q", p.Status.PodIP)
	}
}

func TestDeleteHeldAndRelease(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	for _, bound := range []bool{false, true} {
		name := "unbound"
		if bound {
			name = "bound"
		}
		kl := newPod(t, c, ns, name)
		if bound {
			kl.SetRunning(ns, name, "10.0.0.4")
		}
		p := kl.DeleteHeld(ns, name)
		if p.DeletionTimestamp == nil {
			t.Fatalf("%s: no deletionTimestamp after DeleteHeld", name)
		}
		kl.Release(ns, name)
		if _, err := c.Kube.CoreV1().Pods(ns).Get(testcluster.Context(t), name, metav1.GetOptions{}); err == nil {
			t.Fatalf("%s: pod still there after Release", name)
		}
	}
}

func TestEventIsCoreV1AboutThePod(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	kl := newPod(t, c, ns, "p")
	kl.Schedule(ns, "p", "node-b")
	first := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	last := time.Now().Add(-time.Minute).Truncate(time.Second)
	kl.Event(ns, "p", corev1.EventTypeWarning, "BackOff", "Back-off pulling image", first, last, 42)
	pod := kl.GetPod(ns, "p")
	list, err := c.Kube.CoreV1().Events(ns).List(testcluster.Context(t), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Pod,involvedObject.name=p,involvedObject.uid=" + string(pod.UID),
	})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("events for pod: %d, err %v", len(list.Items), err)
	}
	ev := list.Items[0]
	if ev.Reason != "BackOff" || ev.Type != corev1.EventTypeWarning || ev.Count != 42 || ev.Source.Component != "kubelet" || ev.Source.Host != "node-b" {
		t.Fatalf("event = %+v", ev)
	}
	if !ev.FirstTimestamp.Time.Equal(first) || !ev.LastTimestamp.Time.Equal(last) {
		t.Fatalf("timestamps = %s..%s, want %s..%s", ev.FirstTimestamp, ev.LastTimestamp, first, last)
	}
}

func TestNodeConditions(t *testing.T) {
	c := testcluster.Get(t)
	kl := c.Kubelet(t)
	node := "node-" + strings.ToLower(c.Namespace(t))
	kl.SetNodeMemoryPressure(node, true)
	n := kl.SetNodeNotReady(node)
	if !nodeCondition(n, corev1.NodeReady, corev1.ConditionUnknown) || !nodeCondition(n, corev1.NodeMemoryPressure, corev1.ConditionTrue) {
		t.Fatalf("node conditions = %+v", n.Status.Conditions)
	}
}

func TestControllerStatusAndAnnotations(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ct := c.Controller(t)
	ct.Create(testcluster.PoolGVR, ns, testcluster.Pool("pool-a", testcluster.SandboxPod("x", ""), 1, 2, 0, 5))
	pool := ct.SetStatus(testcluster.PoolGVR, ns, "pool-a", map[string]any{"total": 3, "allocated": 1, "available": 2, "revision": "abc"})
	if got, _, _ := unstructured.NestedInt64(pool.Object, "status", "available"); got != 2 {
		t.Fatalf("pool available = %d", got)
	}
	ct.Create(testcluster.BatchSandboxGVR, ns, testcluster.PooledBatchSandbox("pooled", "pool-a"))
	ct.SetAllocStatus(ns, "pooled", "pool-a-x1", "pool-a-x2")
	ct.SetAllocReleased(ns, "pooled", "pool-a-x1")
	b := ct.SetBatchSandboxStatus(ns, "pooled", map[string]any{"phase": "Pending"})
	for _, k := range testcluster.BatchSandboxStatusCounters {
		if _, found, _ := unstructured.NestedInt64(b.Object, "status", k); !found {
			t.Errorf("status.%s not written", k)
		}
	}
	ann := b.GetAnnotations()
	if ann[osv1.AnnotationAllocStatus] != `{"pods":["pool-a-x1","pool-a-x2"]}` || ann[osv1.AnnotationAllocReleased] != `{"pods":["pool-a-x1"]}` {
		t.Fatalf("annotations = %v", ann)
	}
	ct.Create(testcluster.AgentSandboxGVR, ns, testcluster.AgentSandbox("agent", testcluster.SandboxPod("x", "")))
	ct.SetStatus(testcluster.AgentSandboxGVR, ns, "agent", map[string]any{"podIPs": []string{"10.0.0.7"}, "selector": "app=agent"})
	old := ct.Get(testcluster.AgentSandboxV1alpha1GVR, ns, "agent")
	if ips, _, _ := unstructured.NestedStringSlice(old.Object, "status", "podIPs"); len(ips) != 1 || ips[0] != "10.0.0.7" {
		t.Fatalf("agent sandbox via v1alpha1: podIPs = %v", ips)
	}
}

func TestStopAndStartAPIServerKeepsPortAndData(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	c.StopAPIServer(t)
	if err := clients.Probe(testcluster.Context(t)); err == nil {
		t.Fatal("probe succeeded while the API server was stopped")
	}
	c.StartAPIServer(t)
	if err := clients.Probe(testcluster.Context(t)); err != nil {
		t.Fatalf("probe after restart: %v", err)
	}
	if _, err := c.Kube.CoreV1().Namespaces().Get(testcluster.Context(t), ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace lost across the restart: %v", err)
	}
}

// The cluster's kubeconfig file works with sandscope's kubectl-style
// connection, and a token the server does not know is refused in one line
// naming the context and server.
func TestKubeconfigWithKubectlStyleConnect(t *testing.T) {
	c := testcluster.Get(t)
	flags := kube.NewConfigFlags()
	flags.KubeConfig = c.Kubeconfig
	clients, err := kube.Connect(testcluster.Context(t), flags, kube.ConnectOptions{})
	if err != nil {
		t.Fatalf("kube.Connect with the test kubeconfig: %v", err)
	}
	if clients.Context != "testcluster" || clients.Server != c.Server {
		t.Fatalf("connected to context %q server %q, want testcluster %s", clients.Context, clients.Server, c.Server)
	}
	// The header's who and what: the kubeconfig user and the server's version.
	raw0, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if want := raw0.Contexts[raw0.CurrentContext].AuthInfo; clients.User != want || !strings.HasPrefix(clients.ServerVersion, "v1.") {
		t.Fatalf("user %q (want %q), server version %q (want v1.*)", clients.User, want, clients.ServerVersion)
	}

	raw, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range raw.AuthInfos {
		u.ClientCertificateData, u.ClientKeyData, u.Token = nil, nil, "not-a-token-this-server-knows"
	}
	wrong := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, wrong); err != nil {
		t.Fatal(err)
	}
	flags = kube.NewConfigFlags()
	flags.KubeConfig = wrong
	_, err = kube.Connect(testcluster.Context(t), flags, kube.ConnectOptions{})
	var ce *kube.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("connect with a wrong token: err = %v, want a *kube.ConnectError", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "401") || !strings.Contains(msg, `"testcluster"`) || !strings.Contains(msg, c.Server) || strings.Contains(msg, "\n") {
		t.Fatalf("refused-credentials message = %q; want one line with 401, the context and %s", msg, c.Server)
	}
}

func hasPodCondition(p *corev1.Pod, typ corev1.PodConditionType, status corev1.ConditionStatus) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status == status
		}
	}
	return false
}

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType, status corev1.ConditionStatus) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c.Status == status
		}
	}
	return false
}
