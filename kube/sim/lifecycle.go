package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Scenario is the life cycle a sandbox is given when it is created.
type Scenario string

const (
	Normal             Scenario = "normal"              // runs until its user deletes it
	InstantDeath       Scenario = "instant-death"       // `tini -- bash` without a TTY: exits 0 at once; the engine keeps the IP
	OOMKill            Scenario = "oom-kill"            // killed by the kernel: exit 137, OOMKilled, restarted
	LivenessKill       Scenario = "liveness-kill"       // blocks; Unhealthy x3, Killing, SIGKILL after the grace period, restarted
	Evicted            Scenario = "evicted"             // node memory pressure: Pod Failed, reason Evicted, DisruptionTarget
	StuckTerminating   Scenario = "stuck-terminating"   // deleted while its init image still pulls: Terminating, main in PodInitializing
	KeepAlive          Scenario = "keep-alive"          // osv1.BootstrapPath.sh tail -f /dev/null on an image with an ENTRYPOINT
	UnreadableImage    Scenario = "unreadable-image"    // keep-alive on an image whose registry does not answer
	Recreated          Scenario = "recreated"           // its Pod is re-created under the same name (new UID)
	IPStale            Scenario = "ip-stale"            // its (pool) Pod moves to another IP; the engine keeps the old one
	PodGone            Scenario = "pod-gone"            // the Pool deletes its Pod; the sandbox still lists it
	FinalizerStuck     Scenario = "finalizer-stuck"     // the BatchSandbox stays Terminating on a finalizer
	FailedSticky       Scenario = "failed-sticky"       // ImagePullBackOff -> Failed, then the Pod runs; Failed stays
	NoExecd            Scenario = "no-execd"            // template without osv1.BootstrapPath.sh: Ready, but execd never starts
	ExpiringSoon       Scenario = "expiring-soon"       // spec.expireTime minutes away
	BadAnnotation      Scenario = "bad-annotation"      // endpoints annotation is not valid JSON
	UnexplainedRestart Scenario = "unexplained-restart" // exit 2, nothing explains it
	DeletedHeld        Scenario = "deleted-held"        // deleted while running: gone at once, its Pod held Terminating (a slow kubelet)
)

// Scenarios lists every scenario, in a fixed order.
func Scenarios() []Scenario {
	return []Scenario{Normal, InstantDeath, OOMKill, LivenessKill, Evicted, StuckTerminating, KeepAlive,
		UnreadableImage, Recreated, IPStale, PodGone, FinalizerStuck, FailedSticky, NoExecd, ExpiringSoon,
		BadAnnotation, UnexplainedRestart, DeletedHeld}
}

// churnWeights: how often each scenario is drawn for a churned sandbox.
var churnWeights = []struct {
	s Scenario
	w int
}{
	{Normal, 60}, {InstantDeath, 12}, {OOMKill, 3}, {LivenessKill, 2}, {Evicted, 2}, {StuckTerminating, 2},
	{KeepAlive, 6}, {UnreadableImage, 2}, {Recreated, 3}, {IPStale, 2}, {PodGone, 1}, {FinalizerStuck, 1},
	{FailedSticky, 1}, {NoExecd, 1}, {ExpiringSoon, 2}, {UnexplainedRestart, 1},
}

// Engine of a simulated sandbox.
type Engine string

const (
	EngineBatch  Engine = "bsbx"   // non-pooled BatchSandbox
	EnginePooled Engine = "pooled" // BatchSandbox allocated from a Pool
	EngineAgent  Engine = "agent"  // agent-sandbox Sandbox
	EnginePod    Engine = "pod"    // plain labelled Pod
)

// Liveness probe of the liveness scenario (numbers of a real liveness kill).
const (
	livenessPeriod    = 10
	livenessThreshold = 3
	livenessGrace     = 30
)

