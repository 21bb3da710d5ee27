package clustertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/textsafe/textsafetest"
	"github.com/sandscope/sandscope/kube"
)

// hostile is what a tenant writes where sandscope reads: escape sequences
// (window title, clipboard, clear screen, cursor moves, an 8-bit CSI) and
// what passes JSON encoders and breaks YAML (DEL, C1, bidi controls).
const hostile = textsafetest.Hostile + " " + textsafetest.HostileUnicode

// hostileFleet is one namespace where a tenant wrote hostile text into
// everything its rights reach: a BatchSandbox's Pod (liveness probe,
// restarted) whose last termination's reason and message and whose Events
// are hostile, a dead plain Pod with a hostile reason, annotations, a
// Pool, and an entrypoint table whose argv and image are hostile.
func hostileFleet(t *testing.T) (c *testcluster.Cluster, ns string, block time.Time) {
	t.Helper()
	c = testcluster.Get(t)
	ns = c.Namespace(t)
	k, ct := c.Kubelet(t), c.Controller(t)

	pod := testcluster.WithLivenessProbe(testcluster.SandboxPod("evil-0", "", "python", "-m", "eval"), "curl", "-sf", "localhost:8080/healthz")
	pod.Annotations = map[string]string{"note": hostile}
	obj := testcluster.BatchSandbox("evil", pod)
	obj.SetAnnotations(map[string]string{"note": hostile})
	bsbx := ct.Create(testcluster.BatchSandboxGVR, ns, obj)
	k.CreatePod(ns, testcluster.OwnedByBatchSandbox(pod, bsbx, 0))
	k.SetRunning(ns, "evil-0", "10.66.0.1")
	ct.SetEndpoints(ns, "evil", "10.66.0.1")
	ct.SetBatchSandboxStatus(ns, "evil", map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
	block = time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	finished := block.Add(61 * time.Second)
	k.UpdatePodStatus(ns, "evil-0", func(p *corev1.Pod) {
		cs := &p.Status.ContainerStatuses[0]
		cs.RestartCount = 3
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: hostile, Message: hostile,
			StartedAt: metav1.NewTime(block.Add(-time.Hour)), FinishedAt: metav1.NewTime(finished)}}
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(finished.Add(time.Second))}}
	})
	p := k.GetPod(ns, "evil-0")
	field := "spec.containers{sandbox}"
	k.EventFor(p, field, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: "+hostile, block.Add(11*time.Second), block.Add(31*time.Second), 3)
	k.EventFor(p, field, corev1.EventTypeNormal, "Killing", "Container sandbox failed liveness probe "+hostile, block.Add(31*time.Second), time.Time{}, 1)

	dead := testcluster.SandboxPod("dead", "")
	dead.Annotations = map[string]string{"note": hostile}
	k.CreatePod(ns, dead)
	k.SetRunning(ns, "dead", "10.66.0.2")
	k.Terminate(ns, "dead", "sandbox", 1, hostile)
	k.SetPhase(ns, "dead", corev1.PodFailed, "Evicted", hostile)
	k.Event(ns, "dead", corev1.EventTypeWarning, "BackOff", hostile, time.Now().Add(-time.Minute), time.Now(), 2)

	ct.Create(testcluster.PoolGVR, ns, testcluster.Pool("warm", testcluster.SandboxPod("tmpl", ""), 1, 2, 1, 5))

	entry, err := json.Marshal(map[string]any{"image": "img " + hostile, "argv": []string{"run", hostile}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kube.CoreV1().ConfigMaps(ns).Create(testcluster.Context(t), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kube.DefaultEntrypointsConfigMap},
		Data:       map[string]string{"sha256.abc": string(entry), "malformed": "[]"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c, ns, block
}

// Every command's output, in every format, on a fleet whose tenant wrote
// hostile text everywhere it can: nothing reaches stdout or stderr that a
// terminal would obey, and what the tenant wrote still reads (as
// stand-ins in text, as escapes in JSON and YAML). Before text output went
// through one writer, `explain restart` printed the recorded termination
// reason raw (OSC 0, OSC 52, CSI 2J, BEL); JSON carried DEL, C1 and bidi
// raw; `get -o yaml` failed outright.
func TestEveryCommandsOutputIsInert(t *testing.T) {
	c, ns, block := hostileFleet(t)
	bs := block.UTC().Format(time.RFC3339)
	type run struct {
		args  []string
		exit0 bool   // the command succeeds on this fleet
		reads string // in stdout+stderr: the tenant's text, shown
	}
	var runs []run
	for _, res := range []string{"sandboxes", "pods", "pools", "findings"} {
		for _, o := range []string{"table", "wide", "name", "json", "yaml", "jsonpath={..name} {..reason}{..message}{..note}"} {
			if res == "findings" && o == "name" {
				continue // findings have no names: a usage error
			}
			runs = append(runs, run{args: []string{"get", res, "-n", ns, "-o", o}, exit0: true})
		}
	}
	runs = append(runs,
		run{args: []string{"get", "pods", "-n", ns, "-o", "yaml"}, exit0: true, reads: `\x7F`},
		run{args: []string{"get", "pods", "-n", ns, "-o", "json"}, exit0: true, reads: `\u202e`},
		run{args: []string{"sweep", "-n", ns}},
		run{args: []string{"sweep", "-n", ns, "-o", "json"}},
		run{args: []string{"sweep", "-n", ns, "-o", "junit"}},
		run{args: []string{"explain", "restart", "-n", ns, "evil-0", "--block-start", bs}, exit0: true, reads: textsafetest.Shown},
		run{args: []string{"explain", "restart", "-n", ns, "evil", "--block-start", bs, "-o", "json"}, exit0: true, reads: `\u009b2J`},
		run{args: []string{"entrypoints", "ls", "-n", ns}, exit0: true, reads: "run " + textsafetest.Shown},
		run{args: []string{"entrypoints", "ls", "-n", ns, "-o", "json"}, exit0: true},
		run{args: []string{"exec", "-n", ns, "dead", "--", "true"}},
		run{args: []string{"exec", "-n", ns, "pod/evil-0", "--expect-ip", "10.66.0.9", "--", "true"}},
		run{args: []string{"exec", "-n", ns, "--selector", "opensandbox.io/id", "--", "true"}},
		run{args: []string{"create", "-n", ns, "--image", "registry.test/img@sha256:abc", "--wait-timeout", "2s"}},
		run{args: []string{"create", "-n", ns, "--image", "registry.test/img@sha256:abc", "--wait-timeout", "2s", "-o", "json"}},
		run{args: []string{"create", "-n", ns, "--image", "img" + hostile, "--entrypoint", "/bin/app", "--wait-timeout", "2s"}},
	)
	for _, r := range runs {
		t.Run(strings.Join(r.args[:2], " ")+" "+strings.Join(r.args[len(r.args)-2:], " "), func(t *testing.T) {
			out, errOut, code := runWith(c.Kubeconfig, r.args...)
			if r.exit0 && code != 0 {
				t.Fatalf("%q: exit %d\nstdout:\n%s\nstderr:\n%s", r.args, code, out, errOut)
			}
			if out+errOut == "" {
				t.Fatalf("%q printed nothing (exit %d)", r.args, code)
			}
			textsafetest.AssertInert(t, out)
			textsafetest.AssertInert(t, errOut)
			if r.reads != "" && !strings.Contains(out+errOut, r.reads) {
				t.Errorf("%q does not show the tenant's text as %q:\n%s\n%s", r.args, r.reads, out, errOut)
			}
		})
	}
}
