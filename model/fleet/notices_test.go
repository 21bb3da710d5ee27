package fleet

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/forensics"
	"github.com/sandscope/sandscope/model/modeltest"
)

func TestKeepAliveOnly(t *testing.T) {
	cases := []struct {
		cmd, args []string
		want      bool
	}{
		{[]string{osv1.BootstrapPath, "tail", "-f", "/dev/null"}, nil, true},
		{[]string{osv1.BootstrapPath, "/usr/bin/tail", "-f", "/dev/null"}, nil, true},
		{[]string{osv1.BootstrapPath, "sleep", "infinity"}, nil, true},
		{[]string{osv1.BootstrapPath}, nil, true},
		{[]string{osv1.BootstrapPath}, []string{"sleep", "infinity"}, true},
		{[]string{osv1.BootstrapPath, "sh", "-c", "sleep infinity"}, nil, true},
		{[]string{osv1.BootstrapPath, "python", "app.py"}, nil, false},
		{[]string{osv1.BootstrapPath, "sleep", "30"}, nil, false},
		{[]string{"tail", "-f", "/dev/null"}, nil, false}, // no bootstrap: not the engine's layout
		{nil, nil, false},
	}
	for _, tc := range cases {
		got, _ := keepAliveOnly(&model.Container{Command: tc.cmd, Args: tc.args})
		if got != tc.want {
			t.Errorf("%q %q: %v, want %v", tc.cmd, tc.args, got, tc.want)
		}
	}
}

