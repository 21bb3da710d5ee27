package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/model"
)

// The agent-sandbox extensions' controller (run with --extensions), as
// ../shared/facts/agent-sandbox-controller.md observes it: a
// SandboxWarmPool keeps spec.replicas Sandboxes <pool>-xxxxx owned by it
// and labelled with its hash; a SandboxClaim adopts a member that has
// podIPs (the Sandbox keeps its name and Pod, its ownerReference moves to
// the claim, the pool label goes, claim-uid is set; the claim gets the
// sandbox-name annotation and status.sandbox) and the pool replaces it at
// once; when no member has podIPs within 2 s the claim gets a new Sandbox
// named after it (cold). Pool status counts members and ready members only.
// A member not Ready 5 minutes after it was made is deleted and replaced at
// once (the controller measures from the Sandbox's creation).

// ExtensionGVR is an agent-sandbox extension resource at version.
func ExtensionGVR(resource, version string) schema.GroupVersionResource {
	return agentsandbox.Extension(resource, version)
}

// warmPool is a SandboxWarmPool and its free members.
type warmPool struct {
	ns, name string
	replicas int
	// stuck: its members' image never pulls (a pool running dry).
	stuck   bool
	obj     *unstructured.Unstructured
	members []*sandbox
}

// simClaim is a SandboxClaim.
type simClaim struct {
	ns, name string
	pool     *warmPool // nil: its warmPoolRef names no pool the simulation runs
	obj      *unstructured.Unstructured
	sb       *sandbox
	released bool // deleted: nothing more is done for it
}

func (s *Sim) extGVR(resource string) schema.GroupVersionResource {
	return ExtensionGVR(resource, s.cfg.AgentVersion)
}

// poolHash is the warm-pool-sandbox label value of a pool.
func poolHash(name string) string {
	sum := sha256.Sum256([]byte("warmpool/" + name))
	return hex.EncodeToString(sum[:4])
}

// setupWarmPools writes a template and two warm pools in the first
// namespace: agents-warm (healthy, with claims) and agents-dry (no node
// fits its members: they stay Pending with no IP, so its claim goes cold).
func (s *Sim) setupWarmPools(ctx context.Context) error {
	ns := s.cfg.Namespaces[0]
	tmplSb := &sandbox{ns: ns, image: ImagePython, entrypoint: []string{"python3", "-m", "http.server", "8080"}, tenant: "team-agents",
		restartPolicy: corev1.RestartPolicyNever}
	tmpl := s.podTemplate(tmplSb, "", 0)
	podSpec := toUnstructured(&tmpl.Spec)
	delete(podSpec, "nodeName")
	if _, err := s.createCR(ctx, s.extGVR(agentsandbox.ResourceTemplates), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": s.extGVR(agentsandbox.ResourceTemplates).GroupVersion().String(), "kind": agentsandbox.KindSandboxTemplate,
		"metadata": map[string]any{"name": "python-agent", "namespace": ns},
		"spec":     map[string]any{"podTemplate": map[string]any{"spec": podSpec}},
	}}); err != nil {
		return err
	}
	for _, wp := range []*warmPool{{ns: ns, name: "agents-warm", replicas: 3}, {ns: ns, name: "agents-dry", replicas: 1, stuck: true}} {
		obj, err := s.createCR(ctx, s.extGVR(agentsandbox.ResourceWarmPools), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": s.extGVR(agentsandbox.ResourceWarmPools).GroupVersion().String(), "kind": agentsandbox.KindSandboxWarmPool,
			"metadata": map[string]any{"name": wp.name, "namespace": ns},
			"spec":     map[string]any{"replicas": int64(wp.replicas), "sandboxTemplateRef": map[string]any{"name": "python-agent"}},
		}})
		if err != nil {
			return err
		}
		wp.obj = obj
		s.warmPools = append(s.warmPools, wp)
		for range wp.replicas {
			if err := s.addWarmMember(ctx, wp); err != nil {
				return err
			}
		}
		s.after(2*time.Second, "warm pool status "+wp.name, func(ctx context.Context) error { return s.warmPoolLoop(ctx, wp) })
	}
	// Users claim from the pools once members are warm.
	for i, c := range []struct{ name, pool string }{{"alice-session", "agents-warm"}, {"bob-session", "agents-warm"}, {"carol-session", "agents-dry"}} {
		wp := s.warmPools[0]
		if c.pool == "agents-dry" {
			wp = s.warmPools[1]
		}
		s.after(20*time.Second+time.Duration(i)*5*time.Second, "claim "+c.name, func(ctx context.Context) error { return s.createClaim(ctx, wp, c.name) })
	}
	return nil
}

