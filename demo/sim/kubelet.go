package sim

import (
	"context"
	"fmt"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// The scheduler and the kubelet: binding a Pod, giving it an IP, pulling its
// images and starting its containers (the simulator's own sandboxes, and
// adopted ones, whose images and start commands decide how they end).

// schedulePod gives the Pod an IP on its node and starts its init container.
// sb is nil for an unallocated pool Pod.
func (s *Sim) schedulePod(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() {
		return nil
	}
	if sb != nil && sb.warmPool != nil && sb.warmPool.stuck {
		return nil // a dry pool's member: no node fits it, it stays Pending with no IP
	}
	ip := s.ipam.allocate(p.node)
	if ip == "" {
		// The node's Pod CIDR is exhausted: the Pod waits, as on a real node.
		if err := s.kubeletEvent(ctx, sb, p.obj, corev1.EventTypeWarning, "FailedScheduling",
			fmt.Sprintf("0/%d nodes are available: 1 node(s) had no free Pod IP in its range.", s.cfg.Nodes)); err != nil {
			return err
		}
		s.after(5*time.Second, "reschedule "+p.obj.Name, s.guarded(sb, func(ctx context.Context) error { return s.schedulePod(ctx, sb, p) }))
		return nil
	}
	p.ip = ip
	if p.obj.Spec.NodeName == "" {
		obj, err := s.bindPod(ctx, p.obj, s.nodeName(p.node))
		if err != nil {
			s.ipam.release(p.node, ip)
			return err
		}
		p.obj = obj
		if err := s.kubeletEvent(ctx, sb, obj, corev1.EventTypeNormal, "Scheduled",
			fmt.Sprintf("Successfully assigned %s/%s to %s", obj.Namespace, obj.Name, obj.Spec.NodeName)); err != nil {
			return err
		}
		if sb != nil {
			if err := s.reconcile(ctx, sb); err != nil { // allocated 1, endpoints still [""]
				return err
			}
		}
	}
	stuck := sb != nil && sb.scenario == StuckTerminating
	if sb != nil && sb.adopted {
		// The kubelet says what it pulls first (the init image, if any); a
		// create shows it as its PullingImage stage.
		if err := s.recordEvent(ctx, sb, p.obj, corev1.EventTypeNormal, "Pulling",
			fmt.Sprintf("Pulling image %q", firstImage(p.obj))); err != nil {
			return err
		}
	} else if err := s.kubeletEvent(ctx, sb, p.obj, corev1.EventTypeNormal, "Pulling",
		fmt.Sprintf("Pulling image %q", firstImage(p.obj))); err != nil {
		return err
	}
	obj, err := s.mutatePod(ctx, p.obj, true, "scheduled "+ip, func(pod *corev1.Pod) {
		s.statusScheduled(pod, ip, s.hostIP(p.node), stuck)
	})
	if err != nil {
		return err
	}
	p.obj = obj
	if sb != nil {
		if err := s.reconcile(ctx, sb); err != nil {
			return err
		}
	}
	if stuck {
		// The init image never finishes pulling; the user gives up and deletes.
		s.after(s.between(5*time.Second, 20*time.Second), "user deletes "+sb.name, func(ctx context.Context) error {
			return s.deleteStuck(ctx, sb)
		})
		return nil
	}
	s.after(s.between(time.Second, 3*time.Second), "start "+p.obj.Name, s.guarded(sb, func(ctx context.Context) error { return s.startPod(ctx, sb, p) }))
	return nil
}

// startPod finishes the init containers and starts the main container
// (or fails its image pull once, for FailedSticky). sb is nil for a
// Pool's warm Pod, which then joins the idle ones.
func (s *Sim) startPod(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() {
		return nil
	}
	if sb != nil && sb.adopted {
		return s.startAdopted(ctx, sb, p)
	}
	if sb != nil && sb.scenario == FailedSticky && !sb.failedStuck {
		obj, err := s.mutatePod(ctx, p.obj, true, "ImagePullBackOff", func(pod *corev1.Pod) {
			s.statusWaiting(pod, "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", pod.Spec.Containers[0].Image))
		})
		if err != nil {
			return err
		}
		p.obj = obj
		if err := s.recordEvent(ctx, sb, obj, corev1.EventTypeWarning, "Failed",
			fmt.Sprintf("Failed to pull image %q: rpc error: code = NotFound desc = failed to pull and unpack image: not found", sb.image)); err != nil {
			return err
		}
		sb.failedStuck = true
		if err := s.reconcile(ctx, sb); err != nil {
			return err
		}
		// The tag is pushed later; the kubelet's next pull succeeds.
		s.after(s.between(20*time.Second, 40*time.Second), "pull succeeds "+p.obj.Name, func(ctx context.Context) error {
			return s.startPod(ctx, sb, p)
		})
		return nil
	}
	obj, err := s.mutatePod(ctx, p.obj, true, "running", func(pod *corev1.Pod) { s.statusRunning(pod) })
	if err != nil {
		return err
	}
	p.obj = obj
	if err := s.containerStarted(ctx, sb, obj, false); err != nil {
		return err
	}
	if p.pool != nil && sb == nil {
		p.pool.warming--
		p.pool.idle = append(p.pool.idle, p)
		return s.writePoolStatus(ctx, p.pool)
	}
	if err := s.reconcile(ctx, sb); err != nil {
		return err
	}
	s.onRunning(sb, p)
	return nil
}