func TestImageKey(t *testing.T) {
	spec := &model.Container{Image: "reg.example/app:1"}
	cases := []struct{ id, want string }{
		{"docker-pullable://reg.example/app@sha256:abc", "reg.example/app@sha256:abc"},
		{"reg.example/app@sha256:abc", "reg.example/app@sha256:abc"},
		{"sha256:abc", "reg.example/app:1"}, // a bare config id cannot be read from a registry
		{"", "reg.example/app:1"},
	}
	for _, tc := range cases {
		if got := imageKey(spec, &model.ContainerStatus{ImageID: tc.id}); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestEntrypointNotRun(t *testing.T) {
	const digestRef = "reg.example/rl-env@sha256:1111"
	keepAlive := func(name, uid, ip string) *corev1.Pod {
		return modeltest.RunningPod(name, uid, ip, modeltest.OwnedBy(strings.TrimSuffix(name, "-0"), 0),
			modeltest.WithCommand(osv1.BootstrapPath, "tail", "-f", "/dev/null"), modeltest.WithImageID("docker-pullable://"+digestRef))
	}
	cases := []struct {
		name     string
		cfg      model.ImageConfig
		wantCode string
		severity model.Severity
		inMsg    string
	}{
		{"image has an ENTRYPOINT", model.ImageConfig{Ref: digestRef, Entrypoint: []string{"/srv/start.sh"}}, model.CodeEntrypointNotRun, model.SeverityWarning, "/srv/start.sh"},
		{"image has only a CMD", model.ImageConfig{Ref: digestRef, Cmd: []string{"python", "serve.py"}}, model.CodeEntrypointNotRun, model.SeverityWarning, "serve.py"},
		{"registry unreachable", model.ImageConfig{Ref: digestRef, Err: "dial tcp: connection refused"}, model.CodeImageConfigUnreadable, model.SeverityWarning, "image config unreadable: dial tcp: connection refused"},
		{"image has neither", model.ImageConfig{Ref: digestRef}, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newSyncedFleet(t)
			f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
			f.UpsertBatchSandbox(batchSandbox("b", "10.0.0.2"))
			f.UpsertPod(model.SlimPod(keepAlive("a-0", "ua", "10.0.0.1")))
			f.UpsertPod(model.SlimPod(keepAlive("b-0", "ub", "10.0.0.2")))
			if got := f.PendingImageChecks(); !slices.Equal(got, []string{digestRef}) {
				t.Fatalf("pending checks %q, want the digest ref once", got)
			}
			if got := f.PendingImageChecks(); len(got) != 0 {
				t.Fatalf("asked again before an answer: %q", got)
			}
			if hasNotice(mustSandbox(t, f, bsKey("a")), model.CodeEntrypointNotRun) != nil {
				t.Fatal("notice before the image config is known")
			}
			f.SetImageConfig(tc.cfg)
			for _, key := range []string{bsKey("a"), bsKey("b")} {
				sb := mustSandbox(t, f, key)
				for _, c := range []string{model.CodeEntrypointNotRun, model.CodeImageConfigUnreadable} {
					n := hasNotice(sb, c)
					if c != tc.wantCode {
						if n != nil {
							t.Errorf("%s: unexpected %s", key, c)
						}
						continue
					}
					if n == nil {
						t.Fatalf("%s: no %s; have %v", key, c, noticeCodes(sb))
					}
					if n.Severity != tc.severity || !strings.Contains(n.Message, tc.inMsg) {
						t.Errorf("%s: %s %q", key, n.Severity, n.Message)
					}
				}
			}
			if got := f.PendingImageChecks(); len(got) != 0 {
				t.Errorf("answered image asked again: %q", got)
			}
		})
	}
}

func TestUserCommandNeedsNoImageCheck(t *testing.T) {
	f, _ := newSyncedFleet(t)
	linkedSandbox(f, "a", "ua", "10.0.0.1")
	if got := f.PendingImageChecks(); len(got) != 0 {
		t.Fatalf("image check for a container running a user command: %q", got)
	}
}

func TestNotExecReady(t *testing.T) {
	cases := []struct {
		name string
		opts []modeltest.PodOption
		want bool
	}{
		{"running and ready", nil, false},
		{"main container not ready", []modeltest.PodOption{modeltest.NotReady}, true},
		{"no bootstrap.sh: execd never started", []modeltest.PodOption{modeltest.WithCommand("python", "app.py")}, true},
		{"not running yet", []modeltest.PodOption{modeltest.Initializing}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newSyncedFleet(t)
			f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
			f.UpsertPod(model.SlimPod(modeltest.RunningPod("a-0", "ua", "10.0.0.1", append([]modeltest.PodOption{modeltest.OwnedBy("a", 0)}, tc.opts...)...)))
			sb := mustSandbox(t, f, bsKey("a"))
			if got := hasNotice(sb, model.CodeNotExecReady) != nil; got != tc.want {
				t.Errorf("NOT_EXEC_READY %v, want %v (%v)", got, tc.want, noticeCodes(sb))
			}
		})
	}
}

func TestRestartNotice(t *testing.T) {
	f, _ := newSyncedFleet(t)
	linkedSandbox(f, "a", "ua", "10.0.0.1", modeltest.Restarted(3, "OOMKilled", 137))
	sb := mustSandbox(t, f, bsKey("a"))
	n := hasNotice(sb, model.CodeRestarted)
	if n == nil {
		t.Fatalf("no RESTARTED: %v", noticeCodes(sb))
	}
	if !strings.Contains(n.Message, "OOMKilled") || !strings.Contains(n.Message, "137") || sb.Restarts != 3 {
		t.Errorf("message %q restarts %d", n.Message, sb.Restarts)
	}
	if n.Evidence[len(n.Evidence)-1].Kind != model.Observed {
		t.Errorf("evidence not labelled observed: %+v", n.Evidence)
	}
}

func TestBadAnnotationReachesTheSandbox(t *testing.T) {
	f, _ := newSyncedFleet(t)
	u := modeltest.UnstructuredBatchSandbox("a", map[string]string{osv1.AnnotationEndpoints: `{"oops":1}`})
	f.UpsertBatchSandbox(model.BatchSandboxFromUnstructured(u))
	sb := mustSandbox(t, f, bsKey("a"))
	n := hasNotice(sb, model.CodeBadAnnotation)
	if n == nil || !strings.Contains(n.Message, osv1.AnnotationEndpoints) {
		t.Fatalf("no BAD_ANNOTATION naming the annotation: %v", sb.Notices)
	}
}

