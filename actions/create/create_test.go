package create_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig/registrytest"
	"github.com/sandscope/sandscope/model"
)

func TestResolveOrder(t *testing.T) {
	h := newHarness(t)
	withEP, withDigest := h.reg.PushImage(t, "svc:v1", []string{"/bin/svc"}, []string{"--port", "80"})
	bare, bareDigest := h.reg.PushImage(t, "bare:v1", nil, nil)
	tabled, _ := h.reg.PushImage(t, "tabled:v1", []string{"/from/registry"}, nil)
	closed := registrytest.ClosedPort(t)
	stall := registrytest.Stalling(t, time.Minute)
	table := &create.Table{Clients: h.clients, Images: h.creator.Images}
	if _, err := table.Set(h.ctx, tabled, []string{"/from/table", "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Set(h.ctx, bare, []string{"/bare/start"}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		req       create.Request
		argv      []string
		source    create.Source
		notice    string
		code      string
		retryable bool
		inMessage string
	}{
		{name: "explicit wins", req: create.Request{Image: withEP, Entrypoint: []string{"/x"}}, argv: []string{"/x"}, source: create.SourceExplicit},
		{name: "keep-alive with notice", req: create.Request{Image: withEP, KeepAlive: true}, argv: create.KeepAliveArgv, source: create.SourceExplicit, notice: model.CodeEntrypointNotRun},
		{name: "table before registry", req: create.Request{Image: tabled}, argv: []string{"/from/table", "x"}, source: create.SourceTable, notice: create.NoticeEntrypointFromTable},
		{name: "table for an image without ENTRYPOINT", req: create.Request{Image: bare}, argv: []string{"/bare/start"}, source: create.SourceTable},
		{name: "table by digest while the registry is down", req: create.Request{Image: closed + "/bare@" + bareDigest}, argv: []string{"/bare/start"}, source: create.SourceTable},
		{name: "registry", req: create.Request{Image: withEP}, argv: []string{"/bin/svc", "--port", "80"}, source: create.SourceRegistry, notice: create.NoticeEntrypointFromRegistry},
		{name: "registry by digest", req: create.Request{Image: h.reg.Host + "/svc@" + withDigest}, argv: []string{"/bin/svc", "--port", "80"}, source: create.SourceRegistry},
		{name: "no ENTRYPOINT/CMD", req: create.Request{Image: h.reg.Host + "/bare2:v1"}, code: create.CodeEntrypointUnresolved, retryable: false, inMessage: "neither ENTRYPOINT nor CMD"},
		{name: "image does not exist", req: create.Request{Image: h.reg.Host + "/nothing:v1"}, code: create.CodeEntrypointUnresolved, retryable: false, inMessage: "does not exist"},
		{name: "registry refused", req: create.Request{Image: closed + "/app:v1"}, code: create.CodeEntrypointUnresolved, retryable: true, inMessage: closed},
		{name: "registry stalls", req: create.Request{Image: stall.Host + "/app:v1"}, code: create.CodeEntrypointUnresolved, retryable: true, inMessage: "timed out"},
		{name: "bad reference", req: create.Request{Image: "Bad::Ref"}, code: create.CodeEntrypointUnresolved, retryable: false, inMessage: "invalid image reference"},
	}
	h.reg.PushImage(t, "bare2:v1", nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, notices, rerr := h.creator.Resolve(h.ctx, tt.req)
			err := createError(t, rerr)
			if tt.code != "" {
				if err == nil {
					t.Fatalf("resolved %+v, want refusal %s", ep, tt.code)
				}
				if err.Code != tt.code || err.Retryable != tt.retryable || err.Executed != refusal.ExecutedNo || err.Created() {
					t.Errorf("err = %+v, want code %s retryable %v executed no, nothing created", err, tt.code, tt.retryable)
				}
				if !strings.Contains(err.Message, tt.inMessage) {
					t.Errorf("message %q does not contain %q", err.Message, tt.inMessage)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if !reflect.DeepEqual(ep.Argv, tt.argv) || ep.Source != tt.source {
				t.Errorf("entrypoint = %+v, want %q from %s", ep, tt.argv, tt.source)
			}
			if tt.notice != "" && !slices.ContainsFunc(notices, func(n model.Notice) bool { return n.Code == tt.notice }) {
				t.Errorf("notices %+v lack %s", notices, tt.notice)
			}
		})
	}
}

func TestEntrypointTableRoundTripAndRetag(t *testing.T) {
	h := newHarness(t)
	ref, d1 := h.reg.PushImage(t, "rl:v1", nil, nil)
	table := &create.Table{Clients: h.clients, Images: h.creator.Images}
	e, err := table.Set(h.ctx, ref, []string{"python", "-m", "trainer"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Digest != d1 {
		t.Fatalf("stored under %s, want digest %s", e.Digest, d1)
	}
	got, digest, ok, err := table.Get(h.ctx, h.reg.Host+"/rl@"+d1)
	if err != nil || !ok || digest != d1 || !reflect.DeepEqual(got.Argv, []string{"python", "-m", "trainer"}) {
		t.Fatalf("get by digest: %+v %s %v %v", got, digest, ok, err)
	}
	// The ConfigMap holds it by digest, in a valid data key.
	cm, err := h.c.Kube.CoreV1().ConfigMaps(h.ns).Get(h.ctx, kube.DefaultEntrypointsConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data[strings.Replace(d1, ":", ".", 1)]; !ok || len(cm.Data) != 1 {
		t.Errorf("configmap data = %v", cm.Data)
	}

	// Retag rl:v1 to another image: the tag no longer matches the entry
	// (a fresh reader, as another process would have).
	_, d2 := h.reg.PushImage(t, "rl:v1", nil, nil)
	h.creator.Images = newReader()
	table.Images = h.creator.Images
	if _, digest, ok, err := table.Get(h.ctx, ref); err != nil || ok || digest != d2 {
		t.Errorf("after retag: ok=%v digest=%s err=%v, want no entry for %s", ok, digest, err, d2)
	}
	if _, _, err := h.creator.Resolve(h.ctx, create.Request{Image: ref}); createError(t, err) == nil || createError(t, err).Code != create.CodeEntrypointUnresolved {
		t.Errorf("retagged image resolved through the old entry: %v", err)
	}

	list, err := table.List(h.ctx)
	if err != nil || len(list.Entries) != 1 {
		t.Fatalf("ls: %+v %v", list, err)
	}
	if _, removed, err := table.Remove(h.ctx, d1); err != nil || !removed {
		t.Fatalf("rm by digest: %v %v", removed, err)
	}
	if _, removed, _ := table.Remove(h.ctx, d1); removed {
		t.Error("second rm removed something")
	}
	ro := &create.Table{Clients: h.clients, Images: h.creator.Images, ReadOnly: true}
	if _, err := ro.Set(h.ctx, ref, []string{"x"}); err == nil || !strings.Contains(err.Error(), refusal.CodeReadOnly) {
		t.Errorf("read-only set: %v", err)
	}
}

func TestRefusalCreatesNothing(t *testing.T) {
	h := newHarness(t)
	closed := registrytest.ClosedPort(t)
	for _, req := range []create.Request{
		{Image: closed + "/app:v1"},
		{Image: h.reg.Host + "/missing:v1"},
	} {
		res, rerr := h.creator.Run(h.ctx, req, nil)
		err := createError(t, rerr)
		if err == nil || res != nil {
			t.Fatalf("%s: created %+v", req.Image, res)
		}
		if err.Created() || err.Executed != refusal.ExecutedNo || err.Sandbox != "" {
			t.Errorf("%s: %+v, want a refusal, executed no", req.Image, err)
		}
	}
	if left := h.sandboxes(); len(left) != 0 {
		t.Errorf("a refused create left objects: %v", left)
	}
}

func TestReadyThroughEveryStage(t *testing.T) {
	h := newHarness(t)
	image, _ := h.reg.PushImage(t, "svc:v1", []string{"/bin/svc"}, []string{"serve"})
	r := h.start(create.Request{Image: image, Env: map[string]string{"A": "1"}, CPU: "500m", Memory: "256Mi", Lifetime: time.Hour, ExecdImage: "example/execd:test"})
	q := r.until(t, create.StageQueued)
	id := q.Sandbox

	obj := h.ct.Get(kube.BatchSandboxGVR, h.ns, id)
	checkLayout(t, obj, id, image)

	pod := h.podFor(id, image)
	h.kl.Schedule(h.ns, pod.Name, "node-a")
	if u := r.next(t); u.Stage != create.StageScheduled || !strings.Contains(u.Detail, "node-a") {
		t.Fatalf("update %+v, want Scheduled on node-a", u)
	}
	h.kl.SetWaiting(h.ns, pod.Name, osv1.ContainerExecdInstaller, "PodInitializing", "")
	h.kl.Event(h.ns, pod.Name, corev1.EventTypeNormal, "Pulling", `Pulling image "`+image+`"`, time.Time{}, time.Time{}, 1)
	r.until(t, create.StagePullingImage)
	h.prober.setUp(true)
	h.kl.SetRunning(h.ns, pod.Name, "10.1.2.3")
	res, err := r.wait(t)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []create.Stage{create.StageQueued, create.StageScheduled, create.StagePullingImage, create.StageStarting, create.StageReady}
	if got := stagesOf(r.seen); !reflect.DeepEqual(got, want) {
		t.Errorf("stages %v, want %v", got, want)
	}
	if res.Stage != create.StageReady || res.Entrypoint.Source != create.SourceRegistry || len(res.Stages) != 5 {
		t.Errorf("result %+v", res)
	}
	for i := 1; i < len(res.Stages); i++ {
		if res.Stages[i].At.Before(res.Stages[i-1].At) {
			t.Errorf("stage times go back: %+v", res.Stages)
		}
	}
	if h.prober.last.Pod == nil || h.prober.last.Pod.UID != pod.UID {
		t.Errorf("prober asked about %+v, want pod uid %s", h.prober.last.Pod, pod.UID)
	}
	// The JSON result has the shape the issue specifies.
	b, _ := json.Marshal(res)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"sandbox", "namespace", "stage", "entrypoint", "notices", "stages"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result JSON lacks %q: %s", k, b)
		}
	}
	// The Pod's identity, for a later exec --expect-uid/--expect-ip.
	if p, _ := m["pod"].(map[string]any); p == nil || p["name"] != pod.Name || p["uid"] != string(pod.UID) || p["ip"] != "10.1.2.3" {
		t.Errorf("result JSON pod %v, want %s uid %s ip 10.1.2.3", m["pod"], pod.Name, pod.UID)
	}
	if ep := m["entrypoint"].(map[string]any); ep["source"] != "registry" {
		t.Errorf("entrypoint JSON %v", ep)
	}
	if left := h.sandboxes(); len(left) != 1 {
		t.Errorf("a ready sandbox must stay: %v", left)
	}
}

func checkLayout(t *testing.T, obj *unstructured.Unstructured, id, image string) {
	t.Helper()
	if obj.GetName() != id || obj.GetLabels()[osv1.LabelSandboxID] != id {
		t.Errorf("name/label: %s %v", obj.GetName(), obj.GetLabels())
	}
	if r, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); r != 1 {
		t.Errorf("replicas %d", r)
	}
	exp, _, _ := unstructured.NestedString(obj.Object, "spec", "expireTime")
	if at, err := time.Parse(time.RFC3339, exp); err != nil || time.Until(at) < 50*time.Minute {
		t.Errorf("expireTime %q", exp)
	}
	tmpl, _, _ := unstructured.NestedMap(obj.Object, "spec", "template")
	var pt corev1.PodTemplateSpec
	if err := runtimeConvert(tmpl, &pt); err != nil {
		t.Fatal(err)
	}
	if pt.Labels[osv1.LabelSandboxID] != id {
		t.Errorf("template labels %v", pt.Labels)
	}
	s := pt.Spec
	if len(s.InitContainers) != 1 || s.InitContainers[0].Name != "execd-installer" || s.InitContainers[0].Image != "example/execd:test" {
		t.Errorf("init containers %+v", s.InitContainers)
	}
	if len(s.Volumes) != 1 || s.Volumes[0].Name != "opensandbox-bin" {
		t.Errorf("volumes %+v", s.Volumes)
	}
	c := s.Containers[0]
	if c.Name != "sandbox" || c.Image != image || !reflect.DeepEqual(c.Command, []string{"/opt/opensandbox/bootstrap.sh", "/bin/svc", "serve"}) || len(c.Args) != 0 {
		t.Errorf("main container %s %s %q %q", c.Name, c.Image, c.Command, c.Args)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/opt/opensandbox" {
		t.Errorf("mounts %+v", c.VolumeMounts)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "A" || c.Resources.Limits.Cpu().String() != "500m" || c.Resources.Requests.Memory().String() != "256Mi" {
		t.Errorf("env %+v resources %+v", c.Env, c.Resources)
	}
}

// TestFailures drives each failure reason through the kubelet helpers and
// checks the code, what is said about execution, and that nothing is left.
func TestFailures(t *testing.T) {
	tests := []struct {
		name     string
		drive    func(h *harness, pod string)
		code     string
		executed refusal.Executed
		stage    create.Stage
		message  string
	}{
		{"unschedulable", func(h *harness, pod string) {
			h.kl.UpdatePodStatus(h.ns, pod, func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodPending
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu."}}
			})
		}, create.CodeUnschedulable, refusal.ExecutedNo, create.StageQueued, "Insufficient cpu"},
		{"err image pull", func(h *harness, pod string) {
			h.kl.Schedule(h.ns, pod, "node-a")
			h.kl.SetWaiting(h.ns, pod, osv1.ContainerSandbox, "ErrImagePull", "pull access denied")
		}, create.CodeImagePull, refusal.ExecutedNo, create.StageScheduled, "ErrImagePull"},
		{"image pull backoff", func(h *harness, pod string) {
			h.kl.Schedule(h.ns, pod, "node-a")
			h.kl.SetWaiting(h.ns, pod, osv1.ContainerSandbox, "ImagePullBackOff", "Back-off pulling image")
		}, create.CodeImagePull, refusal.ExecutedNo, create.StageScheduled, "ImagePullBackOff"},
		{"init container failed", func(h *harness, pod string) {
			h.kl.Schedule(h.ns, pod, "node-a")
			h.kl.Terminate(h.ns, pod, osv1.ContainerExecdInstaller, 1, "Error")
		}, create.CodeInitFailed, refusal.ExecutedNo, create.StageScheduled, "execd-installer"},
		{"crash loop", func(h *harness, pod string) {
			h.kl.Schedule(h.ns, pod, "node-a")
			h.kl.UpdatePodStatus(h.ns, pod, func(p *corev1.Pod) {
				// As the kubelet reports it: one status with the
				// back-off, the restart count and the last exit.
				p.Status.Phase = corev1.PodRunning
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{
					Name: osv1.ContainerSandbox, Image: "x", RestartCount: 1,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
				}}
			})
		}, create.CodeCrashLoop, refusal.ExecutedYes, "", "CrashLoopBackOff"},
		{"main container exited", func(h *harness, pod string) {
			h.kl.SetRunning(h.ns, pod, "10.0.0.8")
			h.kl.Terminate(h.ns, pod, osv1.ContainerSandbox, 137, "OOMKilled")
		}, create.CodeMainExited, refusal.ExecutedYes, "", "OOMKilled"},
		{"engine phase Failed", func(h *harness, pod string) {
			h.kl.Schedule(h.ns, pod, "node-a")
			h.ct.SetBatchSandboxStatus(h.ns, strings.TrimSuffix(pod, "-0"), map[string]any{"phase": "Failed", "replicas": 1,
				"conditions": []any{map[string]any{"type": "PodFailed", "status": "True", "reason": "ImagePullBackOff", "message": "pod x failed", "lastTransitionTime": "2026-01-01T00:00:00Z"}}})
		}, create.CodeEngineFailed, refusal.ExecutedNo, create.StageScheduled, "pod x failed"},
		{"pod evicted", func(h *harness, pod string) {
			h.kl.SetRunning(h.ns, pod, "10.0.0.9")
			h.kl.Evict(h.ns, pod, "The node was low on resource: memory.")
		}, create.CodeMainExited, refusal.ExecutedYes, "", "exit code 137"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r, pod := h.startSvc(create.Request{})
			tt.drive(h, pod.Name)
			_, err := r.wait(t)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			if err.Code != tt.code || err.Executed != tt.executed || !strings.Contains(err.Message, tt.message) || !err.Created() {
				t.Errorf("err = %s / %s / %q / executed %s / created %v, want %s executed %s containing %q, failed after creating",
					err.Code, err.Stage, err.Message, err.Executed, err.Created(), tt.code, tt.executed, tt.message)
			}
			if tt.stage != "" && err.Stage != tt.stage {
				t.Errorf("last stage %s, want %s", err.Stage, tt.stage)
			}
			if last := r.seen[len(r.seen)-1]; last.Stage != create.StageFailed || !last.Final || last.Err == nil {
				t.Errorf("last update %+v, want Failed final", last)
			}
			h.assertCleanedUp(err)
		})
	}
}

