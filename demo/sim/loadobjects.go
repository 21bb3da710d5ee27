package sim

import (
	"math/rand"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// loadPlan says where sandbox i of a Load goes: its node, its Pod's IP, the
// IP its BatchSandbox records, and whether it is dead. Load and LoadObjects
// share it so that a load generator serves the fleet Load writes.
type loadPlan struct {
	opts  LoadOptions
	nodes int
	start uint32
}

func newLoadPlan(opts LoadOptions) loadPlan {
	if opts.DeadEvery == 0 {
		opts.DeadEvery = 100
	}
	base := netip.MustParseAddr("10.244.0.0").As4()
	return loadPlan{opts: opts, nodes: opts.N/200 + 1,
		start: uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])}
}

func (p loadPlan) ipOf(i int) string {
	node, k := i%p.nodes, i/p.nodes
	return addrOf(p.start + uint32(node*512) + 2 + uint32(k)).String()
}

// loadSandbox is one sandbox of a plan.
type loadSandbox struct {
	i, node      int
	ns           string
	seed         int64
	ip, recorded string
	dead         bool
}

func (p loadPlan) sandbox(i int) loadSandbox {
	one := loadSandbox{i: i, node: i % p.nodes, ns: p.opts.Namespace, seed: p.opts.Seed*1_000_003 + int64(i), ip: p.ipOf(i)}
	one.recorded = one.ip
	if p.opts.DeadEvery > 0 && i%p.opts.DeadEvery == p.opts.DeadEvery-1 {
		// Its Pod died and the IP went to sandbox i-1's Pod, which runs.
		one.dead = true
		one.recorded = p.ipOf(i - 1)
		one.ip = one.recorded
	}
	return one
}

// rng is the sandbox's own random source: each sandbox's names and choices
// depend on the seed and its index only, not on the order of the writes.
func (one loadSandbox) rng() *rand.Rand { return rand.New(rand.NewSource(one.seed)) }

func (b *Sim) loadedBatchSandbox(one loadSandbox) (*sandbox, *unstructured.Unstructured) {
	sb := &sandbox{
		engine: EngineBatch, ns: one.ns, id: b.newUID(), tenant: tenants[b.rng.Intn(len(tenants))], requestID: b.hex(24),
		image: ImagePython, entrypoint: []string{"python3", "-m", "http.server", "8080"}, restartPolicy: corev1.RestartPolicyNever,
	}
	sb.name = sb.id
	obj := b.newBatchSandbox(sb)
	ann := obj.GetAnnotations()
	ann[osv1.AnnotationEndpoints] = jsonString([]string{one.recorded})
	obj.SetAnnotations(ann)
	return sb, obj
}

func (b *Sim) loadedPod(one loadSandbox, sb *sandbox, owner types.UID) *corev1.Pod {
	pod := b.podTemplate(sb, sb.name+"-0", one.node)
	for k, v := range b.sandboxLabels(sb) {
		pod.Labels[k] = v
	}
	pod.Labels[osv1.LabelBatchSandboxName] = sb.name
	pod.Labels[osv1.LabelPodIndex] = "0"
	pod.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: BatchSandboxGVR.GroupVersion().String(), Kind: "BatchSandbox", Name: sb.name, UID: owner,
		Controller: ptr(true), BlockOwnerDeletion: ptr(true),
	}}
	return pod
}

func (b *Sim) loadedPodStatus(one loadSandbox, pod *corev1.Pod) {
	b.statusScheduled(pod, one.ip, b.hostIP(one.node%200), false)
	b.statusRunning(pod)
	if one.dead {
		b.statusTerminated(pod, 0, "Completed", true)
	}
}

func (b *Sim) loadedBatchStatus(one loadSandbox, obj *unstructured.Unstructured) {
	st := batchStatus{Replicas: 1, Allocated: 1, Ready: 1, Phase: "Succeed",
		Conditions: []map[string]any{condition("Ready", "True", "PodReady", "all pods are ready", b.now)}}
	if one.dead {
		st = batchStatus{Replicas: 1, Allocated: 1, Phase: "Pending"}
	}
	obj.Object["status"] = st.object(obj.GetGeneration())
}

// LoadObjects builds sandbox i of Load(opts) without an API server: its
// BatchSandbox and its Pod with the specs, labels, annotations and statuses
// Load writes, as of now. What only a server sets (resourceVersion, uid,
// creationTimestamp, defaults, managedFields) is left to the caller, except
// the BatchSandbox's uid, which the Pod's owner reference needs: ownerUID.
// A load generator calls it for each i as it streams, so the fleet is never
// held whole.
func LoadObjects(opts LoadOptions, i int, now time.Time, ownerUID types.UID) (*unstructured.Unstructured, *corev1.Pod) {
	one := newLoadPlan(opts).sandbox(i)
	b := &Sim{cfg: Config{NodePrefix: "load-node-"}, now: now}
	b.cfg.defaults()
	b.rng = one.rng()
	sb, obj := b.loadedBatchSandbox(one)
	obj.SetUID(ownerUID)
	obj.SetGeneration(1)
	pod := b.loadedPod(one, sb, ownerUID)
	b.loadedPodStatus(one, pod)
	b.loadedBatchStatus(one, obj)
	return obj, pod
}