type sandbox struct {
	engine        Engine
	scenario      Scenario
	ns, name, id  string
	tenant        string
	requestID     string
	image         string
	entrypoint    []string
	noBootstrap   bool
	liveness      bool
	restartPolicy corev1.RestartPolicy
	task          bool // written with a spec.taskTemplate (see hasTask)
	expire        *time.Time
	pinned        bool // an example: never deleted by its user
	pool          *pool

	// adopted: the object was written by someone else (sandscope's create)
	// and the simulator plays its engine; template is the Pod template it
	// carries (nil for a pooled sandbox).
	adopted  bool
	template *corev1.PodTemplateSpec

	obj         *unstructured.Unstructured // the engine object as last written (nil for plain Pods)
	pods        []*simPod                  // slot i <-> pod index i
	failedStuck bool                       // BatchSandbox phase Failed, sticky
	failedMsg   string                     // its PodFailed summary, as first written
	execdDown   bool
	deleting    bool
	gone        bool
	events      map[eventKey]*corev1.Event
}

type simPod struct {
	obj      *corev1.Pod // as last written; nil once deleted
	lastName string      // the Pod's name after it was deleted
	node     int
	ip       string
	pool     *pool // owning Pool, for pool Pods
}

type pool struct {
	ns, name, revision string
	obj                *unstructured.Unstructured
	idle               []*simPod // Running, not allocated
	warming            int       // created, not yet Running
	allocated          int
}

func key(ns, name string) string { return ns + "/" + name }

func (s *Sim) nodeName(i int) string { return fmt.Sprintf("%s%d", s.cfg.NodePrefix, i) }
func (s *Sim) hostIP(i int) string   { return fmt.Sprintf("192.168.10.%d", 10+i) }

func intOrString(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }

// --- setup ---

func (s *Sim) setup(ctx context.Context) error {
	for _, ns := range s.cfg.Namespaces {
		nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		s.stamp(nsObj)
		if _, err := s.kube.CoreV1().Namespaces().Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	for i := range s.cfg.Nodes {
		if err := s.ensureNode(ctx, i); err != nil {
			return err
		}
	}
	if s.cfg.PoolBuffer > 0 {
		for _, ns := range s.cfg.Namespaces {
			p := &pool{ns: ns, name: "warm-python", revision: "7d9f8c6b5"}
			obj, err := s.createCR(ctx, PoolGVR, s.newPool(p))
			if err != nil {
				return err
			}
			p.obj = obj
			s.pools[ns] = p
			for range s.cfg.PoolBuffer {
				if err := s.addPoolPod(ctx, p); err != nil {
					return err
				}
			}
		}
	}
	if s.cfg.Examples {
		s.seedExamples()
	}
	if s.cfg.ChurnPerHour > 0 {
		s.after(s.churnInterval(), "churn", s.churn)
	}
	if s.cfg.AdoptEvery > 0 {
		// Nobody else writes into the fleet during the warm-up (it is played
		// at once): adoption starts with the live simulation.
		s.after(s.liveStart.Sub(s.now), "adopt", s.adoptPoll)
	}
	return nil
}

func (s *Sim) ensureNode(ctx context.Context, i int) error {
	name := s.nodeName(i)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node-role.kubernetes.io/sandbox": "",
		}},
		Spec: corev1.NodeSpec{PodCIDR: s.podCIDR(i), PodCIDRs: []string{s.podCIDR(i)}},
	}
	s.stamp(node)
	created, err := s.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	s.op("create", "nodes", "", name, "")
	created.Status = corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: s.hostIP(i)}, {Type: corev1.NodeHostName, Address: name}},
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
				LastHeartbeatTime: metav1.NewTime(s.now), LastTransitionTime: metav1.NewTime(s.now)},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				LastHeartbeatTime: metav1.NewTime(s.now), LastTransitionTime: metav1.NewTime(s.now)},
		},
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
	}
	created.Status.Allocatable = created.Status.Capacity
	if _, err := s.kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("writing node %s status: %w", name, err)
	}
	s.op("status", "nodes", "", name, "Ready")
	return nil
}

