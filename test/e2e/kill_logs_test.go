package e2e_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/kube"
)

// poolFinalizer is OpenSandbox's finalizer that leaves a BatchSandbox
// stuck Terminating once its Pool is gone.
const poolFinalizer = "pool.sandbox.opensandbox.io/pool-allocation"

// A deleted sandbox held by its finalizer, its Pod stuck Terminating on a
// node whose kubelet never confirms: ctrl+k asks, naming the finalizer
// that will still hold the object; y removes the Pod from the API server
// at once, and the object stays, held, as the question said.
func TestTUIForceDeleteNamesFinalizersAndRemovesThePod(t *testing.T) {
	needTmux(t)
	c, ns := testcluster.GetWithNamespace(t)
	ctl, kl := c.Controller(t), c.Kubelet(t)
	c.RunningSandbox(t, ns, "stuck", "10.244.7.7")
	addFinalizer(t, c, ns, "stuck", poolFinalizer)
	t.Cleanup(func() { removeFinalizers(t, c, ns, "stuck") })
	ctl.Delete(kube.BatchSandboxGVR, ns, "stuck")
	if err := c.Kube.CoreV1().Pods(ns).Delete(testcluster.Context(t), "stuck-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := kl.GetPod(ns, "stuck-0"); p.DeletionTimestamp == nil {
		t.Fatalf("the Pod is not Terminating: %+v", p.ObjectMeta)
	}

	s := startSandscope(t, 250, 30, "--kubeconfig", c.Kubeconfig, "-n", ns)
	waitOrExplain(t, s, `stuck\s+bsbx`, 30*time.Second, "the sandbox never showed")
	s.SendKeys("C-k")
	screen := s.WaitFor(`Force delete bsbx \S+/stuck and its Pods, no grace period\?`, 10*time.Second)
	if !strings.Contains(screen, "Finalizers "+poolFinalizer+" still hold it until their controllers remove them.") {
		t.Fatalf("the question does not name the finalizer:\n%s", screen)
	}
	s.SendKeys("y")
	s.WaitFor(`force delete requested for \S+/stuck and its Pods \(finalizers `+poolFinalizer, 30*time.Second)

	ctx := testcluster.Context(t)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Kube.CoreV1().Pods(ns).Get(ctx, "stuck-0", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the Pod stuck-0 is still on the API server after the force delete:\n%s", s.Capture())
	}
	if obj := ctl.Get(kube.BatchSandboxGVR, ns, "stuck"); obj.GetDeletionTimestamp() == nil || !slices.Contains(obj.GetFinalizers(), poolFinalizer) {
		t.Errorf("the BatchSandbox is not still held by %s: finalizers %v", poolFinalizer, obj.GetFinalizers())
	}
}