func TestExecDaemonNotAnswering(t *testing.T) {
	h := newHarness(t)
	r, pod := h.startSvc(create.Request{ExecdTimeout: time.Second})
	h.kl.SetRunning(h.ns, pod.Name, "10.0.0.5")
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeExecdUnreachable || err.Stage != create.StageStarting || err.Executed != refusal.ExecutedUnknown || !err.Retryable {
		t.Fatalf("err = %+v", err)
	}
	if !strings.Contains(err.Message, "connection refused") {
		t.Errorf("message lacks the last probe error: %s", err.Message)
	}
	if h.prober.calls < 2 {
		t.Errorf("prober asked %d times, want repeated asks until the deadline", h.prober.calls)
	}
	h.assertCleanedUp(err)
}

func TestDeadlineReportsLastStage(t *testing.T) {
	h := newHarness(t)
	r, pod := h.startSvc(create.Request{WaitTimeout: 2 * time.Second})
	h.kl.Schedule(h.ns, pod.Name, "node-a")
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeTimeout || err.Stage != create.StageScheduled || err.Executed != refusal.ExecutedNo {
		t.Fatalf("err = %+v, want TIMEOUT at Scheduled", err)
	}
	if !strings.Contains(err.Message, "last stage Scheduled") {
		t.Errorf("message %q", err.Message)
	}
	h.assertCleanedUp(err)
}

