package testcluster

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/crash"
)

// A fleet of thousands is written in bulk: the helpers below make each
// object in as few writes as the API allows (a create, then one status
// write), read nothing back, and return errors rather than fail a test, so
// that Parallel can run them on many goroutines. For a handful of objects
// use Kubelet, Controller and RunningSandbox, which say what each step did.

// FleetSandbox is one sandbox of a fleet written in bulk.
type FleetSandbox struct {
	Name  string // the BatchSandbox; its Pod is Name-0
	Image string // of the main container; "" for SandboxPod's default
	IP    string // the Pod's, and the endpoints annotation's
	// Dead: the main container exited (137) and the Pod Failed, its IP
	// still recorded in the endpoints annotation.
	Dead bool
}

// CreateFleetSandbox creates BatchSandbox s.Name (endpoints [s.IP], no
// status) and its Pod Name-0, owned by it and bound to DefaultNode, with
// the status a kubelet leaves: Running and ready at s.IP, or Failed when
// s.Dead.
func (c *Cluster) CreateFleetSandbox(ctx context.Context, ns string, s FleetSandbox) error {
	pod := SandboxPod(s.Name+"-0", s.Image)
	bs := BatchSandbox(s.Name, pod)
	bs.SetAnnotations(map[string]string{osv1.AnnotationEndpoints: `["` + s.IP + `"]`})
	created, err := c.Dynamic.Resource(BatchSandboxGVR).Namespace(ns).Create(ctx, bs, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating batchsandbox %s: %w", s.Name, err)
	}
	_, err = c.CreateRunningPod(ctx, ns, OwnedByBatchSandbox(pod, created, 0), s.IP, s.Dead)
	return err
}

// CreateRunningPod creates pod in ns bound to DefaultNode and writes the
// status the kubelet reports for it: init containers Completed, the main
// container running, ready and started, at ip; or, dead, the main
// container exited 137 and the Pod Failed and not ready.
func (c *Cluster) CreateRunningPod(ctx context.Context, ns string, pod *corev1.Pod, ip string, dead bool) (*corev1.Pod, error) {
	pod.Spec.NodeName = DefaultNode
	p, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	p.Status = runningStatus(p, ip, metav1.Now())
	if dead {
		p.Status.Phase = corev1.PodFailed
		for i := range p.Status.Conditions {
			if t := p.Status.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		}
		for i := range p.Status.ContainerStatuses {
			s := &p.Status.ContainerStatuses[i]
			s.Ready, s.Started = false, ptrTo(false)
			s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error",
				StartedAt: s.State.Running.StartedAt, FinishedAt: s.State.Running.StartedAt}}
		}
	}
	out, err := c.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("setting pod %s status: %w", pod.Name, err)
	}
	return out, nil
}

// runningStatus is what the kubelet reports for p once it runs at ip:
// every condition True, init containers Completed, containers running,
// with image and container IDs as a container runtime fills them.
func runningStatus(p *corev1.Pod, ip string, now metav1.Time) corev1.PodStatus {
	st := corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		HostIP: "127.0.0.1", StartTime: &now,
	}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for i, ctr := range p.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, Ready: true, ImageID: imageID(ctr.Image, 'a'+i), ContainerID: containerID('1' + i),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}},
		})
	}
	for i, ctr := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, Ready: true, Started: ptrTo(true),
			ImageID: imageID(ctr.Image, 'b'+i), ContainerID: containerID('2' + i),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

// imageID is a pulled image's ID: its repository and a digest of digit d.
func imageID(image string, d int) string {
	repo := image
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		repo = image[:i]
	}
	return "docker-pullable://" + repo + "@sha256:" + strings.Repeat(string(rune(d)), 64)
}

func containerID(d int) string { return "containerd://" + strings.Repeat(string(rune(d)), 64) }

// Parallel runs do(0..n-1) on workers goroutines (16 when 0) and returns
// the first error; after one, the remaining indexes are skipped.
func Parallel(ctx context.Context, n, workers int, do func(i int) error) error {
	if workers <= 0 {
		workers = 16
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	var first error
	work := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		crash.Go(func() {
			defer wg.Done()
			for i := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := do(i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return first
}
