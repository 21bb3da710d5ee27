package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Creating sandboxes: the churn's draws and what the sandbox server and the
// engines' controllers write for a new sandbox.

// createOpts describe a sandbox to create.
type createOpts struct {
	engine   Engine
	scenario Scenario
	node     int // -1: any
	pinned   bool
	lifetime time.Duration
}

// churnInterval is the wait until the next churned sandbox, around
// Config.ChurnPerHour.
func (s *Sim) churnInterval() time.Duration {
	mean := time.Hour / time.Duration(s.cfg.ChurnPerHour)
	return s.between(mean/2, mean*3/2)
}

// churn creates a sandbox of a drawn engine and scenario, with a drawn
// lifetime, and schedules the next one.
func (s *Sim) churn(ctx context.Context) error {
	s.after(s.churnInterval(), "churn", s.churn)
	eng := s.pickEngine()
	sc := s.pickScenario(eng)
	return s.createSandbox(ctx, createOpts{engine: eng, scenario: sc, node: -1, lifetime: s.between(s.cfg.LifetimeMin, s.cfg.LifetimeMax)})
}

// createSandbox creates a sandbox as the sandbox server does (its engine
// object, or a plain Pod) and schedules its user's delete at the end of its
// lifetime.
func (s *Sim) createSandbox(ctx context.Context, o createOpts) error {
	ns := s.cfg.Namespaces[s.rng.Intn(len(s.cfg.Namespaces))]
	sb := &sandbox{
		engine: o.engine, scenario: o.scenario, ns: ns, id: s.newUID(),
		tenant: tenants[s.rng.Intn(len(tenants))], requestID: s.hex(24),
		image: ImagePython, entrypoint: []string{"python3", "-m", "http.server", "8080"},
		restartPolicy: corev1.RestartPolicyNever, pinned: o.pinned, events: map[eventKey]*corev1.Event{},
	}
	switch o.engine {
	case EngineBatch, EnginePooled:
		sb.name = sb.id
	case EngineAgent:
		sb.name = "agent-" + sb.id[:8]
	case EnginePod:
		sb.name = "code-runner-" + sb.id[:8]
	}
	switch o.scenario {
	case InstantDeath:
		sb.image, sb.entrypoint = ImageBashBox, []string{"/usr/bin/tini", "--", "bash"}
	case OOMKill, UnexplainedRestart:
		sb.restartPolicy = corev1.RestartPolicyAlways
		sb.entrypoint = []string{"python3", "/srv/train_step.py", "--batch", "256"}
	case LivenessKill:
		sb.restartPolicy, sb.liveness = corev1.RestartPolicyAlways, true
		sb.image, sb.entrypoint = ImageScorer, []string{"uvicorn", "scorer.app:app", "--host", "0.0.0.0", "--port", "8080"}
	case KeepAlive:
		sb.image, sb.entrypoint = ImageTrainer, keepAlive
	case UnreadableImage:
		sb.image, sb.entrypoint = ImageUnreachable, []string{"sleep", "infinity"}
	case FailedSticky:
		sb.image = ImageMissing
	case NoExecd:
		sb.noBootstrap, sb.execdDown = true, true
	case FinalizerStuck:
		sb.task = true // its task-cleanup finalizer is what holds it
	case ExpiringSoon:
		if o.engine == EngineAgent {
			// An agent Sandbox that expires minutes into the simulation and
			// stays (shutdownPolicy Retain): its controller wipes the status.
			exp := s.now.Add(2 * time.Minute)
			sb.expire, sb.pinned = &exp, true
			break
		}
		exp := s.now.Add(9 * time.Minute)
		sb.expire = &exp
		if o.lifetime > 9*time.Minute || o.lifetime == 0 {
			o.lifetime = 9 * time.Minute
		}
		sb.pinned = false
	}
	if o.engine == EnginePooled {
		sb.pool = s.pools[ns]
		if sb.pool == nil {
			sb.engine, sb.pool = EngineBatch, nil
		}
	}
	s.sandboxes[key(sb.ns, sb.name)] = sb
	node := o.node
	if node < 0 {
		node = s.rng.Intn(s.cfg.Nodes)
	}

	var err error
	switch sb.engine {
	case EngineBatch:
		err = s.createBatch(ctx, sb, node)
	case EnginePooled:
		err = s.createPooled(ctx, sb)
	case EngineAgent:
		err = s.createAgent(ctx, sb, node)
	case EnginePod:
		err = s.createPlain(ctx, sb, node)
	}
	if err != nil {
		delete(s.sandboxes, key(sb.ns, sb.name))
		return err
	}
	if !sb.pinned && o.lifetime > 0 {
		s.after(o.lifetime, "user deletes "+sb.name, func(ctx context.Context) error { return s.userDelete(ctx, sb) })
	}
	return nil
}

