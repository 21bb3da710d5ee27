package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/actions/sweep"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/fleet/fleettest"
)

func TestDiscoveryFindsTheEngines(t *testing.T) {
	t.Parallel()
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
	ctx := t.Context()
	start := time.Now()
	d, w := startWatched(t, 3)
	t.Logf("demo fleet ready and watched in %s (%d operations)", time.Since(start).Round(time.Millisecond), d.Sim.Ops())
	want := []string{
		string(model.IdentityOK), string(model.IdentityIPTaken), string(model.IdentityPodDead), string(model.IdentityPodGone),
		string(model.IdentityUIDChanged), string(model.IdentityIPStale),
		model.CodeStuckTerminating, model.CodeEntrypointNotRun, model.CodeImageConfigUnreadable, model.CodeNotExecReady,
		model.CodeStateMismatch, model.CodeFailedSticky, model.CodeExpiringSoon, model.CodeBadAnnotation, model.CodeRestarted,
		"engine:" + string(model.EngineBatchSandbox), "engine:" + string(model.EngineAgent), "engine:" + string(model.EnginePod),
		"pools", "demo-header", "finalizer-stuck", "orphan-pile-up", "second-SuccessfulCreate",
	}
	seen := fleettest.Sightings{}
	// On a timeout the check below names what was never seen.
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		snap := w.Fleet().Snapshot()
		if snap.Status.Demo {
			seen["demo-header"] = "SourceStatus.Demo"
		}
		if len(snap.Pools) > 0 {
			seen["pools"] = snap.Pools[0].Name
		}
		// Seed 000's pile-up: Pods of deleted sandboxes stuck Terminating,
		// most still in PodInitializing, each in its deleted sandbox's row.
		orphans, stuck, initializing := 0, 0, 0
		for _, sp := range fleet.StuckPodsOf(snap) {
			stuck++
			if sp.PodInitializing {
				initializing++
			}
			if sb := snap.Sandbox(sp.Sandbox); sb != nil && sb.EnginePhase == model.PhaseDeleted {
				orphans++
			}
		}
		if orphans >= 5 && initializing > stuck/2 {
			seen["orphan-pile-up"] = fmt.Sprintf("%d Pods stuck, %d of deleted sandboxes, %d in PodInitializing", stuck, orphans, initializing)
		}
		// The controller's same-name re-creation: a second SuccessfulCreate.
		if evs, err := d.Clients.Kube.CoreV1().Events("").List(ctx, metav1.ListOptions{}); err == nil {
			for _, ev := range evs.Items {
				if ev.Reason == "SuccessfulCreate" && ev.Count >= 2 {
					seen["second-SuccessfulCreate"] = ev.InvolvedObject.Name + ": " + ev.Message
				}
			}
		}
		for _, sb := range snap.Sandboxes() {
			seen["engine:"+string(sb.Engine())] = sb.Key
			if sb.DeletingSince() != nil && len(sb.Finalizers()) > 0 {
				seen["finalizer-stuck"] = sb.Key
			}
		}
		seen.Note(snap)
		return seen.Missing(want) == nil, nil
	})
	seen.Log(t, want)
	if m := seen.Missing(want); m != nil {
		t.Fatalf("not visible within a minute: %v", m)
	}
	if errs := d.Sim.Errors(); len(errs) > 0 {
		t.Errorf("simulated operations failed: %v", errs)
	}
}

// TestSweepOnTheDemo sweeps the demo fleet: restart forensics need the
// simulated kubelet Events, so every restart finding must show.
func TestSweepOnTheDemo(t *testing.T) {
	ctx := t.Context()
	d := startDemo(t, 5)
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
	ctx := t.Context()
	d, w := startWatched(t, 9)
	running, taken := runningAndTaken(t, w, false)
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
		t.Fatalf("a request to %s's recorded IP %s ran in %q; the holder is %s", taken.Name(), ts.RecordedIP, got, ts.Holder.Pod)
	}
	t.Logf("exec to the recorded IP of %s ran in %s (the incident)", taken.Key, out.String())
	// execd has no terminal, in the demo as in a cluster (the shell is pods/exec).
	_, err = tr[execute.ViaExecd].Exec(ctx, execute.Dispatch{Namespace: sl.Pod.Namespace, Pod: sl.Pod.Name, Command: []string{"sh"}, Stdin: strings.NewReader("id"), TTY: true})
	if e := refusalOf(err); e == nil || e.Executed != refusal.ExecutedNo || e.Code != refusal.CodeUsage {
		t.Fatalf("a terminal over the demo's execd: %v; want a USAGE refusal, executed no", err)
	}
}

