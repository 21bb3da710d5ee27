package demo

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

func TestDiscoveryFindsTheEngines(t *testing.T) {
	c := NewClients("sandboxes")
	src, err := kube.DiscoverSources(context.Background(), c.Discovery)
	if err != nil {
		t.Fatal(err)
	}
	if !src.BatchSandbox || !src.Pool || !src.Snapshot || src.Agent == nil || src.Agent.Version != "v1beta1" {
		t.Fatalf("discovery on the demo clients: %+v", src)
	}
	if len(src.Notes) != 0 {
		t.Fatalf("unexpected notes: %v", src.Notes)
	}
}

// TestEveryStateWithinAMinute opens the demo as the TUI does (a kube.Watcher
// on the demo clients) and waits, in real time, for every identity state and
// notice sandscope must show. The fleet starts with 15 minutes of history;
// the same-name re-creation happens live, 15 s after the start.
func TestEveryStateWithinAMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("waits up to a minute of real time")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	d, err := Start(ctx, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo fleet ready in %s (%d operations)", time.Since(start).Round(time.Millisecond), d.Sim.Ops())
	w := kube.NewWatcher(d.Clients, d.WatcherOptions(kube.WatcherOptions{}))
	go func() {
		if err := w.Run(ctx); err != nil {
			t.Errorf("watcher: %v", err)
		}
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 20*time.Second)
	defer syncCancel()
	if err := w.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		string(model.IdentityOK), string(model.IdentityIPTaken), string(model.IdentityPodDead), string(model.IdentityPodGone),
		string(model.IdentityUIDChanged), string(model.IdentityIPStale),
		model.CodeStuckTerminating, model.CodeEntrypointNotRun, model.CodeImageConfigUnreadable, model.CodeNotExecReady,
		model.CodeStateMismatch, model.CodeFailedSticky, model.CodeExpiringSoon, model.CodeBadAnnotation, model.CodeRestarted,
		"engine:" + string(model.EngineBatchSandbox), "engine:" + string(model.EngineAgent), "engine:" + string(model.EnginePod),
		"pools", "demo-header", "finalizer-stuck",
	}
	seen := map[string]string{}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		snap := w.Fleet().Snapshot()
		if snap.Status.Demo {
			seen["demo-header"] = "SourceStatus.Demo"
		}
		if len(snap.Pools) > 0 {
			seen["pools"] = snap.Pools[0].Name
		}
		for _, sb := range snap.Sandboxes {
			seen["engine:"+string(sb.Engine)] = sb.Key
			if sb.DeletingSince != nil && len(sb.Finalizers) > 0 {
				seen["finalizer-stuck"] = sb.Key
			}
			for _, sl := range sb.Slots {
				if _, ok := seen[string(sl.Identity)]; !ok {
					seen[string(sl.Identity)] = sb.Key
				}
			}
			for _, n := range sb.Notices {
				if _, ok := seen[n.Code]; !ok {
					seen[n.Code] = sb.Key + ": " + n.Message
				}
			}
		}
		if missing(want, seen) == nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, w := range want {
		if s, ok := seen[w]; ok {
			t.Logf("%-24s %s", w, s)
		}
	}
	if m := missing(want, seen); m != nil {
		t.Fatalf("not visible within a minute: %v", m)
	}
	if errs := d.Sim.Errors(); len(errs) > 0 {
		t.Errorf("simulated operations failed: %v", errs)
	}
}

