package sim

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/model"
)

// expireAgent plays the agent-sandbox controller when a Sandbox's
// shutdownTime passes (shutdownPolicy Retain): it deletes the Pod and wipes
// the status at once (no podIPs, selector, nodeName or service; Ready False
// SandboxExpired) while the Pod still terminates; the Sandbox stays. The
// kubelet ends the Pod a grace period later.
func (s *Sim) expireAgent(ctx context.Context, sb *sandbox) error {
	if sb.deleting || sb.gone || sb.obj == nil || sb.expired {
		return nil
	}
	sb.expired = true
	obj, err := s.mutateCR(ctx, AgentSandboxGVR(s.cfg.AgentVersion), sb.obj, true, "expired", func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{"conditions": []any{condition("Ready", "False", model.ReasonSandboxExpired,
			"Sandbox has expired", s.now)}}
	})
	if err != nil {
		return err
	}
	sb.obj = obj
	p := firstPod(sb)
	if p == nil {
		return nil
	}
	pod, err := s.deletePodGracefully(ctx, p.obj)
	if err != nil {
		return err
	}
	p.obj = pod
	s.after(s.between(15*time.Second, 25*time.Second), "kubelet ends "+pod.Name, func(ctx context.Context) error {
		if p.obj == nil {
			return nil
		}
		name := p.obj.Name
		if _, err := s.deletePod(ctx, p.obj, false, ""); err != nil {
			return err
		}
		p.lastName, p.obj = name, nil
		delete(s.podOwner, key(sb.ns, name))
		s.freeIP(p)
		return nil
	})
	return nil
}