func TestLifetimeBoundsTheWait(t *testing.T) {
	h := newHarness(t)
	r := h.start(create.Request{Image: "busybox", Entrypoint: []string{"sleep", "1d"}, Lifetime: 2 * time.Second, WaitTimeout: time.Hour})
	r.until(t, create.StageQueued)
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeTimeout || !strings.Contains(err.Message, "lifetime") {
		t.Fatalf("err = %+v", err)
	}
	h.assertCleanedUp(err)
}

func TestCancelDeletes(t *testing.T) {
	h := newHarness(t)
	r := h.start(create.Request{Image: "busybox", Entrypoint: []string{"sleep", "1d"}})
	id := r.until(t, create.StageQueued).Sandbox
	h.podFor(id, "busybox")
	r.cancel() // Ctrl-C
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeCanceled || err.Executed != refusal.ExecutedNo {
		t.Fatalf("err = %+v", err)
	}
	h.assertCleanedUp(err)
}

func TestKeepFailed(t *testing.T) {
	h := newHarness(t)
	r := h.start(create.Request{Image: "busybox", Entrypoint: []string{"true"}, KeepFailed: true, WaitTimeout: time.Second})
	id := r.until(t, create.StageQueued).Sandbox
	_, err := r.wait(t)
	if err == nil || err.Cleanup == nil || !err.Cleanup.Kept || err.Cleanup.Deleted {
		t.Fatalf("err = %+v", err)
	}
	if left := h.sandboxes(); !reflect.DeepEqual(left, []string{id}) {
		t.Errorf("--keep-failed: left %v, want %s", left, id)
	}
}