// TestImageConfigRetried: a failed read shows IMAGE_CONFIG_UNREADABLE; when
// kube/ retries and succeeds, the sandbox hears it without another event.
func TestImageConfigRetried(t *testing.T) {
	f, _ := newSyncedFleet(t)
	linkedSandbox(f, "a", "ua", "10.0.0.1", modeltest.WithCommand(osv1.BootstrapPath, "sleep", "infinity"))
	if got := f.PendingImageChecks(); !slices.Equal(got, []string{"python:3.12"}) {
		t.Fatalf("pending %q", got)
	}
	f.SetImageConfig(model.ImageConfig{Ref: "python:3.12", Err: "registry timeout"})
	if hasNotice(mustSandbox(t, f, bsKey("a")), model.CodeImageConfigUnreadable) == nil {
		t.Fatal("no IMAGE_CONFIG_UNREADABLE after a failed read")
	}
	f.SetImageConfig(model.ImageConfig{Ref: "python:3.12", Cmd: []string{"python3"}})
	sb := mustSandbox(t, f, bsKey("a"))
	if hasNotice(sb, model.CodeImageConfigUnreadable) != nil || hasNotice(sb, model.CodeEntrypointNotRun) == nil {
		t.Fatalf("after a successful retry: %v", noticeCodes(sb))
	}
}

// A pooled sandbox whose task template runs the user's command keeps its
// container alive by design: no ENTRYPOINT_NOT_RUN (and no image read);
// failed tasks are TASK_FAILED with the counts.
func TestPooledTaskSandbox(t *testing.T) {
	f, _ := newSyncedFleet(t)
	b := pooledSandbox("task", ft0, []string{"pool-a-x1"}, "10.0.0.9")
	b.SetTask(true, []string{"python", "-m", "eval"}, model.TaskCounts{Running: 1, Succeed: 4, Failed: 2})
	f.UpsertBatchSandbox(b)
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("pool-a-x1", "ux1", "10.0.0.9", modeltest.PooledIn("pool-a"), modeltest.WithCommand(osv1.BootstrapPath, "tail", "-f", "/dev/null"))))
	if got := f.PendingImageChecks(); len(got) != 0 {
		t.Errorf("image config requested for a task sandbox: %q", got)
	}
	sb := mustSandbox(t, f, bsKey("task"))
	if hasNotice(sb, model.CodeEntrypointNotRun) != nil || hasNotice(sb, model.CodeImageConfigUnreadable) != nil {
		t.Errorf("keep-alive flagged on a sandbox whose task runs the command: %v", noticeCodes(sb))
	}
	n := hasNotice(sb, model.CodeTaskFailed)
	if n == nil || n.Severity != model.SeverityWarning || !strings.Contains(n.Message, "2 task(s) failed (running 1, succeeded 4, failed 2, pending 0, unknown 0)") {
		t.Fatalf("TASK_FAILED: %+v (notices %v)", n, noticeCodes(sb))
	}
	if !slices.ContainsFunc(n.Evidence, func(e model.Evidence) bool {
		return e.Kind == model.Observed && strings.Contains(e.Text, `spec.taskTemplate process: ["python", "-m", "eval"]`)
	}) {
		t.Errorf("evidence %+v", n.Evidence)
	}

	// Without a task the same keep-alive Pod still asks for its image config.
	f.UpsertBatchSandbox(pooledSandbox("task", ft0, []string{"pool-a-x1"}, "10.0.0.9"))
	if got := f.PendingImageChecks(); !slices.Equal(got, []string{"python:3.12"}) {
		t.Errorf("pending image checks %q, want python:3.12", got)
	}
	if sb := mustSandbox(t, f, bsKey("task")); hasNotice(sb, model.CodeTaskFailed) != nil {
		t.Errorf("TASK_FAILED without failed tasks: %v", noticeCodes(sb))
	}
}

func createdAt(t time.Time) modeltest.PodOption {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}

type wantEvidence struct {
	kind model.EvidenceKind
	text string // substring
}

