package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// The OpenSandbox Pool controller: pre-warmed Pods, allocation to pooled
// BatchSandboxes, and the Pool's status.

// createPooled allocates an idle pool Pod (or waits for one) to a new BatchSandbox.
func (s *Sim) createPooled(ctx context.Context, sb *sandbox) error {
	created, err := s.createCR(ctx, BatchSandboxGVR, s.newBatchSandbox(sb))
	if err != nil {
		return err
	}
	sb.obj = created
	return s.allocate(ctx, sb)
}

// allocate gives sb an idle Pod of its Pool, or warms one and tries again
// in a moment; the Pool then warms a replacement.
func (s *Sim) allocate(ctx context.Context, sb *sandbox) error {
	if sb.deleting || sb.gone {
		return nil
	}
	p := sb.pool
	if len(p.idle) == 0 {
		if p.warming == 0 {
			if err := s.addPoolPod(ctx, p); err != nil {
				return err
			}
		}
		s.after(2*time.Second, "allocate "+sb.name, s.guarded(sb, func(ctx context.Context) error { return s.allocate(ctx, sb) }))
		return nil
	}
	pp := p.idle[0]
	p.idle = p.idle[1:]
	p.allocated++
	sb.pods = []*simPod{pp}
	s.podOwner[key(pp.obj.Namespace, pp.obj.Name)] = sb
	// Newer controllers label the allocated Pod with the sandbox name.
	obj, err := s.mutatePod(ctx, pp.obj, false, "allocated to "+sb.name, func(pod *corev1.Pod) {
		pod.Labels[osv1.LabelBatchSandboxName] = sb.name
		pod.Labels[osv1.LabelSandboxID] = sb.id
	})
	if err != nil {
		return err
	}
	pp.obj = obj
	if err := s.writePoolStatus(ctx, p); err != nil {
		return err
	}
	if err := s.reconcileBatch(ctx, sb, true); err != nil {
		return err
	}
	if err := s.addPoolPod(ctx, p); err != nil {
		return err
	}
	s.onRunning(sb, pp)
	return nil
}

// addPoolPod creates a pre-warmed Pod of pool p.
func (s *Sim) addPoolPod(ctx context.Context, p *pool) error {
	sb := &sandbox{ns: p.ns, image: ImagePython, entrypoint: []string{"python3", "/srv/worker.py"}, tenant: "shared", restartPolicy: corev1.RestartPolicyNever}
	name := fmt.Sprintf("%s-%s", p.name, s.suffix())
	node := s.rng.Intn(s.cfg.Nodes)
	pod := s.podTemplate(sb, name, node)
	pod.Spec.NodeName = "" // bound later, by the scheduler (schedulePod)
	pod.Labels[osv1.LabelPoolName] = p.name
	pod.Labels[osv1.LabelPoolRevision] = p.revision
	pod.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: PoolGVR.GroupVersion().String(), Kind: "Pool", Name: p.name, UID: p.obj.GetUID(),
		Controller: ptr(true), BlockOwnerDeletion: ptr(true),
	}}
	created, err := s.createPod(ctx, pod)
	if err != nil {
		return err
	}
	pp := &simPod{obj: created, node: node, pool: p}
	p.warming++
	s.after(s.between(500*time.Millisecond, 1500*time.Millisecond), "schedule "+name, func(ctx context.Context) error {
		return s.schedulePod(ctx, nil, pp)
	})
	return s.writePoolStatus(ctx, p)
}

// suffix is a generateName-style 5-character suffix.
func (s *Sim) suffix() string {
	const chars = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = chars[s.rng.Intn(len(chars))]
	}
	return string(b)
}

// writePoolStatus writes the Pool's counters as its controller does.
func (s *Sim) writePoolStatus(ctx context.Context, p *pool) error {
	total := int64(len(p.idle) + p.warming + p.allocated)
	obj, err := s.mutateCR(ctx, PoolGVR, p.obj, true, "pool status", func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{
			"total": total, "allocated": int64(p.allocated), "available": int64(len(p.idle)),
			"revision": p.revision, "observedGeneration": u.GetGeneration(),
		}
	})
	if err != nil {
		return err
	}
	p.obj = obj
	return nil
}