// A deletion held by a finalizer is reported after a bounded wait, not
// waited on forever.
func TestCleanupHeldByFinalizer(t *testing.T) {
	h := newHarness(t)
	const fin = "batch-sandbox.sandbox.opensandbox.io/task-cleanup"
	r := h.start(create.Request{Image: "busybox", Entrypoint: []string{"true"}, WaitTimeout: 2 * time.Second})
	id := r.until(t, create.StageQueued).Sandbox
	obj := h.ct.Get(kube.BatchSandboxGVR, h.ns, id)
	obj.SetFinalizers([]string{fin})
	if _, err := h.c.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(h.ns).Update(h.ctx, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := r.wait(t)
	if err == nil || err.Cleanup == nil || !err.Cleanup.Pending || err.Cleanup.Deleted || !slices.Contains(err.Cleanup.Finalizers, fin) {
		t.Fatalf("err = %+v cleanup %+v", err, err.Cleanup)
	}
	if !strings.Contains(err.Error(), fin) {
		t.Errorf("error does not name the finalizer: %v", err)
	}
	t.Logf("returned %s after the deadline with the deletion still held", time.Since(start).Round(time.Millisecond))
	// Release it so the namespace can be inspected cleanly.
	obj = h.ct.Get(kube.BatchSandboxGVR, h.ns, id)
	obj.SetFinalizers(nil)
	_, _ = h.c.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(h.ns).Update(h.ctx, obj, metav1.UpdateOptions{})
}

func TestNoWait(t *testing.T) {
	h := newHarness(t)
	res, err := h.creator.Run(h.ctx, create.Request{Image: "busybox", Entrypoint: []string{"sleep", "1d"}, NoWait: true}, nil)
	if err != nil || res.Stage != create.StageQueued {
		t.Fatalf("%+v %v", res, err)
	}
	if left := h.sandboxes(); len(left) != 1 {
		t.Errorf("sandboxes %v", left)
	}
}

func TestPoolMode(t *testing.T) {
	h := newHarness(t)
	image, _ := h.reg.PushImage(t, "pooled:v1", []string{"/pooled"}, []string{"run"})
	h.ct.Create(kube.PoolGVR, h.ns, testcluster.Pool("warm", testcluster.SandboxPod("tmpl", image), 1, 2, 1, 4))
	poolPod := testcluster.SandboxPod("warm-abcde", image)
	poolPod.Labels = map[string]string{osv1.LabelPoolName: "warm"}
	h.kl.CreatePod(h.ns, poolPod)
	h.kl.SetRunning(h.ns, poolPod.Name, "10.0.1.1")
	h.prober.setUp(true)

	r := h.start(create.Request{Pool: "warm", Env: map[string]string{"K": "V"}})
	id := r.until(t, create.StageQueued).Sandbox
	obj := h.ct.Get(kube.BatchSandboxGVR, h.ns, id)
	if ref, _, _ := unstructured.NestedString(obj.Object, "spec", "poolRef"); ref != "warm" {
		t.Errorf("poolRef %q", ref)
	}
	cmd, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "taskTemplate", "spec", "process", "command")
	if !reflect.DeepEqual(cmd, []string{"/pooled", "run"}) {
		t.Errorf("task command %q", cmd)
	}
	if _, has, _ := unstructured.NestedMap(obj.Object, "spec", "template"); has {
		t.Error("pooled BatchSandbox has a template")
	}
	h.ct.SetAllocStatus(h.ns, id, poolPod.Name)
	res, err := r.wait(t)
	if err != nil || res.Stage != create.StageReady {
		t.Fatalf("%+v %v", res, err)
	}
	if h.prober.last.Pod.Name != poolPod.Name {
		t.Errorf("probed %s, want the allocated pool pod", h.prober.last.Pod.Name)
	}
}