func hasEvidence(n model.Notice, w wantEvidence) bool {
	return slices.ContainsFunc(n.Evidence, func(e model.Evidence) bool { return e.Kind == w.kind && strings.Contains(e.Text, w.text) })
}

func createEvent(sandbox, pod string, first, last time.Time, count int32) corev1.Event {
	return corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "BatchSandbox", Namespace: ns, Name: sandbox},
		Reason:         forensics.ReasonSuccessfulCreate, Message: "Created pod: " + pod, Type: corev1.EventTypeNormal,
		FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(last), Count: count,
	}
}

// A one-shot reader never saw the first UID: the Pod being much younger
// than its sandbox is the trace; a Pod created with its sandbox is not.
func TestPodRecreatedFromTimestamps(t *testing.T) {
	f, _ := newSyncedFleet(t)
	linkedSandbox(f, "fresh", "u1", "10.0.0.1", createdAt(ft0.Add(2*time.Second)))
	linkedSandbox(f, "again", "u2", "10.0.0.2", createdAt(ft0.Add(40*time.Minute)))

	if sb := mustSandbox(t, f, bsKey("fresh")); hasNotice(sb, model.CodePodRecreated) != nil {
		t.Errorf("POD_RECREATED on a Pod created with its sandbox: %v", noticeCodes(sb))
	}
	sb := mustSandbox(t, f, bsKey("again"))
	n := hasNotice(sb, model.CodePodRecreated)
	if n == nil || n.Severity != model.SeverityWarning || n.Pod != "again-0" || !strings.Contains(n.Message, "created 40m0s after its sandbox: re-created under the same name (inferred)") {
		t.Fatalf("POD_RECREATED: %+v (%v)", n, noticeCodes(sb))
	}
	for _, w := range []wantEvidence{{model.Observed, "sandbox created at 2026-11-29T17:24:05Z"}, {model.Observed, "Pod again-0 (uid u2) created at 2026-11-29T18:04:05Z, 40m0s after"},
		{model.Inferred, "in-container state (files, processes) is gone"}} {
		if !hasEvidence(*n, w) {
			t.Errorf("no %s evidence %q: %+v", w.kind, w.text, n.Evidence)
		}
	}

	// A pooled sandbox's Pod comes from its Pool: its age says nothing.
	f.UpsertBatchSandbox(pooledSandbox("pooled", ft0, []string{"pool-a-x"}, "10.0.0.3"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("pool-a-x", "u3", "10.0.0.3", modeltest.PooledIn("pool-a"), createdAt(ft0.Add(time.Hour)))))
	if sb := mustSandbox(t, f, bsKey("pooled")); hasNotice(sb, model.CodePodRecreated) != nil {
		t.Errorf("POD_RECREATED on a pooled sandbox: %v", noticeCodes(sb))
	}
}

// The engine's Ready condition: Ready long before the Pod existed is a
// re-creation even when the Pod is only a minute younger than its sandbox.
func TestPodRecreatedFromReadyCondition(t *testing.T) {
	f, _ := newSyncedFleet(t)
	b := batchSandbox("r", "10.0.0.4")
	b.SetReady(ft0.Add(70 * time.Second)) // late: kept
	f.UpsertBatchSandbox(b)
	f.UpsertPod(sandboxPod("r", "u4", "10.0.0.4", createdAt(ft0.Add(100*time.Second))))
	n := hasNotice(mustSandbox(t, f, bsKey("r")), model.CodePodRecreated)
	if n == nil || !strings.Contains(n.Message, "created after its sandbox was already Ready") ||
		!hasEvidence(*n, wantEvidence{model.Observed, "Ready=True condition last transitioned at 2026-11-29T17:25:15Z"}) ||
		!hasEvidence(*n, wantEvidence{model.Inferred, "the sandbox was Ready before this Pod existed"}) {
		t.Fatalf("POD_RECREATED from Ready: %+v", n)
	}
	// An early Ready is not kept, so it cannot point anywhere.
	early := batchSandbox("e")
	early.SetReady(ft0.Add(5 * time.Second))
	if early.ReadySince() != nil || !reflect.DeepEqual(early, batchSandbox("e")) {
		t.Errorf("an early Ready transition was kept: %+v", early)
	}
}