// containerStarted records what the kubelet says as it starts the main
// container (the image is on the node: pulled before, or just now), and
// the container's first lines.
func (s *Sim) containerStarted(ctx context.Context, sb *sandbox, pod *corev1.Pod, restart bool) error {
	main := pod.Spec.Containers[0]
	pulled := fmt.Sprintf("Successfully pulled image %q in 1.2s (1.2s including waiting)", main.Image)
	if restart {
		pulled = fmt.Sprintf("Container image %q already present on machine", main.Image)
	}
	for _, ev := range []struct{ reason, message string }{
		{"Pulled", pulled},
		{"Created", "Created container: " + main.Name},
		{"Started", "Started container " + main.Name},
	} {
		if err := s.kubeletEvent(ctx, sb, pod, corev1.EventTypeNormal, ev.reason, ev.message); err != nil {
			return err
		}
	}
	s.logStart(sb, pod)
	return nil
}

// startAdopted finishes the pull and starts the main container, which then
// runs, or ends at once when its start command does.
func (s *Sim) startAdopted(ctx context.Context, sb *sandbox, p *simPod) error {
	pod := p.obj
	main := pod.Spec.Containers[0]
	if !pullable(main.Image) {
		return s.pullFails(ctx, sb, p)
	}
	took := time.Duration(0)
	if pod.Status.StartTime != nil {
		took = s.now.Sub(pod.Status.StartTime.Time)
	}
	events := []struct{ reason, message string }{
		{"Pulled", fmt.Sprintf("Successfully pulled image %q in %s (%s including waiting)", main.Image, took, took)},
		{"Created", "Created container: " + main.Name},
		{"Started", "Started container " + main.Name},
	}
	if firstImage(pod) != main.Image {
		// The main image is pulled once the init containers are done.
		events = append([]struct{ reason, message string }{{"Pulling", fmt.Sprintf("Pulling image %q", main.Image)}}, events...)
	}
	for _, ev := range events {
		if err := s.recordEvent(ctx, sb, pod, corev1.EventTypeNormal, ev.reason, ev.message); err != nil {
			return err
		}
	}
	s.logStart(sb, pod)
	if code, reason, ok := exitsAtOnce(main); ok {
		return s.exitAtOnce(ctx, sb, p, code, reason)
	}
	obj, err := s.mutatePod(ctx, p.obj, true, "running", func(pod *corev1.Pod) { s.statusRunning(pod) })
	if err != nil {
		return err
	}
	p.obj = obj
	if err := s.reconcile(ctx, sb); err != nil {
		return err
	}
	s.onRunning(sb, p)
	return nil
}

// pullFails: the demo registry cannot serve the image. ErrImagePull now,
// ImagePullBackOff after the kubelet's back-off; the engine marks the
// sandbox Failed (sticky) on its next reconcile.
func (s *Sim) pullFails(ctx context.Context, sb *sandbox, p *simPod) error {
	image := p.obj.Spec.Containers[0].Image
	cause := fmt.Sprintf("rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", image, image, image)
	obj, err := s.mutatePod(ctx, p.obj, true, "ErrImagePull", func(pod *corev1.Pod) { s.statusWaiting(pod, "ErrImagePull", cause) })
	if err != nil {
		return err
	}
	p.obj = obj
	if err := s.recordEvent(ctx, sb, obj, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, cause)); err != nil {
		return err
	}
	if err := s.recordEvent(ctx, sb, obj, corev1.EventTypeWarning, "Failed", "Error: ErrImagePull"); err != nil {
		return err
	}
	sb.failedStuck = true
	// A controller hears of a Pod change a moment after the kubelet wrote it.
	s.after(s.between(200*time.Millisecond, 600*time.Millisecond), "reconcile "+sb.name, s.guarded(sb, func(ctx context.Context) error {
		return s.reconcile(ctx, sb)
	}))
	s.after(s.between(5*time.Second, 15*time.Second), "back-off "+obj.Name, s.guarded(sb, func(ctx context.Context) error {
		return s.pullBackOff(ctx, sb, p)
	}))
	return nil
}