func TestAgentEngine(t *testing.T) {
	h := newHarness(t)
	src, err := kube.DiscoverSources(h.ctx, h.clients.Discovery)
	if err != nil || src.Agent == nil {
		t.Fatalf("agent-sandbox CRD not served: %+v %v", src, err)
	}
	h.prober.setUp(true)
	r := h.start(create.Request{Image: "busybox", Entrypoint: []string{"sleep", "1d"}, Engine: create.EngineAgent})
	id := r.until(t, create.StageQueued).Sandbox
	obj, gerr := h.c.Dynamic.Resource(*src.Agent).Namespace(h.ns).Get(h.ctx, id, metav1.GetOptions{})
	if gerr != nil {
		t.Fatal(gerr)
	}
	cmd, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podTemplate", "spec", "containers")
	if len(cmd) != 1 || !reflect.DeepEqual(cmd[0].(map[string]any)["command"], []any{"sleep", "1d"}) {
		t.Errorf("containers %v", cmd)
	}
	pod := testcluster.SandboxPod(id, "busybox")
	pod.Labels = map[string]string{kube.LabelAgentSandbox: id}
	pod.Spec.InitContainers = nil
	h.kl.CreatePod(h.ns, pod)
	h.kl.SetRunning(h.ns, id, "10.0.2.2")
	res, rerr := r.wait(t)
	if rerr != nil || res.Stage != create.StageReady || res.Engine != model.EngineAgent {
		t.Fatalf("%+v %v", res, rerr)
	}
	if h.prober.last.Engine != model.EngineAgent {
		t.Errorf("probe engine %s", h.prober.last.Engine)
	}
}