// podCIDR is the node's range as written into Node.spec.podCIDR.
func (s *Sim) podCIDR(i int) string {
	first, _ := netip.ParseAddr(s.ipam.first(i))
	bits := 32
	for size := 1; size < s.ipam.stride; size *= 2 {
		bits--
	}
	p, _ := first.Prefix(bits)
	return p.String()
}

// --- creating sandboxes ---

type createOpts struct {
	engine   Engine
	scenario Scenario
	node     int // -1: any
	pinned   bool
	lifetime time.Duration
}

func (s *Sim) churnInterval() time.Duration {
	mean := time.Hour / time.Duration(s.cfg.ChurnPerHour)
	return s.between(mean/2, mean*3/2)
}

func (s *Sim) churn(ctx context.Context) error {
	s.after(s.churnInterval(), "churn", s.churn)
	eng := s.pickEngine()
	sc := s.pickScenario(eng)
	return s.createSandbox(ctx, createOpts{engine: eng, scenario: sc, node: -1, lifetime: s.between(s.cfg.LifetimeMin, s.cfg.LifetimeMax)})
}

func (s *Sim) pickEngine() Engine {
	m := s.cfg.Mix
	if s.cfg.PoolBuffer < 0 {
		m.Pooled = 0
	}
	total := m.BatchSandbox + m.Pooled + m.Agent + m.PlainPod
	if total <= 0 {
		return EngineBatch
	}
	n := s.rng.Intn(total)
	switch {
	case n < m.BatchSandbox:
		return EngineBatch
	case n < m.BatchSandbox+m.Pooled:
		return EnginePooled
	case n < m.BatchSandbox+m.Pooled+m.Agent:
		return EngineAgent
	}
	return EnginePod
}

func (s *Sim) pickScenario(eng Engine) Scenario {
	total := 0
	for _, w := range churnWeights {
		total += w.w
	}
	n := s.rng.Intn(total)
	var sc Scenario
	for _, w := range churnWeights {
		if n < w.w {
			sc = w.s
			break
		}
		n -= w.w
	}
	if !supports(eng, sc) {
		return Normal
	}
	return sc
}

// supports says which scenarios make sense for an engine.
func supports(eng Engine, sc Scenario) bool {
	switch sc {
	case IPStale, PodGone:
		return eng == EnginePooled
	case NoExecd, DeletedHeld:
		return eng == EngineBatch
	case FinalizerStuck, FailedSticky, ExpiringSoon, BadAnnotation:
		return eng == EngineBatch || eng == EnginePooled
	case StuckTerminating, KeepAlive, UnreadableImage:
		return eng != EnginePooled
	case Recreated:
		return eng == EngineBatch || eng == EnginePod
	}
	return true
}

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

func nameHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
}

func (s *Sim) createAgent(ctx context.Context, sb *sandbox, node int) error {
	created, err := s.createCR(ctx, AgentSandboxGVR(s.cfg.AgentVersion), s.newAgentSandbox(sb))
	if err != nil {
		return err
	}
	sb.obj = created
	return s.newSandboxPod(ctx, sb, 0, node)
}

func (s *Sim) createPlain(ctx context.Context, sb *sandbox, node int) error {
	return s.newSandboxPod(ctx, sb, 0, node)
}

// createPooled allocates an idle pool Pod (or waits for one) to a new BatchSandbox.
func (s *Sim) createPooled(ctx context.Context, sb *sandbox) error {
	created, err := s.createCR(ctx, BatchSandboxGVR, s.newBatchSandbox(sb))
	if err != nil {
		return err
	}
	sb.obj = created
	return s.allocate(ctx, sb)
}

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

// --- the kubelet: scheduling and starting a Pod ---

