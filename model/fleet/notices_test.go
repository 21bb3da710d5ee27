package fleet

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
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
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("a-0", "ua", "10.0.0.1", modeltest.OwnedBy("a", 0))))
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
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("a-0", "ua", "10.0.0.1", modeltest.OwnedBy("a", 0), modeltest.Restarted(3, "OOMKilled", 137))))
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
	f.UpsertBatchSandbox(batchSandbox("a", "10.0.0.1"))
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("a-0", "ua", "10.0.0.1", modeltest.OwnedBy("a", 0), modeltest.WithCommand(osv1.BootstrapPath, "sleep", "infinity"))))
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