// SuccessfulCreate Events: a Pod name created twice is an observed
// re-creation, added to the timestamp notice or standing alone.
func TestRecreatedFromEvents(t *testing.T) {
	f, _ := newSyncedFleet(t)
	linkedSandbox(f, "quick", "u5", "10.0.0.5", createdAt(ft0.Add(30*time.Second)))
	linkedSandbox(f, "late", "u6", "10.0.0.6", createdAt(ft0.Add(time.Hour)))
	events := []corev1.Event{
		createEvent("quick", "quick-0", ft0, ft0, 1), createEvent("quick", "quick-0", ft0.Add(30*time.Second), ft0.Add(30*time.Second), 1),
		createEvent("late", "late-0", ft0, ft0.Add(time.Hour), 2),         // aggregated: count 2
		createEvent("quick", "quick-0-other", ft0, ft0.Add(time.Hour), 5), // another Pod's name
	}
	quick := mustSandbox(t, f, bsKey("quick"))
	if hasNotice(quick, model.CodePodRecreated) != nil {
		t.Fatal("timestamps 30 s apart already flagged")
	}
	got, changed := forensics.RecreatedFromEvents(quick, events)
	if !changed || len(got) != 1 || !strings.Contains(got[0].Message, "created 2 times under the same name (claimed by SuccessfulCreate Events)") ||
		!hasEvidence(got[0], wantEvidence{model.Claimed, "2 SuccessfulCreate Event(s) for Pod quick-0 say the controller created a Pod of that name 2 times"}) {
		t.Fatalf("quick: %+v", got)
	}
	got, changed = forensics.RecreatedFromEvents(mustSandbox(t, f, bsKey("late")), events)
	if !changed || len(got) != 1 || !strings.Contains(got[0].Message, "(inferred; 2 SuccessfulCreate Events say it was created 2 times)") ||
		!hasEvidence(got[0], wantEvidence{model.Observed, "sandbox created at"}) || !hasEvidence(got[0], wantEvidence{model.Claimed, "2 SuccessfulCreate Event(s) for Pod late-0"}) {
		t.Fatalf("late: %+v", got)
	}
	if _, changed := forensics.RecreatedFromEvents(quick, events[3:]); changed {
		t.Error("another Pod's Events counted")
	}
}

// SuccessfulCreate Events are claims: those the objects contradict (a
// creation before the sandbox existed, after the Pod there now was
// created, or about another object of the sandbox's name) are set aside.
func TestRecreatedFromEventsTheObjectsContradict(t *testing.T) {
	f, _ := newSyncedFleet(t)
	linkedSandbox(f, "quick", "u5", "10.0.0.5", createdAt(ft0.Add(30*time.Second)))
	quick := mustSandbox(t, f, bsKey("quick"))
	otherUID := createEvent("quick", "quick-0", ft0.Add(10*time.Second), ft0.Add(10*time.Second), 1)
	otherUID.InvolvedObject.UID = "not-the-sandbox"
	for name, forgedEvent := range map[string]corev1.Event{
		"before the sandbox":   createEvent("quick", "quick-0", ft0.Add(-time.Hour), ft0.Add(-time.Hour), 1),
		"after the Pod":        createEvent("quick", "quick-0", ft0.Add(time.Hour), ft0.Add(time.Hour), 1),
		"another object's uid": otherUID,
	} {
		real := createEvent("quick", "quick-0", ft0.Add(30*time.Second), ft0.Add(30*time.Second), 1)
		got, changed := forensics.RecreatedFromEvents(quick, []corev1.Event{real, forgedEvent})
		if changed || len(got) != 0 {
			t.Errorf("%s: a forged SuccessfulCreate made a re-creation: %+v", name, got)
		}
	}
}