func missing(want []string, seen map[string]string) []string {
	var out []string
	for _, w := range want {
		if _, ok := seen[w]; !ok {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// TestSweepOnTheDemo sweeps the demo fleet: restart forensics need the
// simulated kubelet Events, so every restart finding must show.
func TestSweepOnTheDemo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := Start(ctx, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	report := sweep.Sweep(ctx, []sweep.Target{d.SweepTarget()}, sweep.Options{
		AllNamespaces: true, StuckAfter: 5 * time.Minute, Timeout: 30 * time.Second, ImageConfig: d.Images,
	})
	codes := map[string]int{}
	for _, f := range report.Findings {
		codes[f.Code]++
	}
	t.Logf("findings: %v", codes)
	for _, c := range []string{model.CodeIPTaken, model.CodePodDead, model.CodePodGone, model.CodeIPStale, model.CodeStuckTerminating,
		model.CodeEntrypointNotRun, model.CodeImageConfigUnreadable, model.CodeNotExecReady, model.CodeStateMismatch,
		model.CodeFailedSticky, model.CodeRestartOOM, model.CodeRestartLiveness, model.CodeRestartEvicted, model.CodeRestartUnexplained} {
		if codes[c] == 0 {
			t.Errorf("sweep --demo found no %s", c)
		}
	}
}

// TestExecAnswersFromTheSimulation runs commands through the demo transports:
// by name they reach the sandbox's own Pod; by address (execd-direct) they
// reach whichever Pod holds the IP now — the incident, reproduced without a
// host command.
func TestExecAnswersFromTheSimulation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := Start(ctx, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	w := kube.NewWatcher(d.Clients, d.WatcherOptions(kube.WatcherOptions{}))
	go w.Run(ctx) //nolint:errcheck // the test fails below if it never syncs
	syncCtx, syncCancel := context.WithTimeout(ctx, 20*time.Second)
	defer syncCancel()
	if err := w.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	var running, taken *model.Sandbox
	deadline := time.Now().Add(20 * time.Second)
	for (running == nil || taken == nil) && time.Now().Before(deadline) {
		for _, sb := range w.Fleet().Snapshot().Sandboxes {
			sl := sb.PrimarySlot()
			if sl == nil || sl.Pod == nil {
				continue
			}
			switch {
			case sl.Identity == model.IdentityOK && running == nil && sb.Engine == model.EngineBatchSandbox:
				running = sb
			case sl.Identity == model.IdentityIPTaken && sl.Holder != nil && taken == nil:
				taken = sb
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if running == nil || taken == nil {
		t.Fatalf("no OK and IP_TAKEN sandboxes to exec into (ok=%v taken=%v)", running != nil, taken != nil)
	}
	tr := d.Transports()
	var out bytes.Buffer
	sl := running.PrimarySlot()
	res, err := tr[execute.ViaKube].Exec(ctx, execute.Dispatch{Namespace: sl.Pod.Namespace, Pod: sl.Pod.Name, Container: "sandbox",
		Command: []string{"sh", "-c", "hostname && cat pi.txt"}, Stdout: &out, Stderr: &out})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec in %s: %v, exit %d, output %q", sl.Pod.Name, err, res.ExitCode, out.String())
	}
	if !strings.HasPrefix(out.String(), sl.Pod.Name+"\n") {
		t.Fatalf("exec by name reached %q, want %s", out.String(), sl.Pod.Name)
	}
	out.Reset()
	ts := taken.PrimarySlot()
	_, err = tr[execute.ViaExecdDirect].Exec(ctx, execute.Dispatch{Address: ts.RecordedIP, Command: []string{"hostname"}, Stdout: &out})
	if err != nil {
		t.Fatalf("execd-direct to %s: %v", ts.RecordedIP, err)
	}
	if got := strings.TrimSpace(out.String()); got != ts.Holder.Pod {
		t.Fatalf("a request to %s's recorded IP %s ran in %q; the holder is %s", taken.Name, ts.RecordedIP, got, ts.Holder.Pod)
	}
	t.Logf("exec to the recorded IP of %s ran in %s (the incident)", taken.Key, out.String())
	_, err = tr[execute.ViaKube].Exec(ctx, execute.Dispatch{Namespace: sl.Pod.Namespace, Pod: sl.Pod.Name, Command: []string{"sh"}, Stdin: strings.NewReader("id"), TTY: true})
	if execute.AsError(err) == nil || execute.AsError(err).Executed != execute.ExecutedNo {
		t.Fatalf("an interactive exec on the demo: %v", err)
	}
}
