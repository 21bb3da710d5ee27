package forensics

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sandscope/sandscope/model"
)

func TestExplainRestart(t *testing.T) {
	block := t0.Add(100 * time.Second)
	tests := []struct {
		name       string
		pod        *corev1.Pod
		events     []corev1.Event
		blocks     []time.Time
		wantVerd   string
		agrees     bool
		fits       bool
		wantPred   float64 // seconds after t0, 0 = not checked
		wantEv     []wantEvidence
		wantNote   string
		wantWindow [2]float64
	}{
		{
			// Incident 003, Events expired: block at 100 s, probe 3 × 10 s,
			// grace 30 s: predicted 160 s; the Pod recorded 160.4 s.
			name:     "agrees within 1 s, Events expired, only the last of 3 restarts recorded",
			pod:      killedPod(3, 0, 160.4),
			blocks:   []time.Time{block},
			wantVerd: "agrees within 1 s (+0.4s)", agrees: true, fits: true, wantPred: 160,
			wantWindow: [2]float64{151, 161},
			wantEv: []wantEvidence{
				{model.Inferred, "= 2026-11-29T17:01:40Z + 3 × 10s + 30s = 2026-11-29T17:02:40Z"},
				{model.Observed, "lastState.terminated: reason Error, exit 137"},
				{model.Inferred, "exit 137: SIGKILL"},
			},
			wantNote: "restartCount 3: the Pod records only the last termination",
		},
		{
			name: "the probe's own terminationGracePeriodSeconds wins over the Pod's",
			pod: killedPod(1, 0, 135, func(p *corev1.Pod) {
				p.Spec.Containers[0].LivenessProbe.TerminationGracePeriodSeconds = ptr.To[int64](5)
			}),
			blocks:   []time.Time{block},
			wantVerd: "agrees within 1 s", agrees: true, fits: true, wantPred: 135,
		},
		{
			// timeoutSeconds 5: each attempt fails 5 s after it starts, so the
			// kill may come up to 5 s after the formula's point.
			name: "timeoutSeconds widens the window",
			pod: killedPod(1, 0, 164, func(p *corev1.Pod) {
				p.Spec.Containers[0].LivenessProbe.TimeoutSeconds = 5
			}),
			blocks:     []time.Time{block},
			wantVerd:   "+4s from the formula, inside the window",
			fits:       true,
			wantPred:   160,
			wantWindow: [2]float64{155, 165},
		},
		{
			name:     "does not fit",
			pod:      killedPod(1, 0, 400),
			blocks:   []time.Time{block},
			wantVerd: "does not fit (+240s)",
		},
		{
			name:     "with Events: the first Unhealthy and the Killing beside the prediction",
			pod:      killedPod(1, 0, 160.6),
			events:   livenessKill("uid-1", 101, 121, 3),
			blocks:   []time.Time{block},
			wantVerd: "agrees within 1 s", agrees: true, fits: true,
			wantEv: []wantEvidence{
				{model.Claimed, "first Unhealthy Event \"Liveness probe failed\" at or after the block start: 2026-11-29T17:01:41Z (+1s after it)"},
				{model.Claimed, "Killing Event \"failed liveness probe\" at 2026-11-29T17:02:01Z"},
				{model.Inferred, "the Killing Event lies inside the predicted SIGTERM window"},
			},
		},
		{
			name:     "a block start in no recorded run; the recorded one is listed as not compared",
			pod:      killedPod(2, 500, 700),
			events:   []corev1.Event{podEvent("uid-1", "Killing", killingMsg, 121, 670, 2)},
			blocks:   []time.Time{block},
			wantVerd: "not recorded in the status (the Pod keeps only the last termination), but a liveness Killing Event (an Event's claim) at 2026-11-29T17:02:01Z lies inside the predicted SIGTERM window",
			wantNote: "lastState.terminated (finished 2026-11-29T17:11:40Z) was not compared: no --block-start falls inside its run",
			wantEv:   []wantEvidence{{model.Claimed, "Killing Event \"failed liveness probe\" at 2026-11-29T17:02:01Z"}, {model.Inferred, "inside the predicted SIGTERM window"}},
		},
		{
			name:     "a block start that matches nothing at all",
			pod:      killedPod(2, 500, 700),
			events:   []corev1.Event{podEvent("uid-1", "Killing", killingMsg, 300, 670, 2)},
			blocks:   []time.Time{block},
			wantVerd: "not recorded: no recorded run contains the block start",
			wantEv:   []wantEvidence{{model.Inferred, "none of them lies inside the predicted SIGTERM window"}},
		},
		{
			name:     "Killing Events date the kills the status no longer records",
			pod:      killedPod(2, 500, 700),
			events:   []corev1.Event{podEvent("uid-1", "Killing", killingMsg, 121, 670, 2)},
			wantNote: "Killing Event \"failed liveness probe\" ×2, first at 2026-11-29T17:02:01Z, last at 2026-11-29T17:11:10Z",
		},
		{
			name:     "OOMKilled is observed OOM whatever the timing",
			pod:      testPod(withProbe(3, 10, ptr.To[int64](30)), withLast(1, "OOMKilled", 137, 0, 160)),
			blocks:   []time.Time{block},
			wantVerd: "recorded OOMKilled (observed)",
		},
		{
			name:     "no liveness probe",
			pod:      testPod(withLast(1, "Error", 137, 0, 160)),
			blocks:   []time.Time{block},
			wantNote: "has no liveness probe",
		},
		{
			name:     "no liveness probe, a tenant's liveness Killing Event: shown as a claim set aside",
			pod:      testPod(withLast(1, "Error", 137, 0, 160)),
			events:   []corev1.Event{forged(podEvent("uid-1", "Killing", killingMsg, 121, 121, 1))},
			blocks:   []time.Time{block},
			wantNote: "set aside: Killing Event at 2026-11-29T17:02:01Z \"Container sandbox failed liveness probe, will be restarted\": the Pod's spec has no liveness probe on container sandbox",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := ExplainRestart(model.SlimPod(tc.pod), tc.events, "", tc.blocks)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNote != "" && !strings.Contains(strings.Join(x.Notes, "\n"), tc.wantNote) {
				t.Errorf("notes %q lack %q", x.Notes, tc.wantNote)
			}
			if len(x.Confirm) != 2 || !strings.HasPrefix(x.Confirm[0], "kubectl describe pod -n ns sbx-0") {
				t.Errorf("confirm = %q", x.Confirm)
			}
			if tc.wantVerd == "" {
				if len(x.Checks) != 0 {
					t.Fatalf("checks %+v, want none", x.Checks)
				}
				return
			}
			if len(x.Checks) != 1 {
				t.Fatalf("checks = %d", len(x.Checks))
			}
			c := x.Checks[0]
			dump := c.Verdict + "\n"
			for _, e := range c.Evidence {
				dump += string(e.Kind) + ": " + e.Text + "\n"
			}
			t.Log(dump)
			if !strings.Contains(c.Verdict, tc.wantVerd) || c.Agrees != tc.agrees || c.Fits != tc.fits {
				t.Errorf("verdict %q agrees %v fits %v, want %q %v %v", c.Verdict, c.Agrees, c.Fits, tc.wantVerd, tc.agrees, tc.fits)
			}
			if tc.wantPred != 0 && !c.Predicted.Equal(t0.Add(time.Duration(tc.wantPred*float64(time.Second)))) {
				t.Errorf("predicted %s, want t0+%gs", c.Predicted, tc.wantPred)
			}
			if tc.wantWindow != [2]float64{} && (!c.Earliest.Equal(at(tc.wantWindow[0]).Time) || !c.Latest.Equal(at(tc.wantWindow[1]).Time)) {
				t.Errorf("window %s–%s, want t0+%v", c.Earliest, c.Latest, tc.wantWindow)
			}
			n := model.Notice{Evidence: c.Evidence}
			for _, w := range tc.wantEv {
				if !hasEvidence(n, w) {
					t.Errorf("no %s evidence %q\n%s", w.kind, w.text, dump)
				}
			}
			// A verdict computed from timing is inferred; only OOMKilled is read.
			if !strings.Contains(c.Verdict, "(inferred)") && !strings.Contains(c.Verdict, "(observed)") && !strings.HasPrefix(c.Verdict, "not recorded:") {
				t.Errorf("verdict not labelled: %q", c.Verdict)
			}
		})
	}
}

func TestExplainRestartContainer(t *testing.T) {
	pod := model.SlimPod(testPod(withProbe(3, 10, nil), withLast(1, "Error", 137, 0, 10)))
	if _, err := ExplainRestart(pod, nil, "nope", nil); !errors.Is(err, ErrNoContainer) || !strings.Contains(err.Error(), "containers: sandbox") {
		t.Fatalf("err = %v", err)
	}
	x, err := ExplainRestart(pod, nil, "sandbox", nil)
	if err != nil || x.Container != "sandbox" || len(x.Recorded) != 1 || x.Liveness == nil || x.Liveness.TimeoutSeconds != 1 {
		t.Fatalf("%+v %v", x, err)
	}
}
