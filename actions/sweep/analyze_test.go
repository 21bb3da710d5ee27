package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
)

func codesOf(fs []model.Finding) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		m[f.Code]++
	}
	return m
}

func TestAnalyzeSyntheticFleet(t *testing.T) {
	t.Parallel()
	snap, lookup := buildSynthFleet(1000)
	findings, notes := Analyze(context.Background(), "synth", snap, lookup, Options{})
	got := codesOf(findings)
	// 1000 sandboxes: i%250==7 liveness (4), i%250==11 OOM (4), i%500==13 dead (2).
	if got[model.CodeRestartLiveness] != 4 || got[model.CodeRestartOOM] != 4 {
		t.Errorf("restart findings = %v, want 4 RESTART_LIVENESS and 4 RESTART_OOM", got)
	}
	if got[model.CodeRestarted] != 0 {
		t.Errorf("RESTARTED notices must be replaced by forensics: %v", got)
	}
	if got[model.CodePodDead] != 2 {
		t.Errorf("POD_DEAD = %d, want 2 (%v)", got[model.CodePodDead], got)
	}
	if len(notes) != 0 {
		t.Errorf("notes: %v", notes)
	}
	for _, f := range findings {
		if f.Context != "synth" || f.Namespace != "opensandbox" || f.Sandbox == "" {
			t.Errorf("finding not placed: %+v", f)
		}
		if f.Code == model.CodeRestartLiveness && !strings.Contains(f.Message, "predicted") {
			t.Errorf("liveness finding without prediction: %s", f.Message)
		}
		if f.Code == model.CodeRestartOOM {
			found := false
			for _, e := range f.Evidence {
				found = found || strings.Contains(e.Text, "memory limit 2Gi") // from the full Pod, not the slim one
			}
			if !found {
				t.Errorf("OOM finding lacks the memory limit of the full Pod: %+v", f.Evidence)
			}
		}
	}
}

func TestAnalyzeCapsForensics(t *testing.T) {
	t.Parallel()
	snap, lookup := buildSynthFleet(1000)
	findings, notes := Analyze(context.Background(), "synth", snap, lookup, Options{MaxForensics: 3})
	got := codesOf(findings)
	if n := got[model.CodeRestartLiveness] + got[model.CodeRestartOOM]; n != 3 {
		t.Errorf("%d classified restarts, want 3 (%v)", n, got)
	}
	if got[model.CodeRestarted] != 5 {
		t.Errorf("RESTARTED = %d, want the 5 unexplained ones kept (%v)", got[model.CodeRestarted], got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "forensics ran for the first 3") {
		t.Errorf("notes = %v", notes)
	}
}

func TestAnalyzeLiveProbe(t *testing.T) {
	t.Parallel()
	snap, lookup := buildSynthFleet(10)
	// Pod 3's daemon does not answer; every other one does.
	dead := synthIP(3) + ":44772"
	var mu sync.Mutex
	var pinged []string
	ping := func(_ context.Context, hostPort string) error {
		mu.Lock()
		defer mu.Unlock()
		pinged = append(pinged, hostPort)
		if hostPort == dead {
			return errors.New("connection refused")
		}
		return nil
	}
	findings, _ := Analyze(context.Background(), "synth", snap, lookup, Options{Probe: true, Ping: ping})
	var execFindings []model.Finding
	for _, f := range findings {
		if f.Code == model.CodeNotExecReady {
			execFindings = append(execFindings, f)
		}
	}
	if len(execFindings) != 1 || execFindings[0].Sandbox != synthName(3) {
		t.Fatalf("NOT_EXEC_READY findings = %+v, want one for %s", execFindings, synthName(3))
	}
	if !strings.Contains(execFindings[0].Message, "GET http://"+dead+"/ping: connection refused") {
		t.Errorf("message = %q", execFindings[0].Message)
	}
	if len(pinged) != 10 {
		t.Errorf("pinged %d sandboxes, want 10 (all Running with identity OK)", len(pinged))
	}
}

// BenchmarkSweepAnalyze measures what a sweep does after sync, in-process:
// findings for every sandbox plus forensics (Pod, Events, Node lookups from
// memory) for the restarted Pods (0.8% of the fleet: 80 at 10,000 and 400
// at 50,000, all analyzed). Reported: wall time and CPU time per sweep.
// Run: go test ./actions/sweep -run '^$' -bench SweepAnalyze -benchtime 5x
func BenchmarkSweepAnalyze(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			snap, lookup := buildSynthFleet(n)
			opts := Options{MaxForensics: n}
			b.ResetTimer()
			cpu0 := cpuTime()
			var findings []model.Finding
			for range b.N {
				findings, _ = Analyze(context.Background(), "bench", snap, lookup, opts)
			}
			cpu := cpuTime() - cpu0
			b.StopTimer()
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(findings)), "findings")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