// TestCreateInTheDemo creates sandboxes in the demo fleet the way
// `sandscope create --demo` and the TUI's create form do: the simulated
// registry resolves the start command, the simulator adopts the object the
// create writes and plays its engine and kubelet, and readiness is probed
// through the identity-checked exec path over the simulated exec daemons.
func TestCreateInTheDemo(t *testing.T) {
	ctx := t.Context()
	d := startDemo(t, 13)
	creator := d.Creator()
	creator.ProbeInterval = 100 * time.Millisecond
	ns := d.Clients.Namespace
	run := func(t *testing.T, req create.Request) (*create.Result, *create.Error, []create.StageUpdate) {
		t.Helper()
		req.WaitTimeout, req.CleanupWait = time.Minute, 5*time.Second
		var updates []create.StageUpdate
		res, err := creator.Run(ctx, req, func(u create.StageUpdate) { updates = append(updates, u) })
		var cerr *create.Error
		if err != nil && !errors.As(err, &cerr) {
			t.Fatalf("error %v (%T) is not a *create.Error", err, err)
		}
		var stages []create.Stage
		for _, u := range updates {
			stages = append(stages, u.Stage)
		}
		t.Logf("stages %v; error %v", stages, cerr)
		return res, cerr, updates
	}
	// leftovers are the objects sandscope created that still exist.
	leftovers := func(t *testing.T, id string) []string {
		t.Helper()
		var left []string
		sel := metav1.ListOptions{LabelSelector: kube.LabelCreatedBy + "=sandscope"}
		objs, err := d.Clients.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).List(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs.Items {
			if id == "" || o.GetName() == id {
				left = append(left, "batchsandbox/"+o.GetName())
			}
		}
		if id != "" {
			pods, err := d.Clients.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: osv1.LabelSandboxID + "=" + id})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods.Items {
				left = append(left, "pod/"+p.Name)
			}
		}
		return left
	}

	t.Run("ready with the registry's start command", func(t *testing.T) {
		cfg, err := d.Images.Read(ctx, sim.ImageTrainer)
		if err != nil {
			t.Fatal(err)
		}
		res, cerr, updates := run(t, create.Request{Image: sim.ImageTrainer})
		if cerr != nil {
			t.Fatalf("create failed: %v", cerr)
		}
		if res.Stage != create.StageReady || res.Entrypoint.Source != create.SourceRegistry || res.Entrypoint.Digest != cfg.Digest ||
			!slices.Equal(res.Entrypoint.Argv, imageconfig.Argv(cfg)) {
			t.Errorf("result: stage %s, entrypoint %+v; want Ready with %v from the registry (%s)", res.Stage, res.Entrypoint, imageconfig.Argv(cfg), cfg.Digest)
		}
		want := []create.Stage{create.StageQueued, create.StageScheduled, create.StagePullingImage, create.StageStarting, create.StageReady}
		var got []create.Stage
		for _, u := range updates {
			got = append(got, u.Stage)
		}
		if !slices.Equal(got, want) || !updates[len(updates)-1].Final {
			t.Errorf("stages %v, want %v ending Final", got, want)
		}
		pod, err := d.Clients.Kube.CoreV1().Pods(ns).Get(ctx, res.Sandbox+"-0", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the sandbox's Pod: %v", err)
		}
		if pod.Status.Phase != corev1.PodRunning || pod.Labels[osv1.LabelBatchSandboxName] != res.Sandbox {
			t.Errorf("pod %s: phase %s, labels %v", pod.Name, pod.Status.Phase, pod.Labels)
		}
		want0 := strings.Join(append([]string{osv1.BootstrapPath}, imageconfig.Argv(cfg)...), " ")
		if got := strings.Join(pod.Spec.Containers[0].Command, " "); got != want0 {
			t.Errorf("main container runs %q, want %q", got, want0)
		}
		var out bytes.Buffer
		if _, err := d.Transports()[execute.ViaExecd].Exec(ctx, execute.Dispatch{Namespace: ns, Pod: pod.Name, Command: []string{"hostname"}, Stdout: &out}); err != nil || strings.TrimSpace(out.String()) != pod.Name {
			t.Errorf("exec in the created sandbox: %v, output %q", err, out.String())
		}
	})

	t.Run("registry unreachable: refused before creating", func(t *testing.T) {
		before := leftovers(t, "")
		_, cerr, _ := run(t, create.Request{Image: sim.ImageUnreachable})
		if cerr == nil {
			t.Fatal("create of an image whose registry does not answer succeeded")
		}
		if cerr.Created() || cerr.Code != create.CodeEntrypointUnresolved ||
			!cerr.Retryable || cerr.Executed != refusal.ExecutedNo || cerr.Sandbox != "" {
			t.Errorf("error %+v; want a retryable %s refusal, executed no, nothing created", cerr, create.CodeEntrypointUnresolved)
		}
		if after := leftovers(t, ""); len(after) != len(before) {
			t.Errorf("a refused create left objects: before %v, after %v", before, after)
		}
	})

	t.Run("image cannot be pulled: fails after creating and cleans up", func(t *testing.T) {
		_, cerr, _ := run(t, create.Request{Image: sim.ImageMissing})
		if cerr == nil {
			t.Fatal("create of an image the nodes cannot pull succeeded")
		}
		if !cerr.Created() || cerr.Sandbox == "" || cerr.Stage == "" || cerr.Executed != refusal.ExecutedNo {
			t.Errorf("error %+v; want a failure after creating with the last stage, executed no", cerr)
		}
		if (cerr.Code != create.CodeImagePull && cerr.Code != create.CodeEngineFailed) ||
			(!strings.Contains(cerr.Message, "ErrImagePull") && !strings.Contains(cerr.Message, "ImagePullBackOff")) {
			t.Errorf("error %s %q; want an image pull failure with its reason", cerr.Code, cerr.Message)
		}
		if cerr.Cleanup == nil || !cerr.Cleanup.Deleted || len(cerr.Cleanup.Terminating) > 0 {
			t.Errorf("cleanup %+v; want everything deleted", cerr.Cleanup)
		}
		if left := leftovers(t, cerr.Sandbox); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		// The engine must not bring anything back on its next passes (it
		// adopts every second): nothing may happen in this window.
		time.Sleep(2500 * time.Millisecond)
		if left := leftovers(t, cerr.Sandbox); len(left) > 0 {
			t.Errorf("left behind after the simulator's next passes: %v", left)
		}
	})

	t.Run("start command ends at once", func(t *testing.T) {
		// python:3.12's CMD is a bare python3: without a terminal it reads
		// end-of-file and exits, so the sandbox never becomes exec-ready.
		_, cerr, _ := run(t, create.Request{Image: sim.ImagePython})
		if cerr == nil || cerr.Code != create.CodeMainExited || cerr.Executed != refusal.ExecutedYes || !cerr.Created() {
			t.Fatalf("error %+v; want %s, executed yes, failed after creating", cerr, create.CodeMainExited)
		}
		if left := leftovers(t, cerr.Sandbox); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})

	t.Run("pooled", func(t *testing.T) {
		res, cerr, _ := run(t, create.Request{Pool: "warm-python", Entrypoint: []string{"python3", "/srv/task.py"}})
		if cerr != nil {
			t.Fatalf("pooled create failed: %v", cerr)
		}
		pods, err := d.Clients.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: osv1.LabelBatchSandboxName + "=" + res.Sandbox})
		if err != nil || len(pods.Items) != 1 || pods.Items[0].Labels[osv1.LabelPoolName] != "warm-python" {
			t.Fatalf("pods allocated to %s: %v (%v); want one of pool warm-python", res.Sandbox, pods, err)
		}
	})

	t.Run("warm pool", func(t *testing.T) {
		// The claim adopts a free member of agents-warm, as the extensions
		// controller does, instead of waiting for a binding that never comes.
		res, cerr, _ := run(t, create.Request{WarmPool: "agents-warm"})
		if cerr != nil {
			t.Fatalf("warm-pool create failed: %v", cerr)
		}
		if res.Stage != create.StageReady || res.Claim == "" || !strings.HasPrefix(res.Sandbox, "agents-warm-") {
			t.Errorf("result: stage %s, claim %q, sandbox %q; want Ready on a member of agents-warm", res.Stage, res.Claim, res.Sandbox)
		}
	})

	if errs := d.Sim.Errors(); len(errs) > 0 {
		t.Errorf("simulated operations failed: %v", errs)
	}
}

