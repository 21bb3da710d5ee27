package demo

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// TestDemoPodsHaveLogsAndEvents reads the demo fleet as the TUI's l, p and
// e do (kube.Inspector over the demo clients): every running sandbox has
// the bootstrap's start lines and the kubelet's Events, a sandbox restarted
// by its liveness probe has the previous instance's lines and the probe's
// Events, and a log read asks for timestamps honestly.
func TestDemoPodsHaveLogsAndEvents(t *testing.T) {
	ctx := t.Context()
	d, w := startWatched(t, 3)
	in := kube.NewInspector(d.Clients, nil)
	reasons := func(sb *model.Sandbox) map[string]bool {
		evs, err := in.Events(ctx, sb)
		if err != nil {
			t.Fatalf("events of %s: %v", sb.Key, err)
		}
		out := map[string]bool{}
		for _, e := range evs {
			out[e.Reason] = true
		}
		return out
	}
	logOf := func(sb *model.Sandbox, opts kube.LogOptions) (string, error) {
		var b bytes.Buffer
		err := in.Logs(ctx, sb, opts, &b)
		return b.String(), err
	}
	var running, restarted int
	for _, sb := range w.Fleet().Snapshot().Sandboxes() {
		if !runningAgent(sb) {
			continue
		}
		running++
		text, err := logOf(sb, kube.LogOptions{})
		if err != nil || !strings.Contains(text, "bootstrap: starting execd") || strings.Contains(text, "fake logs") {
			t.Fatalf("log of %s: %q, %v", sb.Key, text, err)
		}
		stamped, err := logOf(sb, kube.LogOptions{Timestamps: true})
		if first, _, _ := strings.Cut(stamped, " "); err != nil {
			t.Fatalf("timestamped log of %s: %v", sb.Key, err)
		} else if _, err := time.Parse(time.RFC3339Nano, first); err != nil {
			t.Fatalf("timestamped log of %s starts %q: %v", sb.Key, first, err)
		}
		ev := reasons(sb)
		for _, r := range []string{"Scheduled", "Pulling", "Pulled", "Created", "Started"} {
			if !ev[r] {
				t.Fatalf("%s: no %s event in %v", sb.Key, r, ev)
			}
		}
		if sb.Restarts == 0 {
			if _, err := logOf(sb, kube.LogOptions{Previous: true}); err == nil || !strings.Contains(err.Error(), "previous terminated container") {
				t.Fatalf("%s never restarted, previous log: %v", sb.Key, err)
			}
			continue
		}
		prev, err := logOf(sb, kube.LogOptions{Previous: true})
		if err != nil || prev == text {
			t.Fatalf("previous log of %s: %q, %v (current %q)", sb.Key, prev, err, text)
		}
		if ev["Unhealthy"] && (!ev["Killing"] || !strings.Contains(prev, "still waiting for lock")) {
			t.Fatalf("%s: liveness restart without Killing or its last line: %v %q", sb.Key, ev, prev)
		}
		restarted++
	}
	if running == 0 || restarted == 0 {
		t.Fatalf("%d running agent sandboxes, %d restarted: nothing shown", running, restarted)
	}
	t.Logf("%d running agent sandboxes with logs and events, %d with a previous log", running, restarted)
}

// A log read for the last seconds (the TUI's 1-6 keys) holds only the
// lines the simulation stamped within them: the window was ignored and a
// "last 1m" view showed lines of a quarter of an hour before.
func TestDemoLogWindow(t *testing.T) {
	ctx := t.Context()
	d, w := startWatched(t, 3)
	in := kube.NewInspector(d.Clients, nil)
	read := func(sb *model.Sandbox, since *int64) []time.Time {
		var b bytes.Buffer
		if err := in.Logs(ctx, sb, kube.LogOptions{Timestamps: true, SinceSeconds: since}, &b); err != nil {
			t.Fatalf("log of %s: %v", sb.Key, err)
		}
		var stamps []time.Time
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			if line == "" {
				continue // an empty window
			}
			first, _, _ := strings.Cut(line, " ")
			at, err := time.Parse(time.RFC3339Nano, first)
			if err != nil {
				t.Fatalf("log of %s: line %q: %v", sb.Key, line, err)
			}
			stamps = append(stamps, at)
		}
		return stamps
	}
	minute := int64(60)
	cut := 0
	for _, sb := range w.Fleet().Snapshot().Sandboxes() {
		if !runningAgent(sb) {
			continue
		}
		all, recent := read(sb, nil), read(sb, &minute)
		from := d.Sim.Now().Add(-time.Minute)
		for _, at := range recent {
			if at.Before(from) {
				t.Fatalf("%s: the last minute's log holds a line of %s (the window starts %s)", sb.Key, at, from)
			}
		}
		if len(recent) < len(all) {
			cut++
		}
	}
	if cut == 0 {
		t.Fatal("no running sandbox had a line older than a minute: the window was never tested")
	}
}

// Two demos started within the same five minutes play their history at
// the same times: the moment the liveness example's worker blocked, read
// in one (the TUI's previous log), is the one the other's
// `explain restart --demo --block-start` compares with. Each demo played
// its history back from its own start, and no time read in one named a
// moment of another.
func TestDemosOfTheSameFiveMinutesShareTheirHistory(t *testing.T) {
	mark := time.Date(2026, 12, 2, 15, 45, 0, 0, time.UTC)
	blocked := func(start time.Time) time.Time {
		d, err := Start(t.Context(), Options{Clock: testingclock.NewFakeClock(start)})
		if err != nil {
			t.Fatal(err)
		}
		pods, err := d.Clients.Kube.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Name, "agent-") {
				continue
			}
			lines, _ := d.Sim.PodLog(p.Namespace, p.Name, true)
			for _, l := range lines {
				if strings.Contains(l.Text, "worker blocked") {
					return l.At
				}
			}
		}
		t.Fatalf("the demo started at %s has no liveness example's block", start)
		return time.Time{}
	}
	first, second := blocked(mark.Add(40*time.Second)), blocked(mark.Add(4*time.Minute+10*time.Second))
	if !first.Equal(second) {
		t.Fatalf("demos started 3.5 min apart in one five-minute window: the worker blocked at %s in one, %s in the other", first, second)
	}
	if next := blocked(mark.Add(5*time.Minute + time.Second)); next.Equal(first) {
		t.Fatalf("a demo of the next five minutes played the same times (%s): the history did not move on", next)
	}
}
