package sim

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Deletion: a user's DELETE, deletions held by a finalizer or a slow
// kubelet, and the teardown once nothing holds them.

// userDelete deletes a sandbox and its Pods, as the server's DELETE does.
func (s *Sim) userDelete(ctx context.Context, sb *sandbox) error {
	if sb.deleting || sb.gone {
		return nil
	}
	sb.deleting = true
	return s.teardown(ctx, sb)
}

// deleteHeld: the user deletes a BatchSandbox whose finalizer is never
// removed (its Pool is gone, PR #1657): Pods go, the object stays Terminating.
func (s *Sim) deleteHeld(ctx context.Context, sb *sandbox) error {
	if sb.deleting || sb.gone || sb.obj == nil {
		return nil
	}
	sb.deleting = true
	for _, p := range sb.pods {
		if err := s.releasePod(ctx, p); err != nil {
			return err
		}
	}
	fin := osv1.FinalizerTaskCleanup
	if sb.pool != nil {
		fin = osv1.FinalizerPoolAllocation
	}
	obj, err := s.deleteCR(ctx, BatchSandboxGVR, sb.obj, true, fin)
	if err != nil {
		return err
	}
	sb.obj = obj
	s.releaseHeldAfter(sb, 10*time.Minute, 20*time.Minute, "finalizer released")
	return nil
}

// deleteStuck: the user deletes a sandbox whose Pod cannot finish
// terminating (its init image still pulls: the main container stays in
// PodInitializing; or a slow kubelet). The BatchSandbox goes at once
// unless a task's cleanup finalizer holds it; the Pod stays Terminating.
func (s *Sim) deleteStuck(ctx context.Context, sb *sandbox) error {
	if sb.deleting || sb.gone {
		return nil
	}
	sb.deleting = true
	for _, p := range sb.pods {
		if p == nil || p.obj == nil {
			continue
		}
		obj, err := s.deletePod(ctx, p.obj, true, FinalizerImagePullHold)
		if err != nil {
			return err
		}
		if obj != nil {
			p.obj = obj
		}
	}
	if sb.obj != nil {
		// Only a BatchSandbox with a task carries the task-cleanup
		// finalizer; any other goes at once, leaving its Pods Terminating
		// without an owner (the pile-up of deleted sandboxes' Pods).
		hold := sb.engine == EngineBatch && sb.hasTask()
		obj, err := s.deleteCR(ctx, s.objectGVR(sb), sb.obj, hold, osv1.FinalizerTaskCleanup)
		if err != nil {
			return err
		}
		sb.obj = obj
		if !hold {
			sb.obj = nil
		}
	}
	s.releaseHeldAfter(sb, 15*time.Minute, 30*time.Minute, "image pull ends")
	return nil
}

// releaseHeldAfter schedules the end of sb's held deletion lo..hi from now;
// an example's stays held.
func (s *Sim) releaseHeldAfter(sb *sandbox, lo, hi time.Duration, what string) {
	if sb.pinned {
		return
	}
	s.after(s.between(lo, hi), what+" "+sb.name, func(ctx context.Context) error {
		return s.releaseHeld(ctx, sb)
	})
}

// releaseHeld lets go of everything a held deletion kept.
func (s *Sim) releaseHeld(ctx context.Context, sb *sandbox) error {
	if sb.gone {
		return nil
	}
	return s.teardown(ctx, sb)
}

// teardown deletes a sandbox's Pods (recycling pool Pods) and its object,
// and forgets it: what the server's DELETE does once nothing holds it.
func (s *Sim) teardown(ctx context.Context, sb *sandbox) error {
	for _, p := range sb.pods {
		if err := s.releasePod(ctx, p); err != nil {
			return err
		}
	}
	if sb.obj != nil {
		if _, err := s.deleteCR(ctx, s.objectGVR(sb), sb.obj, false, ""); err != nil {
			return err
		}
	}
	s.forget(sb)
	return nil
}

// releasePod deletes a sandbox's Pod; a pool Pod is recycled (deleted, and the
// Pool warms a new one).
func (s *Sim) releasePod(ctx context.Context, p *simPod) error {
	if p == nil || p.obj == nil {
		return nil
	}
	name := p.obj.Name
	if _, err := s.deletePod(ctx, p.obj, false, ""); err != nil {
		return err
	}
	p.lastName, p.obj = name, nil
	delete(s.podOwner, key(s.podNS(p), name))
	s.freeIP(p)
	if p.pool != nil {
		p.pool.allocated--
		return s.writePoolStatus(ctx, p.pool)
	}
	return nil
}

// podNS is the namespace of a Pod the simulator made.
func (s *Sim) podNS(p *simPod) string {
	if p.pool != nil {
		return p.pool.ns
	}
	for _, sb := range s.sandboxes {
		for _, q := range sb.pods {
			if q == p {
				return sb.ns
			}
		}
	}
	return ""
}

// forget drops a deleted sandbox from the simulator's books.
func (s *Sim) forget(sb *sandbox) {
	sb.gone = true
	delete(s.sandboxes, key(sb.ns, sb.name))
	for _, p := range sb.pods {
		if p != nil {
			delete(s.podOwner, key(sb.ns, p.name()))
		}
	}
}

// objectGVR is the resource of sb's engine object.
func (s *Sim) objectGVR(sb *sandbox) schema.GroupVersionResource {
	if sb.engine == EngineAgent {
		return AgentSandboxGVR(s.cfg.AgentVersion)
	}
	return BatchSandboxGVR
}