// pullBackOff: the kubelet backs off pulling an image it could not pull.
func (s *Sim) pullBackOff(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() {
		return nil
	}
	image := p.obj.Spec.Containers[0].Image
	msg := fmt.Sprintf("Back-off pulling image %q", image)
	obj, err := s.mutatePod(ctx, p.obj, true, "ImagePullBackOff", func(pod *corev1.Pod) { s.statusWaiting(pod, "ImagePullBackOff", msg) })
	if err != nil {
		return err
	}
	p.obj = obj
	if err := s.recordEvent(ctx, sb, obj, corev1.EventTypeNormal, "BackOff", msg); err != nil {
		return err
	}
	if err := s.recordEvent(ctx, sb, obj, corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff"); err != nil {
		return err
	}
	return s.reconcile(ctx, sb)
}

// firstImage is the image the kubelet pulls first for pod: its first init
// container's, else its main container's.
func firstImage(pod *corev1.Pod) string {
	if len(pod.Spec.InitContainers) > 0 {
		return pod.Spec.InitContainers[0].Image
	}
	return pod.Spec.Containers[0].Image
}

// initWrappers pass their arguments on as the command they run.
var initWrappers = map[string]bool{"tini": true, "dumb-init": true}

// interactive programs read commands from stdin when given no script.
var interactive = map[string]bool{"bash": true, "sh": true, "dash": true, "ash": true, "zsh": true,
	"python": true, "python3": true, "node": true}

// exitsAtOnce says whether the main container's start command ends as soon
// as it starts, and how: an interactive shell or interpreter with no script
// reads end-of-file from the empty stdin of a container without a terminal
// and exits 0 (`tini -- bash` without a terminal); `true` and `false` end with
// their code. osv1.BootstrapPath.sh lives as long as the command it runs.
func exitsAtOnce(c corev1.Container) (int32, string, bool) {
	argv := append(append([]string(nil), c.Command...), c.Args...)
	if len(argv) == 0 {
		// No command: the image's own ENTRYPOINT and CMD run.
		if _, spec, ok := lookupImage(c.Image); ok {
			argv = append(append(argv, spec.entrypoint...), spec.cmd...)
		}
	} else if argv[0] == osv1.BootstrapPath {
		argv = argv[1:]
	}
	if len(argv) > 0 && initWrappers[path.Base(argv[0])] {
		argv = argv[1:]
		if len(argv) > 0 && argv[0] == "--" {
			argv = argv[1:]
		}
	}
	if len(argv) == 0 {
		return 0, "Completed", true
	}
	switch prog := path.Base(argv[0]); {
	case prog == "true":
		return 0, "Completed", true
	case prog == "false":
		return 1, "Error", true
	case len(argv) == 1 && interactive[prog]:
		return 0, "Completed", true
	}
	return 0, "", false
}

// exitAtOnce writes a main container that started and ended. With
// restartPolicy Never the Pod is over (the CNI frees its IP; the engine
// keeps advertising it); otherwise the kubelet backs off restarting it.
func (s *Sim) exitAtOnce(ctx context.Context, sb *sandbox, p *simPod, code int32, reason string) error {
	policy := p.obj.Spec.RestartPolicy
	terminal := policy == corev1.RestartPolicyNever || (policy == corev1.RestartPolicyOnFailure && code == 0)
	obj, err := s.mutatePod(ctx, p.obj, true, fmt.Sprintf("main exited at once %d %s", code, reason), func(pod *corev1.Pod) {
		s.statusRunning(pod)
		s.statusTerminated(pod, code, reason, terminal)
	})
	if err != nil {
		return err
	}
	p.obj = obj
	s.logEnd(obj, code, reason)
	if terminal {
		s.freeIP(p)
		return s.reconcile(ctx, sb)
	}
	if err := s.reconcile(ctx, sb); err != nil {
		return err
	}
	s.after(time.Second, "crash loop "+obj.Name, s.guarded(sb, func(ctx context.Context) error { return s.crashLoop(ctx, sb, p) }))
	return nil
}

// crashLoop: the restarted container ended again; the kubelet backs off.
func (s *Sim) crashLoop(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() {
		return nil
	}
	pod := p.obj
	msg := fmt.Sprintf("back-off 10s restarting failed container=%s pod=%s_%s(%s)", pod.Spec.Containers[0].Name, pod.Name, pod.Namespace, pod.UID)
	obj, err := s.mutatePod(ctx, pod, true, "CrashLoopBackOff", func(pod *corev1.Pod) {
		cs := &pod.Status.ContainerStatuses[0]
		if cs.State.Terminated != nil {
			cs.LastTerminationState = corev1.ContainerState{Terminated: cs.State.Terminated}
		}
		cs.RestartCount++
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg}}
	})
	if err != nil {
		return err
	}
	p.obj = obj
	if err := s.recordEvent(ctx, sb, obj, corev1.EventTypeWarning, "BackOff",
		fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", pod.Spec.Containers[0].Name, pod.Name, pod.Namespace, pod.UID)); err != nil {
		return err
	}
	return s.reconcile(ctx, sb)
}
