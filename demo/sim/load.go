package sim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

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
	out := make([]LoadedSandbox, opts.N)
	plan := newLoadPlan(opts)
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
				ls, err := b.loadOne(ctx, plan.sandbox(i))
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
func (b *Sim) loadOne(ctx context.Context, one loadSandbox) (LoadedSandbox, error) {
	b.rng = one.rng()
	sb, obj := b.loadedBatchSandbox(one)
	created, err := b.dyn.Resource(BatchSandboxGVR).Namespace(one.ns).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return LoadedSandbox{}, fmt.Errorf("creating batchsandbox: %w", err)
	}
	pod := b.loadedPod(one, sb, created.GetUID())
	pods := b.kube.CoreV1().Pods(one.ns)
	cp, err := pods.Create(ctx, pod, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return LoadedSandbox{}, fmt.Errorf("creating pod: %w", err)
	}
	b.now = time.Now()
	b.loadedPodStatus(one, cp)
	if _, err := pods.UpdateStatus(ctx, cp, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return LoadedSandbox{}, fmt.Errorf("writing pod status: %w", err)
	}
	b.loadedBatchStatus(one, created)
	if _, err := b.dyn.Resource(BatchSandboxGVR).Namespace(one.ns).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return LoadedSandbox{}, fmt.Errorf("writing batchsandbox status: %w", err)
	}
	return LoadedSandbox{Name: sb.name, Pod: pod.Name, IP: one.recorded, Dead: one.dead}, nil
}
