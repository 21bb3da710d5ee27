package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Faults: what a scenario does to a running sandbox (exits, OOM and
// liveness kills, evictions, re-creations, moved IPs, Pods gone behind
// their sandbox).

// Liveness probe of the liveness scenario (numbers of a real liveness kill).
const (
	livenessPeriod    = 10
	livenessThreshold = 3
	livenessGrace     = 30
)

// onRunning schedules what the sandbox's scenario does once its Pod runs.
func (s *Sim) onRunning(sb *sandbox, p *simPod) {
	pod := p.obj.Name
	switch sb.scenario {
	case InstantDeath:
		s.after(s.between(200*time.Millisecond, 1500*time.Millisecond), "bash exits "+pod, func(ctx context.Context) error {
			return s.die(ctx, sb, p, 0, "Completed")
		})
	case OOMKill:
		s.after(s.between(15*time.Second, 60*time.Second), "oom "+pod, func(ctx context.Context) error { return s.oomKill(ctx, sb, p) })
	case UnexplainedRestart:
		s.after(s.between(15*time.Second, 60*time.Second), "crash "+pod, func(ctx context.Context) error {
			return s.restart(ctx, sb, p, 2, "Error")
		})
	case LivenessKill:
		block := s.between(2*time.Second, 30*time.Second)
		// The first failed probe lands up to one period after the block starts.
		firstFailure := block + time.Duration(s.rng.Intn(livenessPeriod))*time.Second
		// The business log says when the process blocked: the block start
		// `sandscope explain restart --block-start` takes.
		s.after(block, "blocks "+pod, func(context.Context) error {
			if !p.goneOrTerminating() {
				s.logf(p.obj, "worker blocked: waiting on the upstream lock; /healthz stops answering")
			}
			return nil
		})
		s.after(firstFailure, "probe fails "+pod, func(ctx context.Context) error { return s.livenessFailure(ctx, sb, p, 1) })
	case Evicted:
		s.after(s.between(20*time.Second, 90*time.Second), "evict "+pod, func(ctx context.Context) error { return s.evict(ctx, sb, p) })
	case Recreated:
		delay := s.between(10*time.Second, 30*time.Second)
		if live := s.liveStart.Add(15 * time.Second).Sub(s.now); sb.pinned && live > delay {
			// An example re-creates once a watcher started with the demo can see it.
			delay = live
		}
		s.after(delay, "recreate "+pod, func(ctx context.Context) error { return s.recreate(ctx, sb, p) })
	case IPStale:
		s.after(s.between(10*time.Second, 40*time.Second), "ip moves "+pod, func(ctx context.Context) error { return s.moveIP(ctx, sb, p) })
	case PodGone:
		s.after(s.between(10*time.Second, 40*time.Second), "pool deletes "+pod, func(ctx context.Context) error { return s.poolDeletes(ctx, sb, p) })
	case FinalizerStuck:
		s.after(s.between(10*time.Second, 40*time.Second), "user deletes "+sb.name, func(ctx context.Context) error {
			return s.deleteHeld(ctx, sb)
		})
	case DeletedHeld:
		s.after(s.between(10*time.Second, 40*time.Second), "user deletes "+sb.name, func(ctx context.Context) error {
			return s.deleteStuck(ctx, sb)
		})
	}
}

// die ends the main container for good (restartPolicy Never): the Pod is
// Succeeded/Failed, the CNI frees its IP at once, the engine keeps it.
func (s *Sim) die(ctx context.Context, sb *sandbox, p *simPod, exit int32, reason string) error {
	if p.goneOrTerminating() {
		return nil
	}
	if err := s.endMain(ctx, p, exit, reason, true, "main exited"); err != nil {
		return err
	}
	s.freeIP(p)
	return s.reconcile(ctx, sb)
}

// endMain ends the main container with exit and reason (for good when
// terminal) and writes its last log line; what names the step in the
// operation log.
func (s *Sim) endMain(ctx context.Context, p *simPod, exit int32, reason string, terminal bool, what string) error {
	obj, err := s.mutatePod(ctx, p.obj, true, fmt.Sprintf("%s %d %s", what, exit, reason), func(pod *corev1.Pod) {
		s.statusTerminated(pod, exit, reason, terminal)
	})
	if err != nil {
		return err
	}
	p.obj = obj
	s.logEnd(obj, exit, reason)
	return nil
}

// oomKill: the kernel kills the main container (exit 137, OOMKilled) and
// the kubelet restarts it; it may happen again.
func (s *Sim) oomKill(ctx context.Context, sb *sandbox, p *simPod) error {
	if err := s.restart(ctx, sb, p, 137, "OOMKilled"); err != nil {
		return err
	}
	if p.obj != nil && p.obj.Status.ContainerStatuses[0].RestartCount < 2 && s.rng.Intn(2) == 0 {
		s.after(s.between(30*time.Second, 90*time.Second), "oom again "+p.obj.Name, func(ctx context.Context) error { return s.oomKill(ctx, sb, p) })
	}
	return nil
}

// restart terminates the main container with exit/reason and starts it again
// a second later (restartPolicy Always), leaving lastState behind.
func (s *Sim) restart(ctx context.Context, sb *sandbox, p *simPod, exit int32, reason string) error {
	if p.goneOrTerminating() {
		return nil
	}
	if err := s.endMain(ctx, p, exit, reason, false, "main terminated"); err != nil {
		return err
	}
	if err := s.reconcile(ctx, sb); err != nil {
		return err
	}
	s.after(time.Second, "restart "+p.obj.Name, func(ctx context.Context) error {
		if p.goneOrTerminating() {
			return nil
		}
		obj, err := s.mutatePod(ctx, p.obj, true, "restarted", func(pod *corev1.Pod) { s.statusRestarted(pod) })
		if err != nil {
			return err
		}
		p.obj = obj
		s.logRestart(obj)
		if n := obj.Status.ContainerStatuses[0].RestartCount; n >= 2 {
			// From the second restart on, the kubelet waits before starting it again.
			if err := s.kubeletEvent(ctx, sb, obj, corev1.EventTypeWarning, "BackOff",
				fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", obj.Spec.Containers[0].Name, obj.Name, obj.Namespace, obj.UID)); err != nil {
				return err
			}
		}
		if err := s.containerStarted(ctx, sb, obj, true); err != nil {
			return err
		}
		return s.reconcile(ctx, sb)
	})
	return nil
}

// livenessFailure is failed probe n of a blocked process. At the threshold the
// kubelet kills: Killing now, SIGKILL after the grace period (the blocked
// process ignores SIGTERM), so the container terminates at
// first failure + (failureThreshold-1) x period + grace.
func (s *Sim) livenessFailure(ctx context.Context, sb *sandbox, p *simPod, n int) error {
	if p.goneOrTerminating() {
		return nil
	}
	msg := fmt.Sprintf("Liveness probe failed: Get \"http://%s:8080/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)", p.ip)
	if err := s.recordEvent(ctx, sb, p.obj, corev1.EventTypeWarning, "Unhealthy", msg); err != nil {
		return err
	}
	if n < livenessThreshold {
		s.after(livenessPeriod*time.Second, "probe fails "+p.obj.Name, func(ctx context.Context) error {
			return s.livenessFailure(ctx, sb, p, n+1)
		})
		return nil
	}
	if err := s.recordEvent(ctx, sb, p.obj, corev1.EventTypeNormal, "Killing",
		"Container sandbox failed liveness probe, will be restarted"); err != nil {
		return err
	}
	s.after(livenessGrace*time.Second, "sigkill "+p.obj.Name, func(ctx context.Context) error {
		return s.restart(ctx, sb, p, 137, "Error")
	})
	return nil
}

// evict: node memory pressure; the kubelet evicts the Pod.
func (s *Sim) evict(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() {
		return nil
	}
	msg := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 87104Ki. Container sandbox was using 1874312Ki, request is 512Mi, has larger consumption of memory."
	if err := s.setMemoryPressure(ctx, p.node, true); err != nil {
		return err
	}
	if err := s.recordEvent(ctx, sb, p.obj, corev1.EventTypeWarning, "Evicted", msg); err != nil {
		return err
	}
	if err := s.recordEvent(ctx, sb, p.obj, corev1.EventTypeNormal, "Killing", "Stopping container sandbox"); err != nil {
		return err
	}
	obj, err := s.mutatePod(ctx, p.obj, true, "evicted", func(pod *corev1.Pod) {
		s.statusTerminated(pod, 137, "Error", true)
		pod.Status.Phase = corev1.PodFailed
		pod.Status.Reason = "Evicted"
		pod.Status.Message = msg
		c := podCondition(corev1.DisruptionTarget, true, s.now)
		c.Reason, c.Message = "TerminationByKubelet", msg
		setCondition(pod, c)
	})
	if err != nil {
		return err
	}
	p.obj = obj
	s.freeIP(p)
	s.after(2*time.Minute, "memory pressure ends", func(ctx context.Context) error { return s.setMemoryPressure(ctx, p.node, false) })
	return s.reconcile(ctx, sb)
}

// recreate deletes the Pod; the controller re-creates it under the same
// name, as the real one does: while the old Pod is Terminating it still
// counts and its IP stays in the endpoints (status Pending); once it is
// gone the controller writes endpoints [] and replicas 0, then creates the
// Pod again at once, unbound, with a new UID (endpoints [""], a second
// SuccessfulCreate), which the scheduler and kubelet then start.
func (s *Sim) recreate(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() || sb.deleting {
		return nil
	}
	obj, err := s.deletePodGracefully(ctx, p.obj)
	if err != nil {
		return err
	}
	p.obj = obj
	if err := s.reconcile(ctx, sb); err != nil {
		return err
	}
	s.after(s.between(2*time.Second, 5*time.Second), "kubelet removes "+p.obj.Name, s.guarded(sb, func(ctx context.Context) error {
		return s.replacePod(ctx, sb, p)
	}))
	return nil
}

// replacePod ends a Terminating Pod's deletion and lets the controller
// re-create it under the same name.
func (s *Sim) replacePod(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.obj == nil || sb.deleting {
		return nil
	}
	if _, err := s.deletePod(ctx, p.obj, false, ""); err != nil {
		return err
	}
	p.lastName, p.obj = p.obj.Name, nil
	s.freeIP(p)
	if err := s.reconcile(ctx, sb); err != nil { // endpoints [], replicas 0
		return err
	}
	index := 0
	for i, q := range sb.pods {
		if q == p {
			index = i
		}
	}
	if err := s.newSandboxPod(ctx, sb, index, s.rng.Intn(s.cfg.Nodes)); err != nil {
		return err
	}
	if sb.pinned {
		// Examples keep doing it, so a watcher started later sees one too.
		np := sb.pods[index]
		s.after(s.between(90*time.Second, 150*time.Second), "recreate again "+np.obj.Name, func(ctx context.Context) error {
			return s.recreate(ctx, sb, np)
		})
	}
	return nil
}

// moveIP gives a pool Pod a new IP (its pod sandbox was re-created); the
// engine is not told (the Pod is not owned by the BatchSandbox).
func (s *Sim) moveIP(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() {
		return nil
	}
	ip := s.ipam.allocate(p.node)
	if ip == "" {
		// No free address on the node: the pod sandbox waits for one.
		s.after(5*time.Second, "ip moves "+p.obj.Name, s.guarded(sb, func(ctx context.Context) error { return s.moveIP(ctx, sb, p) }))
		return nil
	}
	old := p.ip
	obj, err := s.mutatePod(ctx, p.obj, true, "pod IP "+old+" -> "+ip, func(pod *corev1.Pod) {
		pod.Status.PodIP = ip
		pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	})
	if err != nil {
		return err
	}
	p.obj, p.ip = obj, ip
	if !sb.pinned {
		s.ipam.releaseLast(p.node, old) // unheld for a while: IP_STALE, not at once IP_TAKEN
	} // an example's old address stays out of use: its IP_STALE must outlast the warm-up's churn
	return nil
}

// poolDeletes: the Pool recycles an allocated Pod (#954); the sandbox keeps
// listing it and its address.
func (s *Sim) poolDeletes(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.goneOrTerminating() {
		return nil
	}
	if _, err := s.deletePod(ctx, p.obj, false, ""); err != nil {
		return err
	}
	p.lastName, p.obj = p.name(), nil
	// Freed behind the others, so the gone Pod's address stays unheld for a
	// while (POD_GONE) before a new Pod may take it (then IP_TAKEN).
	s.ipam.releaseLast(p.node, p.ip)
	if p.pool != nil {
		p.pool.allocated--
		if err := s.writePoolStatus(ctx, p.pool); err != nil {
			return err
		}
	}
	return nil
}