// schedulePod gives the Pod an IP on its node and starts its init container.
// sb is nil for an unallocated pool Pod.
func (s *Sim) schedulePod(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
		return nil
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

func (s *Sim) startPod(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
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

// --- life-cycle steps ---

// die ends the main container for good (restartPolicy Never): the Pod is
// Succeeded/Failed, the CNI frees its IP at once, the engine keeps it.
func (s *Sim) die(ctx context.Context, sb *sandbox, p *simPod, exit int32, reason string) error {
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
		return nil
	}
	obj, err := s.mutatePod(ctx, p.obj, true, fmt.Sprintf("main exited %d %s", exit, reason), func(pod *corev1.Pod) {
		s.statusTerminated(pod, exit, reason, true)
	})
	if err != nil {
		return err
	}
	p.obj = obj
	s.logEnd(obj, exit, reason)
	s.freeIP(p)
	return s.reconcile(ctx, sb)
}

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
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
		return nil
	}
	obj, err := s.mutatePod(ctx, p.obj, true, fmt.Sprintf("main terminated %d %s", exit, reason), func(pod *corev1.Pod) {
		s.statusTerminated(pod, exit, reason, false)
	})
	if err != nil {
		return err
	}
	p.obj = obj
	s.logEnd(obj, exit, reason)
	if err := s.reconcile(ctx, sb); err != nil {
		return err
	}
	s.after(time.Second, "restart "+p.obj.Name, func(ctx context.Context) error {
		if p.obj == nil || p.obj.DeletionTimestamp != nil {
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
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
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
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
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

func (s *Sim) setMemoryPressure(ctx context.Context, n int, on bool) error {
	nodes := s.kube.CoreV1().Nodes()
	node, err := nodes.Get(ctx, s.nodeName(n), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s: %w", s.nodeName(n), err)
	}
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Type != corev1.NodeMemoryPressure {
			continue
		}
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"
		if on {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"
		}
		c.LastTransitionTime, c.LastHeartbeatTime = metav1.NewTime(s.now), metav1.NewTime(s.now)
	}
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("writing node %s status: %w", node.Name, err)
	}
	s.op("status", "nodes", "", node.Name, fmt.Sprintf("MemoryPressure=%v", on))
	return nil
}

// recreate deletes the Pod; the controller re-creates it under the same
// name, as the real one does: while the old Pod is Terminating it still
// counts and its IP stays in the endpoints (status Pending); once it is
// gone the controller writes endpoints [] and replicas 0, then creates the
// Pod again at once, unbound, with a new UID (endpoints [""], a second
// SuccessfulCreate), which the scheduler and kubelet then start.
func (s *Sim) recreate(ctx context.Context, sb *sandbox, p *simPod) error {
	if p.obj == nil || p.obj.DeletionTimestamp != nil || sb.deleting {
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
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
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
	if p.obj == nil || p.obj.DeletionTimestamp != nil {
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

// --- the engines' reconcile ---

func (s *Sim) reconcile(ctx context.Context, sb *sandbox) error {
	if sb == nil || sb.gone {
		return nil
	}
	switch sb.engine {
	case EngineBatch:
		return s.reconcileBatch(ctx, sb, true)
	case EnginePooled:
		return s.reconcileBatch(ctx, sb, true)
	case EngineAgent:
		return s.reconcileAgent(ctx, sb)
	}
	return nil
}

// reconcileBatch writes what the OpenSandbox controller writes: the
// endpoints annotation from every Pod it finds (dead ones included) and the
// status counters and phase. Pod phase Failed/Succeeded is not looked at.
func (s *Sim) reconcileBatch(ctx context.Context, sb *sandbox, endpoints bool) error {
	if sb.obj == nil {
		return nil
	}
	if sb.pool == nil && !slices.ContainsFunc(sb.pods, func(p *simPod) bool { return p != nil && p.obj != nil }) && sb.obj.Object["status"] == nil {
		return nil // nothing is written until a Pod exists
	}
	var st batchStatus
	// Non-pooled: built only from the Pods found, in index order ([] while
	// a deleted Pod is not re-created yet). Pooled: a slot per allocated Pod.
	var eps []string
	if sb.pool != nil {
		eps = make([]string, len(sb.pods))
	}
	var allocPods []string
	waitingFailure, failedPod, failed := "", "", 0
	for i, p := range sb.pods {
		if p == nil || p.obj == nil {
			continue
		}
		pod := p.obj
		allocPods = append(allocPods, pod.Name)
		st.Replicas++
		if sb.pool != nil {
			eps[i] = pod.Status.PodIP
		} else {
			eps = append(eps, pod.Status.PodIP)
		}
		if pod.Spec.NodeName != "" || pod.Status.PodIP != "" {
			st.Allocated++
		}
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && podReady(pod) {
			st.Ready++
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				switch w.Reason {
				case "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError":
					if failedPod != pod.Name {
						failed++
					}
					waitingFailure, failedPod = w.Reason, pod.Name
				}
			}
		}
	}
	if sb.pool != nil {
		// Pooled: the controller lists what alloc-status says, found or not.
		allocPods = nil
		for _, p := range sb.pods {
			if p != nil {
				allocPods = append(allocPods, p.name())
			}
		}
		st.Replicas = int32(len(allocPods))
	}
	// The controller's conditions (false ones are removed). Failed is sticky:
	// once written it keeps its first summary.
	switch {
	case sb.failedStuck || waitingFailure != "":
		st.Phase = "Failed"
		if waitingFailure != "" && sb.failedMsg == "" {
			sb.failedMsg = fmt.Sprintf("%d/%d observed pods failed; primary reason=%s; sample pod=%s", max(failed, 1), st.Replicas, waitingFailure, failedPod)
		}
		if sb.failedMsg == "" {
			sb.failedMsg = fmt.Sprintf("1/1 observed pods failed; primary reason=ImagePullBackOff; sample pod=%s-0", sb.name)
		}
		sb.failedStuck = true
		st.Conditions = []map[string]any{condition("PodFailed", "True", "PodFailed", sb.failedMsg, s.now)}
	case st.Ready >= 1:
		st.Phase = "Succeed"
		st.Conditions = []map[string]any{condition("Ready", "True", "PodsReady", "Sandbox is running", s.now)}
	default:
		st.Phase = "Pending"
		st.Conditions = []map[string]any{condition("Progressing", "True", "Creating", "Sandbox is being created", s.now)}
	}
	if eps == nil {
		eps = []string{}
	}
	desired := jsonString(eps)
	ann := sb.obj.GetAnnotations()
	if endpoints && sb.scenario != BadAnnotation && ann[osv1.AnnotationEndpoints] != desired || (sb.pool != nil && ann[osv1.AnnotationAllocStatus] == "") {
		obj, err := s.mutateCR(ctx, BatchSandboxGVR, sb.obj, false, "endpoints "+desired, func(u *unstructured.Unstructured) {
			a := u.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			if sb.scenario != BadAnnotation {
				a[osv1.AnnotationEndpoints] = desired
			}
			if sb.pool != nil {
				a[osv1.AnnotationAllocStatus] = jsonString(map[string][]string{"pods": allocPods})
			}
			u.SetAnnotations(a)
		})
		if err != nil {
			return err
		}
		sb.obj = obj
	}
	statusObj := st.object(sb.obj.GetGeneration())
	if cur, ok := sb.obj.Object["status"].(map[string]any); ok && sameBatchStatus(cur, statusObj) {
		return nil
	}
	obj, err := s.mutateCR(ctx, BatchSandboxGVR, sb.obj, true, "phase "+st.Phase, func(u *unstructured.Unstructured) {
		u.Object["status"] = statusObj
	})
	if err != nil {
		return err
	}
	sb.obj = obj
	return nil
}

// sameBatchStatus compares what matters, ignoring condition timestamps.
func sameBatchStatus(a, b map[string]any) bool {
	for _, k := range []string{"replicas", "allocated", "ready", "phase"} {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			return false
		}
	}
	return fmt.Sprint(condTypes(a)) == fmt.Sprint(condTypes(b))
}

func condTypes(m map[string]any) []string {
	var out []string
	list, _ := m["conditions"].([]any)
	for _, c := range list {
		if cm, ok := c.(map[string]any); ok {
			out = append(out, fmt.Sprint(cm["type"], cm["status"]))
		}
	}
	return out
}

func (p *simPod) name() string {
	if p.obj != nil {
		return p.obj.Name
	}
	return p.lastName
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// reconcileAgent writes the agent-sandbox controller's status: selector,
// podIPs (kept while the Pod object exists, whatever its phase), node, Ready.
func (s *Sim) reconcileAgent(ctx context.Context, sb *sandbox) error {
	if sb.obj == nil || len(sb.pods) == 0 {
		return nil
	}
	status := map[string]any{
		"selector":    agentsandbox.LabelNameHash + "=" + nameHash(sb.name),
		"serviceFQDN": fmt.Sprintf("%s.%s.svc.cluster.local", sb.name, sb.ns),
		"service":     sb.name,
	}
	ready, reason, msg := "False", "PodNotReady", "pod is not ready"
	if p := sb.pods[0]; p != nil && p.obj != nil {
		if ip := p.obj.Status.PodIP; ip != "" {
			status["podIPs"] = []any{ip}
		}
		status["nodeName"] = p.obj.Spec.NodeName
		if podReady(p.obj) {
			ready, reason, msg = "True", "DependenciesReady", "Pod is Ready; Service Exists"
		}
	}
	status["conditions"] = []any{condition("Ready", ready, reason, msg, s.now)}
	if cur, ok := sb.obj.Object["status"].(map[string]any); ok &&
		fmt.Sprint(cur["podIPs"], cur["nodeName"], condTypes(cur)) == fmt.Sprint(status["podIPs"], status["nodeName"], condTypes(status)) {
		return nil
	}
	obj, err := s.mutateCR(ctx, AgentSandboxGVR(s.cfg.AgentVersion), sb.obj, true, "ready "+ready, func(u *unstructured.Unstructured) {
		u.Object["status"] = status
	})
	if err != nil {
		return err
	}
	sb.obj = obj
	return nil
}

// --- deletion ---

// userDelete deletes a sandbox and its Pods, as the server's DELETE does.
func (s *Sim) userDelete(ctx context.Context, sb *sandbox) error {
	if sb.deleting || sb.gone {
		return nil
	}
	sb.deleting = true
	return s.teardown(ctx, sb)
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

func (s *Sim) forget(sb *sandbox) {
	sb.gone = true
	delete(s.sandboxes, key(sb.ns, sb.name))
	for _, p := range sb.pods {
		if p != nil {
			delete(s.podOwner, key(sb.ns, p.name()))
		}
	}
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
	if !sb.pinned {
		s.after(s.between(10*time.Minute, 20*time.Minute), "finalizer released "+sb.name, func(ctx context.Context) error {
			return s.releaseHeld(ctx, sb)
		})
	}
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
		gvr := BatchSandboxGVR
		if sb.engine == EngineAgent {
			gvr = AgentSandboxGVR(s.cfg.AgentVersion)
		}
		// Only a BatchSandbox with a task carries the task-cleanup
		// finalizer; any other goes at once, leaving its Pods Terminating
		// without an owner (the pile-up of deleted sandboxes' Pods).
		hold := sb.engine == EngineBatch && sb.hasTask()
		obj, err := s.deleteCR(ctx, gvr, sb.obj, hold, osv1.FinalizerTaskCleanup)
		if err != nil {
			return err
		}
		sb.obj = obj
		if !hold {
			sb.obj = nil
		}
	}
	if !sb.pinned {
		s.after(s.between(15*time.Minute, 30*time.Minute), "image pull ends "+sb.name, func(ctx context.Context) error {
			return s.releaseHeld(ctx, sb)
		})
	}
	return nil
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
		gvr := BatchSandboxGVR
		if sb.engine == EngineAgent {
			gvr = AgentSandboxGVR(s.cfg.AgentVersion)
		}
		if _, err := s.deleteCR(ctx, gvr, sb.obj, false, ""); err != nil {
			return err
		}
	}
	s.forget(sb)
	return nil
}
