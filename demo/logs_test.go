package demo

import (
	"bytes"
	"strings"
	"testing"
	"time"

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