// addWarmMember creates a pool member: a Sandbox <pool>-xxxxx owned by the
// pool, and its Pod.
func (s *Sim) addWarmMember(ctx context.Context, wp *warmPool) error {
	sb := &sandbox{engine: EngineAgent, scenario: Normal, ns: wp.ns, name: wp.name + "-" + s.suffix(), id: s.newUID(),
		tenant: "team-agents", image: ImagePython, entrypoint: []string{"python3", "-m", "http.server", "8080"},
		restartPolicy: corev1.RestartPolicyNever, pinned: true, events: map[eventKey]*corev1.Event{}, warmPool: wp, madeAt: s.now}
	wp.members = append(wp.members, sb)
	s.sandboxes[key(sb.ns, sb.name)] = sb
	return s.createAgent(ctx, sb, s.rng.Intn(s.cfg.Nodes))
}

// warmPoolReadinessGrace is how long after it was made a member may stay
// not Ready before the controller deletes and replaces it.
const warmPoolReadinessGrace = 5 * time.Minute

// warmPoolLoop replaces the members stuck unready and writes the pool's
// status (members, ready members) when it changed, every 2 s.
func (s *Sim) warmPoolLoop(ctx context.Context, wp *warmPool) error {
	s.after(2*time.Second, "warm pool status "+wp.name, func(ctx context.Context) error { return s.warmPoolLoop(ctx, wp) })
	for _, m := range slices.Clone(wp.members) {
		if !memberReady(m) && s.now.Sub(m.madeAt) > warmPoolReadinessGrace {
			if err := s.replaceMember(ctx, wp, m); err != nil {
				return err
			}
		}
	}
	ready := 0
	for _, m := range wp.members {
		if memberReady(m) {
			ready++
		}
	}
	status := map[string]any{"replicas": int64(len(wp.members)), "readyReplicas": int64(ready),
		"selector": agentsandbox.LabelWarmPoolSandbox + "=" + poolHash(wp.name)}
	if cur, ok := wp.obj.Object["status"].(map[string]any); ok && fmt.Sprint(cur["replicas"], cur["readyReplicas"]) == fmt.Sprint(status["replicas"], status["readyReplicas"]) {
		return nil
	}
	obj, err := s.mutateCR(ctx, s.extGVR(agentsandbox.ResourceWarmPools), wp.obj, true, fmt.Sprintf("ready %d/%d", ready, len(wp.members)), func(u *unstructured.Unstructured) {
		u.Object["status"] = status
	})
	if err != nil {
		return err
	}
	wp.obj = obj
	return nil
}

func memberReady(m *sandbox) bool {
	p := firstPod(m)
	return p != nil && podReady(p.obj)
}

// replaceMember plays the controller on a member stuck unready: it deletes
// the Sandbox (the garbage collector then deletes its Pod) and makes a new
// member at once.
func (s *Sim) replaceMember(ctx context.Context, wp *warmPool, m *sandbox) error {
	wp.members = slices.DeleteFunc(wp.members, func(x *sandbox) bool { return x == m })
	if err := s.deleteAgentSandbox(ctx, m); err != nil {
		return err
	}
	return s.addWarmMember(ctx, wp)
}

// deleteAgentSandbox deletes an agent Sandbox the simulation plays and,
// as the garbage collector would, its Pods, and forgets it. One already
// gone from the server is as good as deleted.
func (s *Sim) deleteAgentSandbox(ctx context.Context, sb *sandbox) error {
	sb.deleting = true
	if sb.obj != nil {
		if _, err := s.deleteCR(ctx, AgentSandboxGVR(s.cfg.AgentVersion), sb.obj, false, ""); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		sb.obj = nil
	}
	for _, p := range sb.pods {
		if err := s.releasePod(ctx, p); err != nil {
			return err
		}
	}
	s.forget(sb)
	return nil
}

func firstPod(sb *sandbox) *simPod {
	if len(sb.pods) == 0 || sb.pods[0] == nil || sb.pods[0].obj == nil {
		return nil
	}
	return sb.pods[0]
}