// BenchmarkRefusalLatency prints how long a create takes to refuse when the
// registry is unreachable or stalls (target: registry deadline + 1 s).
func BenchmarkRefusalLatency(b *testing.B) {
	c, ns := testcluster.GetWithNamespace(b)
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		b.Fatal(err)
	}
	const deadline = time.Second
	for _, tc := range []struct{ name, host string }{
		{"closed-port", registrytest.ClosedPort(b)},
		{"stalling", registrytest.Stalling(b, time.Minute).Host},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var worst time.Duration
			for i := 0; i < b.N; i++ {
				cr := &create.Creator{Clients: clients, Images: newReaderWith(deadline)}
				start := time.Now()
				_, rerr := cr.Run(context.Background(), create.Request{Image: tc.host + "/app:v1"}, nil)
				if err := createError(b, rerr); err == nil || err.Code != create.CodeEntrypointUnresolved || !err.Retryable {
					b.Fatalf("err = %v", err)
				}
				worst = max(worst, time.Since(start))
			}
			b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
			b.ReportMetric(float64((deadline + time.Second).Milliseconds()), "target-ms")
		})
	}
}

// Incident 000's pile-up: a create that gives up while its Pod is still
// pulling the image is not retryable now (a deleted Pod keeps its pull
// slot), and the Failed update says the same as the error.
func TestFailWhilePullingIsNotRetryable(t *testing.T) {
	h := newHarness(t)
	r, pod := h.startSvc(create.Request{WaitTimeout: 2 * time.Second})
	h.kl.Schedule(h.ns, pod.Name, "node-a")
	h.kl.SetWaiting(h.ns, pod.Name, osv1.ContainerSandbox, "ContainerCreating", "")
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeTimeout || err.Stage != create.StagePullingImage {
		t.Fatalf("err = %+v, want TIMEOUT at PullingImage", err)
	}
	if err.Retryable || !strings.Contains(err.RetryReason, "still pulling its image") || !strings.Contains(err.RetryReason, "pile-up") {
		t.Errorf("retryable %v, reason %q: want not retryable, with the reason", err.Retryable, err.RetryReason)
	}
	last := r.seen[len(r.seen)-1]
	if last.Stage != create.StageFailed || last.Executed != err.Executed || last.Retryable == nil || *last.Retryable != err.Retryable {
		t.Errorf("Failed update executed %q retryable %v, error executed %q retryable %v", last.Executed, last.Retryable, err.Executed, err.Retryable)
	}
	h.assertCleanedUp(err)
}

// Once the stage stream said the main container ran (Starting), the error
// cannot say the command did not run, whatever the Pod's status says by
// then (here its main container is reported waiting again).
func TestExecutedNeverContradictsTheStages(t *testing.T) {
	h := newHarness(t)
	r, pod := h.startSvc(create.Request{WaitTimeout: 3 * time.Second, ExecdTimeout: time.Hour})
	h.kl.SetRunning(h.ns, pod.Name, "10.0.0.7")
	r.until(t, create.StageStarting)
	h.kl.SetWaiting(h.ns, pod.Name, osv1.ContainerSandbox, "ContainerCreating", "")
	_, err := r.wait(t)
	if err == nil || err.Code != create.CodeTimeout || err.Stage != create.StageStarting {
		t.Fatalf("err = %+v, want TIMEOUT at Starting", err)
	}
	if err.Executed != refusal.ExecutedUnknown {
		t.Errorf("executed %q after the stages said the main container ran; want unknown", err.Executed)
	}
	if last := r.seen[len(r.seen)-1]; last.Executed != err.Executed {
		t.Errorf("Failed update executed %q, error %q", last.Executed, err.Executed)
	}
	h.assertCleanedUp(err)
}
