package sweep_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/model"
)

// EnvScaleTest runs the fleet-scale tests (minutes of writes to the test
// API server): SANDSCOPE_SCALE_TEST=1 go test ./actions/sweep -run Scale -timeout 60m.
// A number above 1 is the fleet's size instead of 10,000 (the same share dead).
const EnvScaleTest = "SANDSCOPE_SCALE_TEST"

const (
	scaleSandboxes = 10000
	scaleDeadShare = 0.1515 // 1,515 of 10,000
	scaleTakenEach = 5      // every 5th dead sandbox's IP is held by a Pod of another namespace
)

// TestScaleSweepOneNamespaceIPTakenElsewhere: 10,000 sandboxes in one
// namespace, 1,515 of them dead, 303 of whose IPs Pods of another
// namespace hold now. `sweep -n` and `get -n` must name every one of them
// IP_TAKEN within the default timeout, and no slot may be left unchecked:
// one lookup per dead sandbox ran out of time here and printed POD_DEAD.
func TestScaleSweepOneNamespaceIPTakenElsewhere(t *testing.T) {
	env := os.Getenv(EnvScaleTest)
	if testing.Short() || env == "" {
		t.Skipf("fleet-scale test: set %s=1 (and -timeout 60m)", EnvScaleTest)
	}
	scaleSandboxes := scaleSandboxes
	if n, err := strconv.Atoi(env); err == nil && n > 1 {
		scaleSandboxes = n
	}
	scaleDead := int(float64(scaleSandboxes) * scaleDeadShare)
	c := testcluster.Get(t)
	ns, other := c.Namespace(t), c.Namespace(t)
	ctx := context.Background()
	start := time.Now()
	parallel(t, scaleSandboxes, func(i int) error { return scaleSandbox(ctx, c, ns, i, i < scaleDead) })
	taken := 0
	parallel(t, scaleDead, func(i int) error {
		if i%scaleTakenEach != 0 {
			return nil
		}
		return scaleThief(ctx, c, other, i)
	})
	for i := 0; i < scaleDead; i += scaleTakenEach {
		taken++
	}
	t.Logf("created %d sandboxes (%d dead) and %d thieves in %s", scaleSandboxes, scaleDead, taken, time.Since(start).Round(time.Second))

	began := time.Now()
	out, errOut, code := runCLI("sweep", "--kubeconfig", c.Kubeconfig, "-n", ns, "-o", "json")
	t.Logf("sweep -n: exit %d in %s", code, time.Since(began).Round(time.Millisecond))
	rep := decodeReport(t, out)
	if got := len(findings(rep.Findings, model.CodeIPTaken)); got != taken {
		t.Errorf("sweep -n: %d IP_TAKEN, want %d (stderr %q)", got, taken, errOut)
	}
	dead := findings(rep.Findings, model.CodePodDead)
	if len(dead) != scaleDead-taken {
		t.Errorf("sweep -n: %d POD_DEAD, want %d", len(dead), scaleDead-taken)
	}
	for _, f := range dead {
		if strings.Contains(f.Message, "not checked") {
			t.Errorf("sweep -n: an unchecked POD_DEAD: %s", f.Message)
			break
		}
	}
	if len(rep.Contexts) != 1 || rep.Contexts[0].Partial {
		t.Errorf("sweep -n: contexts %+v; want one, read fully", rep.Contexts)
	}

	began = time.Now()
	out, errOut, code = runCLI("get", "sb", "--kubeconfig", c.Kubeconfig, "-n", ns, "--no-headers")
	t.Logf("get -n: exit %d in %s", code, time.Since(began).Round(time.Millisecond))
	if n := strings.Count(out, "IP_TAKEN→thief-"); n != taken || strings.Contains(out, "(unchecked)") || code != 0 {
		t.Errorf("get -n: exit %d, %d IP_TAKEN rows (want %d), unchecked rows %d; stderr %q",
			code, n, taken, strings.Count(out, "(unchecked)"), errOut)
	}
}

// parallel runs do(0..n-1) on 16 workers and fails t on the first error.
func parallel(t *testing.T, n int, do func(i int) error) {
	t.Helper()
	work := make(chan int)
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := do(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

func scaleIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 200+(i>>16&31), i>>8&255, i&255) }

// scaleSandbox creates BatchSandbox sbx-i and its Pod at scaleIP(i),
// Running, or exited and Failed when dead, as the engine and the kubelet
// leave them.
func scaleSandbox(ctx context.Context, c *testcluster.Cluster, ns string, i int, dead bool) error {
	name := fmt.Sprintf("sbx-%05d", i)
	ip := scaleIP(i)
	pod := testcluster.SandboxPod(name+"-0", "")
	bs := testcluster.BatchSandbox(name, pod)
	bs.SetAnnotations(map[string]string{osv1.AnnotationEndpoints: `["` + ip + `"]`})
	created, err := c.Dynamic.Resource(testcluster.BatchSandboxGVR).Namespace(ns).Create(ctx, bs, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating batchsandbox %s: %w", name, err)
	}
	pod = testcluster.OwnedByBatchSandbox(pod, created, 0)
	pod.Spec.NodeName = testcluster.DefaultNode
	p, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	now := metav1.Now()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: "127.0.0.1", StartTime: &now,
		ContainerStatuses: []corev1.ContainerStatus{{Name: osv1.ContainerSandbox, Image: pod.Spec.Containers[0].Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	if dead {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses[0].Ready = false
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", StartedAt: now, FinishedAt: now}}
	}
	if _, err := c.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting pod %s status: %w", pod.Name, err)
	}
	return nil
}

// scaleThief is a Running Pod of namespace other at dead sandbox i's IP.
func scaleThief(ctx context.Context, c *testcluster.Cluster, other string, i int) error {
	pod := testcluster.SandboxPod(fmt.Sprintf("thief-%05d", i), "")
	pod.Spec.NodeName = testcluster.DefaultNode
	p, err := c.Kube.CoreV1().Pods(other).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	now := metav1.Now()
	ip := scaleIP(i)
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: "127.0.0.1", StartTime: &now}
	if _, err := c.Kube.CoreV1().Pods(other).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting pod %s running: %w", pod.Name, err)
	}
	return nil
}
