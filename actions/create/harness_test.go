package create_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sandscope/sandscope/actions/create"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/kube/imageconfig/registrytest"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// fakeProber stands in for the exec path: it answers once the test says
// the daemon is up (or never).
type fakeProber struct {
	mu    sync.Mutex
	up    bool
	calls int
	last  create.ProbeTarget
}

func (p *fakeProber) setUp(up bool) { p.mu.Lock(); p.up = up; p.mu.Unlock() }

func (p *fakeProber) ProbeReady(ctx context.Context, t create.ProbeTarget) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	p.last = t
	if p.up && t.Pod != nil && t.Pod.Status.PodIP != "" {
		return nil
	}
	return errors.New("dial tcp " + t.Pod.Status.PodIP + ":44772: connect: connection refused")
}

type harness struct {
	t       *testing.T
	c       *testcluster.Cluster
	ns      string
	clients *kube.Clients
	kl      *testcluster.Kubelet
	ct      *testcluster.Controller
	reg     *registrytest.Registry
	prober  *fakeProber
	creator *create.Creator
	ctx     context.Context
}

func newHarness(t *testing.T) *harness {
	c, ns := testcluster.GetWithNamespace(t)
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, c: c, ns: ns, clients: clients, kl: c.Kubelet(t), ct: c.Controller(t),
		reg: registrytest.Start(t), prober: &fakeProber{}, ctx: testcluster.Context(t)}
	h.creator = &create.Creator{
		Clients: clients, Prober: h.prober, ProbeInterval: 50 * time.Millisecond,
		Images: imageconfig.New(imageconfig.Options{Timeout: time.Second}),
	}
	return h
}

// running is one Run in the background.
type running struct {
	updates chan create.StageUpdate
	done    chan struct{}
	res     *create.Result
	err     *create.Error
	cancel  context.CancelFunc
	seen    []create.StageUpdate
}

func (h *harness) start(req create.Request) *running {
	h.t.Helper()
	if req.WaitTimeout == 0 {
		req.WaitTimeout = 30 * time.Second
	}
	if req.CleanupWait == 0 {
		req.CleanupWait = time.Second
	}
	ctx, cancel := context.WithCancel(h.ctx)
	r := &running{updates: make(chan create.StageUpdate, 32), done: make(chan struct{}), cancel: cancel}
	h.t.Cleanup(cancel)
	go func() {
		defer close(r.done)
		res, err := h.creator.Run(ctx, req, func(u create.StageUpdate) { r.updates <- u })
		r.res, r.err = res, createError(h.t, err)
	}()
	return r
}

// next returns the next stage update (failing after 20 s).
func (r *running) next(t *testing.T) create.StageUpdate {
	t.Helper()
	select {
	case u := <-r.updates:
		r.seen = append(r.seen, u)
		return u
	case <-r.done:
		select {
		case u := <-r.updates:
			r.seen = append(r.seen, u)
			return u
		default:
		}
		t.Fatalf("Run returned (%v) without a further update (seen %v)", r.err, stagesOf(r.seen))
	case <-time.After(20 * time.Second):
		t.Fatalf("no stage update within 20s (seen %v)", stagesOf(r.seen))
	}
	return create.StageUpdate{}
}

// until reads updates until stage is reached.
func (r *running) until(t *testing.T, stage create.Stage) create.StageUpdate {
	t.Helper()
	for {
		u := r.next(t)
		if u.Stage == stage {
			return u
		}
		if u.Final {
			t.Fatalf("ended at %s (%s) before reaching %s", u.Stage, u.Detail, stage)
		}
	}
}

func (r *running) wait(t *testing.T) (*create.Result, *create.Error) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(40 * time.Second):
		t.Fatal("Run did not return within 40s")
	}
	for {
		select {
		case u := <-r.updates:
			r.seen = append(r.seen, u)
		default:
			return r.res, r.err
		}
	}
}

func stagesOf(us []create.StageUpdate) []create.Stage {
	var out []create.Stage
	for _, u := range us {
		out = append(out, u.Stage)
	}
	return out
}

// podFor creates the Pod the BatchSandbox controller would create for id.
func (h *harness) podFor(id, image string) *corev1.Pod {
	h.t.Helper()
	obj := h.ct.Get(kube.BatchSandboxGVR, h.ns, id)
	pod := testcluster.OwnedByBatchSandbox(testcluster.SandboxPod(id+"-0", image), obj, 0)
	pod.Labels[osv1.LabelSandboxID] = id
	return h.kl.CreatePod(h.ns, pod)
}

// startSvc starts a create of image svc:v1 (ENTRYPOINT /bin/svc, pushed to
// the test registry) with req's other fields and, once it is queued,
// creates the Pod the BatchSandbox controller would create for it.
func (h *harness) startSvc(req create.Request) (*running, *corev1.Pod) {
	h.t.Helper()
	req.Image, _ = h.reg.PushImage(h.t, "svc:v1", []string{"/bin/svc"}, nil)
	r := h.start(req)
	id := r.until(h.t, create.StageQueued).Sandbox
	return r, h.podFor(id, req.Image)
}

// sandboxes lists the BatchSandboxes left in the namespace.
func (h *harness) sandboxes() []string {
	h.t.Helper()
	list, err := h.c.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(h.ns).List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, o := range list.Items {
		out = append(out, o.GetName())
	}
	return out
}

// livePods lists Pods of the namespace that are not being deleted.
func (h *harness) livePods() []string {
	h.t.Helper()
	list, err := h.c.Kube.CoreV1().Pods(h.ns).List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// assertCleanedUp checks by listing that nothing of the failed create is
// left: no sandbox object, no live Pod.
func (h *harness) assertCleanedUp(e *create.Error) {
	h.t.Helper()
	if e.Cleanup == nil || !e.Cleanup.Deleted || e.Cleanup.Pending {
		h.t.Errorf("cleanup = %+v, want deleted", e.Cleanup)
	}
	if left := h.sandboxes(); len(left) != 0 {
		h.t.Errorf("sandbox objects left after failure: %v", left)
	}
	if left := h.livePods(); len(left) != 0 {
		h.t.Errorf("pods left (not deleting) after failure: %v", left)
	}
}

func newReader() *imageconfig.Reader { return newReaderWith(time.Second) }

func newReaderWith(d time.Duration) *imageconfig.Reader {
	return imageconfig.New(imageconfig.Options{Timeout: d})
}

func runtimeConvert(m map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

// createError is err's *create.Error: nil exactly when err is nil (a
// function returning error cannot hand back a nil *Error that is not nil).
// Any other error fails the test.
func createError(t testing.TB, err error) *create.Error {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *create.Error
	if !errors.As(err, &e) || e == nil {
		t.Errorf("error %v (%T) is not a *create.Error", err, err)
		return nil
	}
	return e
}