func (s *Sim) createBatch(ctx context.Context, sb *sandbox, node int) error {
	if sb.scenario == ExpiringSoon {
		// Created long ago, minutes from its expiry: a sandbox is not
		// EXPIRING_SOON at birth, however short its lifetime.
		s.backdate = 50 * time.Minute
		defer func() { s.backdate = 0 }()
	}
	obj := s.newBatchSandbox(sb)
	if sb.scenario == BadAnnotation {
		ann := obj.GetAnnotations()
		ann[osv1.AnnotationEndpoints] = `["10.244.3.17"` // truncated JSON, as a broken writer would leave it
		obj.SetAnnotations(ann)
	}
	created, err := s.createCR(ctx, BatchSandboxGVR, obj)
	if err != nil {
		return err
	}
	sb.obj = created
	return s.newSandboxPod(ctx, sb, 0, node)
}

func (s *Sim) createAgent(ctx context.Context, sb *sandbox, node int) error {
	created, err := s.createCR(ctx, AgentSandboxGVR(s.cfg.AgentVersion), s.newAgentSandbox(sb))
	if err != nil {
		return err
	}
	sb.obj = created
	if sb.expire != nil {
		s.after(sb.expire.Sub(s.now), "shutdownTime of "+sb.name, s.guarded(sb, func(ctx context.Context) error { return s.expireAgent(ctx, sb) }))
	}
	return s.newSandboxPod(ctx, sb, 0, node)
}

func (s *Sim) createPlain(ctx context.Context, sb *sandbox, node int) error {
	return s.newSandboxPod(ctx, sb, 0, node)
}

// newSandboxPod creates the Pod of slot index for a non-pooled BatchSandbox,
// an agent Sandbox or a plain Pod sandbox, and starts it.
func (s *Sim) newSandboxPod(ctx context.Context, sb *sandbox, index, node int) error {
	var podName string
	var pod *corev1.Pod
	switch sb.engine {
	case EngineBatch:
		podName = fmt.Sprintf("%s-%d", sb.name, index)
		pod = s.podFor(sb, podName, node)
		if !sb.adopted {
			// The controller copies the template's metadata verbatim and adds
			// nothing but its own two labels: the template has these labels
			// and no annotations (newBatchSandbox).
			pod.Labels, pod.Annotations = s.sandboxLabels(sb), nil
		}
		pod.GenerateName = sb.name + "-"
		pod.Labels[osv1.LabelBatchSandboxName] = sb.name
		pod.Labels[osv1.LabelPodIndex] = fmt.Sprint(index)
		pod.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: BatchSandboxGVR.GroupVersion().String(), Kind: "BatchSandbox", Name: sb.name, UID: sb.obj.GetUID(),
			Controller: ptr(true), BlockOwnerDeletion: ptr(true),
		}}
	case EngineAgent:
		podName = sb.name
		pod = s.podFor(sb, podName, node)
		pod.Labels[agentsandbox.LabelNameHash] = nameHash(sb.name)
		pod.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: AgentSandboxGVR(s.cfg.AgentVersion).GroupVersion().String(), Kind: "Sandbox", Name: sb.name, UID: sb.obj.GetUID(),
			Controller: ptr(true), BlockOwnerDeletion: ptr(true),
		}}
	case EnginePod:
		podName = sb.name
		pod = s.podTemplate(sb, podName, node)
		pod.Labels[osv1.LabelSandboxID] = sb.id
		pod.Labels["app"] = "code-runner"
	}
	// Created unbound: the scheduler binds it later (schedulePod).
	pod.Spec.NodeName = ""
	created, err := s.createPod(ctx, pod)
	if err != nil {
		return err
	}
	p := &simPod{obj: created, node: node}
	for len(sb.pods) <= index {
		sb.pods = append(sb.pods, nil)
	}
	sb.pods[index] = p
	s.podOwner[key(sb.ns, podName)] = sb
	if sb.engine == EngineBatch {
		// The controller records each Pod it creates (a re-created Pod's
		// name a second time) and reconciles at once: endpoints [""].
		if err := s.controllerEvent(ctx, sb, "SuccessfulCreate", "Created pod: "+podName); err != nil {
			return err
		}
		if err := s.reconcile(ctx, sb); err != nil {
			return err
		}
	}
	s.after(s.between(500*time.Millisecond, 1500*time.Millisecond), "schedule "+podName, s.guarded(sb, func(ctx context.Context) error {
		return s.schedulePod(ctx, sb, p)
	}))
	return nil
}

// nameHash is the agent-sandbox controller's name-hash label value.
func nameHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
}