// createClaim writes a SandboxClaim on wp and plays its controller: adopt a
// member with podIPs (a ready one first), else, after 2 s, a cold Sandbox.
func (s *Sim) createClaim(ctx context.Context, wp *warmPool, name string) error {
	obj, err := s.createCR(ctx, s.extGVR(agentsandbox.ResourceClaims), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": s.extGVR(agentsandbox.ResourceClaims).GroupVersion().String(), "kind": agentsandbox.KindSandboxClaim,
		"metadata": map[string]any{"name": name, "namespace": wp.ns, "labels": map[string]any{"opensandbox.io/tenant": "team-agents"}},
		"spec":     map[string]any{"warmPoolRef": map[string]any{"name": wp.name}},
	}})
	if err != nil {
		return err
	}
	c := &simClaim{ns: wp.ns, name: name, pool: wp, obj: obj}
	s.claims[key(c.ns, c.name)] = c
	return s.serveClaim(ctx, c)
}

// serveClaim plays the controller on a new claim on its pool: adopt a
// member with podIPs (a ready one first), else, after 2 s, a cold Sandbox;
// a claim that sets env or volumeClaimTemplates gets a cold one at once.
func (s *Sim) serveClaim(ctx context.Context, c *simClaim) error {
	if hasField(c.obj, "spec", "env") || hasField(c.obj, "spec", "volumeClaimTemplates") {
		return s.coldSandbox(ctx, c)
	}
	if m := pickMember(c.pool); m != nil {
		return s.adoptMember(ctx, c, m)
	}
	s.after(2*time.Second, "claim "+c.name+" cold", func(ctx context.Context) error {
		if c.released {
			return nil
		}
		if m := pickMember(c.pool); m != nil {
			return s.adoptMember(ctx, c, m)
		}
		return s.coldSandbox(ctx, c)
	})
	return nil
}

func hasField(u *unstructured.Unstructured, path ...string) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return found
}

// adoptClaims is the extensions controller on the SandboxClaims of ns that
// others wrote (sandscope's create --warm-pool): a new one on a pool the
// simulation runs is served as the simulation's own claims are; one on
// another pool waits, bound to nothing. A claim deleted takes its Sandbox
// with it (the Sandbox is owned by it: the garbage collector's part).
func (s *Sim) adoptClaims(ctx context.Context, ns string) error {
	gvr := s.extGVR(agentsandbox.ResourceClaims)
	return s.pollList(ctx, gvr, ns, func(u *unstructured.Unstructured) error {
		c := s.claims[key(ns, u.GetName())]
		switch {
		case c == nil && u.GetDeletionTimestamp() == nil:
			if s.cfg.EmulateServer {
				// The UID the Sandbox's ownerReference and claim-uid name.
				stamped, err := s.mutateCR(ctx, gvr, u, false, "adopted", func(o *unstructured.Unstructured) { s.stampAdopted(o) })
				if err != nil {
					return err // tried again on the next poll
				}
				u = stamped
			}
			c = &simClaim{ns: ns, name: u.GetName(), obj: u}
			s.claims[key(ns, c.name)] = c
			pool, _, _ := unstructured.NestedString(u.Object, "spec", "warmPoolRef", "name")
			if c.pool = s.warmPool(ns, pool); c.pool != nil {
				return s.serveClaim(ctx, c)
			}
		case c != nil && u.GetDeletionTimestamp() != nil:
			return s.releaseClaim(ctx, c)
		}
		return nil
	}, func(listed map[string]bool) map[string]func() error {
		lost := map[string]func() error{}
		for k, c := range s.claims {
			if c.ns == ns && !listed[c.name] {
				lost[k] = func() error { return s.releaseClaim(ctx, c) }
			}
		}
		return lost
	})
}

// warmPool is the pool the simulation runs as ns/name, or nil.
func (s *Sim) warmPool(ns, name string) *warmPool {
	for _, wp := range s.warmPools {
		if wp.ns == ns && wp.name == name {
			return wp
		}
	}
	return nil
}

// releaseClaim: the claim is deleted, and with it the Sandbox it owns.
func (s *Sim) releaseClaim(ctx context.Context, c *simClaim) error {
	delete(s.claims, key(c.ns, c.name))
	c.released = true
	sb := c.sb
	if sb == nil || sb.gone || sb.deleting {
		return nil
	}
	return s.deleteAgentSandbox(ctx, sb)
}

// pickMember is a member that has podIPs, a ready one first.
func pickMember(wp *warmPool) *sandbox {
	var withIP *sandbox
	for _, m := range wp.members {
		p := firstPod(m)
		if p == nil || p.obj.Status.PodIP == "" {
			continue
		}
		if podReady(p.obj) {
			return m
		}
		if withIP == nil {
			withIP = m
		}
	}
	return withIP
}

