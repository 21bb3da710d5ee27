package sim

import (
	"context"
	"fmt"
	"math/rand"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/crash"
)

// LoadOptions configure a bulk load of a steady-state fleet (benchmarks).
type LoadOptions struct {
	N         int    // BatchSandboxes to create, each with its Pod
	Namespace string // where
	Workers   int    // concurrent writers. Default 16.
	Seed      int64
	// DeadEvery: every DeadEvery-th sandbox is dead (its Pod Succeeded) and
	// its recorded IP is held by another live Pod: IP_TAKEN at scale.
	// Default 100 (1 %). Negative: none.
	DeadEvery int
	// Progress, when set, is called with the number of sandboxes loaded so far.
	Progress func(done int)
}

// LoadedSandbox names one loaded sandbox.
type LoadedSandbox struct {
	Name, Pod, IP string
	Dead          bool
}

// Load writes opts.N non-pooled BatchSandboxes and their Running Pods (the
// OpenSandbox layout, labels, annotations, a status written through the
// status subresource so managedFields has the usual two managers) through
// the real API, concurrently. Unlike Run it is not a life cycle: it builds
// the fleet a long-running cluster would have at one moment. Sandbox i is
// on node i % nodes; IPs are unique per live Pod.
func Load(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, opts LoadOptions) ([]LoadedSandbox, error) {
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	if opts.DeadEvery == 0 {
		opts.DeadEvery = 100
	}
	nodes := opts.N/200 + 1
	out := make([]LoadedSandbox, opts.N)
	base := netip.MustParseAddr("10.244.0.0").As4()
	start := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	ipOf := func(i int) string {
		node, k := i%nodes, i/nodes
		return addrOf(start + uint32(node*512) + 2 + uint32(k)).String()
	}
	now := time.Now()
	var done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		crash.Go(func() {
			defer wg.Done()
			b := &Sim{cfg: Config{NodePrefix: "load-node-"}, kube: kube, dyn: dyn, now: now}
			b.cfg.defaults()
			for i := range work {
				b.rng = rand.New(rand.NewSource(opts.Seed*1_000_003 + int64(i)))
				dead := opts.DeadEvery > 0 && i%opts.DeadEvery == opts.DeadEvery-1
				ip := ipOf(i)
				recorded := ip
				if dead {
					// Its Pod died and the IP went to sandbox i-1's Pod, which runs.
					recorded = ipOf(i - 1)
					ip = recorded
				}
				ls, err := b.loadOne(ctx, opts.Namespace, i%nodes, ip, recorded, dead)
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("loading sandbox %d: %w", i, err); cancel() })
					continue
				}
				out[i] = ls
				if n := done.Add(1); opts.Progress != nil && n%1000 == 0 {
					opts.Progress(int(n))
				}
			}
		})
	}
	for i := 0; i < opts.N && ctx.Err() == nil; i++ {
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, ctx.Err()
}

// loadOne creates one BatchSandbox and its Pod, both with status. b is a
// worker-private Sim used only for its object builders.
func (b *Sim) loadOne(ctx context.Context, ns string, node int, podIP, recorded string, dead bool) (LoadedSandbox, error) {
	sb := &sandbox{
		engine: EngineBatch, ns: ns, id: b.newUID(), tenant: tenants[b.rng.Intn(len(tenants))], requestID: b.hex(24),
		image: ImagePython, entrypoint: []string{"python3", "-m", "http.server", "8080"}, restartPolicy: corev1.RestartPolicyNever,
	}
	sb.name = sb.id
	obj := b.newBatchSandbox(sb)
	ann := obj.GetAnnotations()
	ann[osv1.AnnotationEndpoints] = jsonString([]string{recorded})
	obj.SetAnnotations(ann)
	created, err := b.dyn.Resource(BatchSandboxGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return LoadedSandbox{}, fmt.Errorf("creating batchsandbox: %w", err)
	}
	podName := sb.name + "-0"
	pod := b.podTemplate(sb, podName, node)
	for k, v := range b.sandboxLabels(sb) {
		pod.Labels[k] = v
	}
	pod.Labels[osv1.LabelBatchSandboxName] = sb.name
	pod.Labels[osv1.LabelPodIndex] = "0"
	pod.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: BatchSandboxGVR.GroupVersion().String(), Kind: "BatchSandbox", Name: sb.name, UID: created.GetUID(),
		Controller: ptr(true), BlockOwnerDeletion: ptr(true),
	}}
	pods := b.kube.CoreV1().Pods(ns)
	cp, err := pods.Create(ctx, pod, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return LoadedSandbox{}, fmt.Errorf("creating pod: %w", err)
	}
	b.now = time.Now()
	b.statusScheduled(cp, podIP, b.hostIP(node%200), false)
	b.statusRunning(cp)
	if dead {
		b.statusTerminated(cp, 0, "Completed", true)
	}
	if _, err := pods.UpdateStatus(ctx, cp, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return LoadedSandbox{}, fmt.Errorf("writing pod status: %w", err)
	}
	st := batchStatus{Replicas: 1, Allocated: 1, Ready: 1, Phase: "Succeed",
		Conditions: []map[string]any{condition("Ready", "True", "PodReady", "all pods are ready", b.now)}}
	if dead {
		st = batchStatus{Replicas: 1, Allocated: 1, Phase: "Pending"}
	}
	created.Object["status"] = st.object(created.GetGeneration())
	if _, err := b.dyn.Resource(BatchSandboxGVR).Namespace(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return LoadedSandbox{}, fmt.Errorf("writing batchsandbox status: %w", err)
	}
	return LoadedSandbox{Name: sb.name, Pod: podName, IP: recorded, Dead: dead}, nil
}
