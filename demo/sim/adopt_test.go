package sim

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/kube"
)

// adoptionRun is a simulation on fakes, with virtual time driven by the test.
type adoptionRun struct {
	t    *testing.T
	s    *Sim
	kube *kubefake.Clientset
	dyn  *dynamicfake.FakeDynamicClient
	ops  []string
	at   time.Time
}

func startAdoption(t *testing.T, seed int64) *adoptionRun {
	t.Helper()
	r := &adoptionRun{t: t, at: t0}
	r.kube, r.dyn = newFakes()
	s, err := New(r.kube, r.dyn, Config{Seed: seed, Namespaces: []string{"sbx"}, ChurnPerHour: -1, EmulateServer: true, AdoptEvery: time.Second,
		Clock: testingclock.NewFakeClock(t0), OnOp: func(o Op) { r.ops = append(r.ops, o.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// advance plays d more of virtual time and fails on any operation error.
func (r *adoptionRun) advance(d time.Duration) {
	r.t.Helper()
	r.at = r.at.Add(d)
	if err := r.s.RunUntil(context.Background(), r.at); err != nil {
		r.t.Fatal(err)
	}
	if errs := r.s.Errors(); len(errs) > 0 {
		r.t.Fatalf("simulated operations failed: %v", errs)
	}
}

// create writes the object sandscope's create writes for image and argv.
func (r *adoptionRun) create(name, image string, argv ...string) {
	r.t.Helper()
	obj, err := kube.BatchSandboxObject(kube.SandboxSpec{Namespace: "sbx", Name: name, Image: image,
		Command: append([]string{osv1.BootstrapPath}, argv...)})
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.dyn.Resource(BatchSandboxGVR).Namespace("sbx").Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *adoptionRun) freeIPs() int {
	n := 0
	for i := range r.s.cfg.Nodes {
		n += r.s.ipam.available(i)
	}
	return n
}

func (r *adoptionRun) bsbx(name string) *unstructured.Unstructured {
	r.t.Helper()
	u, err := r.dyn.Resource(BatchSandboxGVR).Namespace("sbx").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return u
}

func (r *adoptionRun) pod(name string) *corev1.Pod {
	r.t.Helper()
	p, err := r.kube.CoreV1().Pods("sbx").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

func TestAdoptsABatchSandboxItDidNotCreate(t *testing.T) {
	t.Parallel()
	r := startAdoption(t, 21)
	r.advance(5 * time.Second) // the Pool's Pods are up
	free := r.freeIPs()
	r.create("made-by-sandscope", ImageTrainer, "/usr/bin/tini", "--", "/srv/start-env.sh")
	r.advance(10 * time.Second)

	b := r.bsbx("made-by-sandscope")
	if b.GetUID() == "" || !slices.Contains(b.GetFinalizers(), osv1.FinalizerTaskCleanup) {
		t.Errorf("adopted object: uid %q, finalizers %v; want a UID and the engine's finalizer", b.GetUID(), b.GetFinalizers())
	}
	pod := r.pod("made-by-sandscope-0")
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].Kind != "BatchSandbox" || pod.OwnerReferences[0].UID != b.GetUID() {
		t.Errorf("pod owner %+v, want the BatchSandbox (uid %s)", pod.OwnerReferences, b.GetUID())
	}
	if pod.Labels[osv1.LabelBatchSandboxName] != "made-by-sandscope" || pod.Labels[osv1.LabelPodIndex] != "0" || pod.Labels[osv1.LabelSandboxID] != "made-by-sandscope" {
		t.Errorf("pod labels %v", pod.Labels)
	}
	if pod.Spec.Containers[0].Command[0] != osv1.BootstrapPath || pod.Spec.InitContainers[0].Image != kube.DefaultExecdImage {
		t.Errorf("the pod is not made from the object's template: %v, init %s", pod.Spec.Containers[0].Command, pod.Spec.InitContainers[0].Image)
	}
	if pod.Status.Phase != corev1.PodRunning || !podReady(pod) || pod.Status.PodIP == "" {
		t.Fatalf("pod phase %s ready %v ip %q, want Running, ready, with an IP", pod.Status.Phase, podReady(pod), pod.Status.PodIP)
	}
	var eps []string
	if err := json.Unmarshal([]byte(b.GetAnnotations()[osv1.AnnotationEndpoints]), &eps); err != nil || len(eps) != 1 || eps[0] != pod.Status.PodIP {
		t.Errorf("endpoints %q (%v), want [%q]", b.GetAnnotations()[osv1.AnnotationEndpoints], err, pod.Status.PodIP)
	}
	if phase, _, _ := unstructured.NestedString(b.Object, "status", "phase"); phase != "Succeed" {
		t.Errorf("phase %q, want Succeed", phase)
	}
	events, err := r.kube.CoreV1().Events("sbx").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		if e.InvolvedObject.Name == pod.Name {
			reasons = append(reasons, e.Reason)
		}
	}
	for _, want := range []string{"Pulling", "Pulled", "Created", "Started"} {
		if !slices.Contains(reasons, want) {
			t.Errorf("no %s event for %s (events %v)", want, pod.Name, reasons)
		}
	}
	var out strings.Builder
	if code, err := r.s.Exec(context.Background(), ExecRequest{Namespace: "sbx", Pod: pod.Name, Execd: true, Command: []string{"hostname"}, Stdout: &out}); err != nil || code != 0 || out.String() != pod.Name+"\n" {
		t.Errorf("exec through execd: exit %d, %v, output %q", code, err, out.String())
	}

	// Someone deletes the object alone (the TUI's delete does): its Pod goes
	// with it, as the garbage collector would take it, the simulator lets
	// the sandbox go without an error and the Pod's address is free again.
	ctx := context.Background()
	if err := r.dyn.Resource(BatchSandboxGVR).Namespace("sbx").Delete(ctx, b.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.advance(2 * time.Second)
	if _, err := r.kube.CoreV1().Pods("sbx").Get(ctx, pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod after the cleanup: %v, want not found", err)
	}
	if _, ok := r.s.sandboxes[key("sbx", "made-by-sandscope")]; ok {
		t.Error("the simulator still follows the deleted sandbox")
	}
	if now := r.freeIPs(); now != free {
		t.Errorf("%d free pod IPs after the cleanup, %d before the create", now, free)
	}
}

func TestAdoptedSandboxesFailLikeTheirImages(t *testing.T) {
	t.Parallel()
	r := startAdoption(t, 22)
	r.create("missing", ImageMissing, "python3", "-m", "http.server")
	r.create("instant", ImageBashBox, "/usr/bin/tini", "--", "bash")
	r.advance(6 * time.Second) // adopted within 1 s, scheduled within 1.5 s more, started 1-3 s later

	pod := r.pod("missing-0")
	if w := pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" {
		t.Fatalf("pod of a missing image: %+v, want waiting ErrImagePull", pod.Status.ContainerStatuses[0].State)
	}
	r.advance(20 * time.Second)
	pod = r.pod("missing-0")
	if w := pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ImagePullBackOff" {
		t.Errorf("pod of a missing image later: %+v, want waiting ImagePullBackOff", pod.Status.ContainerStatuses[0].State)
	}
	if phase, _, _ := unstructured.NestedString(r.bsbx("missing").Object, "status", "phase"); phase != "Failed" {
		t.Errorf("engine phase %q for a Pod that cannot pull, want Failed", phase)
	}

	pod = r.pod("instant-0")
	term := pod.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 0 || pod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("`tini -- bash` without a terminal: phase %s, state %+v; want it ended at once (Succeeded, exit 0)", pod.Status.Phase, pod.Status.ContainerStatuses[0].State)
	}
	if _, err := r.s.Exec(context.Background(), ExecRequest{Namespace: "sbx", Pod: pod.Name, Execd: true, Command: []string{"true"}}); !IsExecError(err) {
		t.Errorf("exec in an ended sandbox: %v, want it refused", err)
	}
}

// TestAdoptionIsDeterministic: the same outside writes at the same virtual
// times give the same operations.
func TestAdoptionIsDeterministic(t *testing.T) {
	t.Parallel()
	play := func() []string {
		r := startAdoption(t, 23)
		r.advance(1500 * time.Millisecond)
		r.create("a", ImagePython, "python3", "-m", "http.server", "8080")
		r.advance(700 * time.Millisecond)
		r.create("b", ImageMissing, "python3")
		r.advance(30 * time.Second)
		return r.ops
	}
	first, second := play(), play()
	if !slices.Equal(first, second) {
		t.Fatalf("two runs differ:\n%s\n---\n%s", strings.Join(first, "\n"), strings.Join(second, "\n"))
	}
	adopted := 0
	for _, op := range first {
		if strings.Contains(op, " update batchsandboxes ") && strings.HasSuffix(op, " adopted") {
			adopted++
		}
	}
	if adopted != 2 {
		t.Errorf("%d adoptions in the operation log, want 2", adopted)
	}
}

// A user's delete of one of the simulator's own sandbox objects (the TUI's
// ctrl+d in the demo) takes its Pods, as the engine and the garbage
// collector would: the Pod of a deleted agent Sandbox or BatchSandbox does
// not stay Running.
func TestUserDeleteOfOwnSandboxTakesItsPods(t *testing.T) {
	ctx := context.Background()
	kc, dyn := newFakes()
	s, err := New(kc, dyn, Config{Seed: 1, Namespaces: []string{"sbx"}, ChurnPerHour: -1, Examples: true, EmulateServer: true,
		AdoptEvery: time.Second, Clock: testingclock.NewFakeClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(2 * time.Minute)
	if err := s.RunUntil(ctx, at); err != nil {
		t.Fatal(err)
	}
	// A running Pod owned by a sandbox object of each engine kind.
	pods, err := kc.CoreV1().Pods("sbx").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	victims := map[string]corev1.Pod{} // owner kind -> its Pod
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || len(p.OwnerReferences) != 1 {
			continue
		}
		kind := p.OwnerReferences[0].Kind
		if _, ok := victims[kind]; !ok && (kind == "Sandbox" || kind == "BatchSandbox") {
			victims[kind] = p
		}
	}
	if len(victims) != 2 {
		t.Fatalf("no running Pod of an agent Sandbox and of a BatchSandbox among the examples: %v", victims)
	}
	for kind, p := range victims {
		gvr := BatchSandboxGVR
		if kind == "Sandbox" {
			gvr = AgentSandboxGVR(s.cfg.AgentVersion)
		}
		if err := dyn.Resource(gvr).Namespace("sbx").Delete(ctx, p.OwnerReferences[0].Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	at = at.Add(5 * time.Minute)
	if err := s.RunUntil(ctx, at); err != nil {
		t.Fatal(err)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("simulated operations failed: %v", errs)
	}
	for kind, p := range victims {
		cur, err := kc.CoreV1().Pods("sbx").Get(ctx, p.Name, metav1.GetOptions{})
		if err == nil && cur.UID == p.UID {
			t.Errorf("the Pod %s of the deleted %s %s is still there (phase %s, deleting %v)", p.Name, kind, p.OwnerReferences[0].Name,
				cur.Status.Phase, cur.DeletionTimestamp != nil)
		} else if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}