// startDemo starts the demo fleet with seed for the test's lifetime.
func startDemo(t *testing.T, seed int64) *Demo {
	t.Helper()
	d, err := Start(t.Context(), Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startWatched starts the demo fleet with seed and a watcher over it, and
// waits until the watcher has synced; both end with the test.
func startWatched(t *testing.T, seed int64) (*Demo, *kube.Watcher) {
	t.Helper()
	ctx := t.Context()
	d := startDemo(t, seed)
	w := kube.NewWatcher(d.Clients, d.WatcherOptions(kube.WatcherOptions{}))
	go func() {
		// Run fails only when it cannot start, so before WaitForSync gives up.
		if err := w.Run(ctx); err != nil {
			t.Errorf("watcher: %v", err)
		}
	}()
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := w.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	return d, w
}

// runningAgent: sb is an agent-sandbox Sandbox whose Pod is Running.
func runningAgent(sb *model.Sandbox) bool {
	return sb.Engine() == model.EngineAgent && len(sb.Slots) > 0 && sb.Slots[0].Pod != nil && sb.Slots[0].Pod.Status.Phase == "Running"
}

// holderRuns: the Pod holding an address is its sandbox's running Pod.
func holderRuns(snap *fleet.Snapshot, h *model.Holder) bool {
	sb := snap.Sandbox(h.Sandbox)
	return sb != nil && sb.State == model.StateRunning
}

// runningAndTaken waits for a BatchSandbox whose Pod is OK (quiet: without
// notices too) and a sandbox whose recorded IP another Pod holds, and
// fails the test if the demo shows neither within 20 s.
func runningAndTaken(t *testing.T, w *kube.Watcher, quiet bool) (running, taken *model.Sandbox) {
	t.Helper()
	_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		snap := w.Fleet().Snapshot()
		for _, sb := range snap.Sandboxes() {
			sl := sb.PrimarySlot()
			if sl == nil || sl.Pod == nil {
				continue
			}
			switch {
			case sl.Identity == model.IdentityOK && running == nil && sb.Engine() == model.EngineBatchSandbox && (!quiet || len(sb.Notices) == 0):
				running = sb
			case sl.Identity == model.IdentityIPTaken && sl.Holder != nil && taken == nil && holderRuns(snap, sl.Holder):
				// A holder still initialising (a deleted sandbox's Pod stuck
				// Terminating holds its IP too) answers nothing yet.
				taken = sb
			}
		}
		return running != nil && taken != nil, nil
	})
	if running == nil || taken == nil {
		t.Fatalf("no OK and IP_TAKEN sandboxes (ok=%v taken=%v)", running != nil, taken != nil)
	}
	return running, taken
}