func addFinalizer(t *testing.T, c *testcluster.Cluster, ns, name, finalizer string) {
	t.Helper()
	obj := c.Controller(t).Get(kube.BatchSandboxGVR, ns, name)
	obj.SetFinalizers(append(obj.GetFinalizers(), finalizer))
	if _, err := c.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Update(testcluster.Context(t), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func removeFinalizers(t *testing.T, c *testcluster.Cluster, ns, name string) {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, err := c.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Patch(context.Background(), name, "application/merge-patch+json", patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing the finalizers of %s/%s: %v", ns, name, err)
	}
}

// A Pod stuck in PodInitializing on a node whose (test) kubelet serves
// container logs through the API server's pods/log: l reads the main
// container, which the kubelet refuses as waiting to start; C picks the
// init container execd-installer and shows its lines; 2 narrows them to
// the last minute, which the kubelet was asked for (sinceSeconds=60).
func TestTUILogPickerReadsTheInitContainer(t *testing.T) {
	needTmux(t)
	c, ns := testcluster.GetWithNamespace(t)
	now := time.Now()
	installer := []kubelettest.LogLine{
		{Time: now.Add(-2 * time.Hour), Text: "installer: an old line, 2h ago"},
		{Time: now.Add(-10 * time.Second), Text: "installer: copying execd to /opt/opensandbox/bin"},
		{Time: now.Add(-5 * time.Second), Text: "installer: waiting for the registry mirror"},
	}
	kubelet, err := kubelettest.Start(kubelettest.Config{LookupPod: kubelettest.APIPodLookup(c.Kube),
		Logs: func(_ context.Context, req kubelettest.LogRequest) ([]kubelettest.LogLine, error) {
			if req.Container == osv1.ContainerExecdInstaller {
				return installer, nil
			}
			return nil, fmt.Errorf("container %q in pod %q is waiting to start: PodInitializing", req.Container, req.Pod)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kubelet.Close() })
	node := "logs-" + ns
	if _, err := kubelet.RegisterNode(testcluster.Context(t), c.Kube, node); err != nil {
		t.Fatal(err)
	}

	ctl, kl := c.Controller(t), c.Kubelet(t)
	pod := testcluster.SandboxPod("init-0", "")
	testcluster.OwnedByBatchSandbox(pod, ctl.Create(kube.BatchSandboxGVR, ns, testcluster.BatchSandbox("init", pod)), 0)
	kl.CreatePod(ns, pod)
	kl.Schedule(ns, "init-0", node)
	kl.UpdatePodStatus(ns, "init-0", func(p *corev1.Pod) { // the installer runs; the main container waits for it
		started := metav1.NewTime(now.Add(-time.Minute))
		p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodPending, "10.244.7.8", []corev1.PodIP{{IP: "10.244.7.8"}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: osv1.ContainerExecdInstaller, Image: "opensandbox/execd:v1.0.0",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: osv1.ContainerSandbox, Image: "python:3.12-slim",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
	})
	ctl.SetEndpoints(ns, "init", "10.244.7.8")
	ctl.SetBatchSandboxStatus(ns, "init", map[string]any{"phase": "Pending", "replicas": 1, "allocated": 1, "ready": 0})

	s := startSandscope(t, 200, 30, "--kubeconfig", c.Kubeconfig, "-n", ns)
	waitOrExplain(t, s, `init\s+bsbx`, 30*time.Second, "the sandbox never showed")
	s.SendKeys("l")
	s.WaitFor(`waiting to start: PodInitializing`, 20*time.Second)

	s.SendKeys("C")
	screen := s.WaitFor(`installer: waiting for the registry mirror`, 20*time.Second)
	if !strings.Contains(screen, "container "+osv1.ContainerExecdInstaller) || !strings.Contains(screen, "installer: an old line, 2h ago") ||
		!strings.Contains(screen, "installer: copying execd") {
		t.Fatalf("C did not show the whole log of %s:\n%s", osv1.ContainerExecdInstaller, screen)
	}

	s.SendKeys("2")
	s.WaitFor(`last 1m`, 10*time.Second)
	// The old lines stay on screen while the window's read is loading:
	// judge the screen once it has loaded.
	s.WaitForGone(`loading…`, 20*time.Second)
	screen = s.WaitFor(`installer: waiting for the registry mirror`, 20*time.Second)
	if strings.Contains(screen, "an old line") || !strings.Contains(screen, "installer: copying execd") {
		t.Fatalf("the last minute's window shows other lines:\n%s", screen)
	}
	var asked []string
	for _, r := range kubelet.Requests() {
		if strings.HasPrefix(r.Path, "/containerLogs/") {
			asked = append(asked, r.Path+"?"+r.RawQuery)
		}
	}
	want := "/containerLogs/" + ns + "/init-0/" + osv1.ContainerExecdInstaller + "?"
	if !slices.ContainsFunc(asked, func(a string) bool { return strings.HasPrefix(a, want) && strings.Contains(a, "sinceSeconds=60") }) {
		t.Fatalf("the kubelet was never asked for the installer's last minute; it was asked for:\n%s", strings.Join(asked, "\n"))
	}
}