func (s *Sim) claimOwnerRef(c *simClaim) []any {
	return []any{map[string]any{"apiVersion": c.obj.GetAPIVersion(), "kind": agentsandbox.KindSandboxClaim, "name": c.name,
		"uid": string(c.obj.GetUID()), "controller": true, "blockOwnerDeletion": true}}
}

// adoptMember hands member m to claim c and has the pool replace it.
func (s *Sim) adoptMember(ctx context.Context, c *simClaim, m *sandbox) error {
	for i, x := range c.pool.members {
		if x == m {
			c.pool.members = append(c.pool.members[:i:i], c.pool.members[i+1:]...)
		}
	}
	m.warmPool, c.sb = nil, m
	obj, err := s.mutateCR(ctx, AgentSandboxGVR(s.cfg.AgentVersion), m.obj, false, "adopted by "+c.name, func(u *unstructured.Unstructured) {
		meta := u.Object["metadata"].(map[string]any)
		meta["ownerReferences"] = s.claimOwnerRef(c)
		labels := u.GetLabels()
		delete(labels, agentsandbox.LabelWarmPoolSandbox)
		labels[agentsandbox.LabelClaimUID] = string(c.obj.GetUID())
		u.SetLabels(labels)
	})
	if err != nil {
		return err
	}
	m.obj = obj
	if err := s.bindClaim(ctx, c, m, "SandboxAdopted"); err != nil {
		return err
	}
	return s.addWarmMember(ctx, c.pool) // the pool replaces it at once
}

// coldSandbox makes the claim its own Sandbox, named after it.
func (s *Sim) coldSandbox(ctx context.Context, c *simClaim) error {
	sb := &sandbox{engine: EngineAgent, scenario: Normal, ns: c.ns, name: c.name, id: s.newUID(),
		tenant: "team-agents", image: ImagePython, entrypoint: []string{"python3", "-m", "http.server", "8080"},
		restartPolicy: corev1.RestartPolicyNever, pinned: true, events: map[eventKey]*corev1.Event{}, claim: c}
	s.sandboxes[key(sb.ns, sb.name)] = sb
	c.sb = sb
	if err := s.createAgent(ctx, sb, s.rng.Intn(s.cfg.Nodes)); err != nil {
		return err
	}
	return s.bindClaim(ctx, c, sb, "SandboxProvisioned")
}

// bindClaim writes what the claim controller writes on the claim.
func (s *Sim) bindClaim(ctx context.Context, c *simClaim, sb *sandbox, reason string) error {
	gvr := s.extGVR(agentsandbox.ResourceClaims)
	obj, err := s.mutateCR(ctx, gvr, c.obj, false, "sandbox "+sb.name, func(u *unstructured.Unstructured) {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[agentsandbox.AnnotationSandboxName] = sb.name
		u.SetAnnotations(ann)
	})
	if err != nil {
		return err
	}
	var ips []any
	ready := "False"
	if p := firstPod(sb); p != nil && p.obj.Status.PodIP != "" {
		ips = []any{p.obj.Status.PodIP}
		if podReady(p.obj) {
			ready = "True"
		}
	}
	obj, err = s.mutateCR(ctx, gvr, obj, true, reason, func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{
			"sandbox":    map[string]any{"name": sb.name, "podIPs": ips},
			"conditions": []any{condition("Ready", ready, reason, reason, s.now)},
		}
	})
	if err != nil {
		return err
	}
	c.obj = obj
	return nil
}

// agentOwner is the ownerReference and labels a Sandbox the extensions
// made carries: its pool's or its claim's.
func (s *Sim) agentOwner(sb *sandbox, u *unstructured.Unstructured) {
	switch {
	case sb.warmPool != nil:
		yes := true
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: sb.warmPool.obj.GetAPIVersion(), Kind: model.KindSandboxWarmPool,
			Name: sb.warmPool.name, UID: sb.warmPool.obj.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}})
		labels := u.GetLabels()
		labels[agentsandbox.LabelWarmPoolSandbox] = poolHash(sb.warmPool.name)
		u.SetLabels(labels)
	case sb.claim != nil:
		u.Object["metadata"].(map[string]any)["ownerReferences"] = s.claimOwnerRef(sb.claim)
	}
}