// TestSweepProbeIsSimulated: sweep --probe on the demo pings the simulated
// exec daemons, never the network (the simulated Pod IPs may be anyone's
// on this machine's). A sandbox the simulation runs without execd is
// NOT_EXEC_READY from the probe; one whose execd answers is not.
func TestSweepProbeIsSimulated(t *testing.T) {
	ctx := t.Context()
	d := startDemo(t, 5)
	target := d.SweepTarget()
	simulated := target.Ping
	if simulated == nil {
		t.Fatal("the demo's sweep target has no simulated probe")
	}
	var mu sync.Mutex
	answers := map[string]error{} // host:port → what the simulation answered
	target.Ping = func(ctx context.Context, hostPort string) error {
		err := simulated(ctx, hostPort)
		mu.Lock()
		defer mu.Unlock()
		answers[hostPort] = err
		return err
	}
	report := sweep.Sweep(ctx, []sweep.Target{target}, sweep.Options{
		AllNamespaces: true, Timeout: 30 * time.Second, Probe: true,
		Ping: func(_ context.Context, hostPort string) error {
			t.Errorf("the demo's probe of %s went to the network", hostPort)
			return errors.New("dialled from this machine")
		},
	})
	live := map[string]model.Finding{} // host:port → the probe's NOT_EXEC_READY
	for _, f := range report.Findings {
		if f.Code != model.CodeNotExecReady || !strings.Contains(f.Message, "does not answer") {
			continue
		}
		addr, _, _ := strings.Cut(strings.TrimPrefix(f.Evidence[0].Text, "GET http://"), "/ping")
		live[addr] = f
	}
	ready, down := 0, 0
	for addr, err := range answers {
		f, found := live[addr]
		switch {
		case err == nil && found:
			t.Errorf("%s answered the simulated probe, yet %s/%s is NOT_EXEC_READY: %s", addr, f.Namespace, f.Sandbox, f.Message)
		case err != nil && !found:
			t.Errorf("%s did not answer the simulated probe (%v), yet no NOT_EXEC_READY", addr, err)
		case err == nil:
			ready++
		default:
			down++
			// The simulation says so by another way in too: its execd
			// refuses a command.
			host, _, _ := net.SplitHostPort(addr)
			if _, xerr := d.Sim.Exec(ctx, sim.ExecRequest{Address: host, Execd: true, Command: []string{"true"}}); xerr == nil {
				t.Errorf("%s/%s: NOT_EXEC_READY from the probe, but its simulated execd runs commands", f.Namespace, f.Sandbox)
			}
		}
	}
	if ready == 0 || down == 0 {
		t.Errorf("probed %d ready and %d execd-less sandboxes; want some of each (answers %v)", ready, down, answers)
	}
	if len(live) != down {
		t.Errorf("%d NOT_EXEC_READY from the probe, %d sandboxes the simulation says are not exec-ready", len(live), down)
	}
}
