package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	pprofile "github.com/google/pprof/profile"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/memstat"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/ui"
)

var (
	scale     = flag.Int("scale", 200, "sandboxes (BatchSandbox + Pod) to load")
	workers   = flag.Int("load-workers", 16, "concurrent writers while loading")
	churnRate = flag.Int("churn-rate", 100, "status updates per second during the latency measurement")
	churnFor  = flag.Duration("churn-for", 10*time.Second, "how long to churn")
	idleFor   = flag.Duration("idle", 10*time.Second, "idle-CPU window (the issue's figure is over 60s)")
	// Profiles of sandscope's own phases only (go test's -cpuprofile would
	// mostly show the simulator loading the cluster).
	startProfile   = flag.String("startprofile", "", "write a CPU profile of start-up (watcher start to first frame) to this file")
	heapProfile    = flag.String("heapprofile", "", "write a heap profile after sync to this file")
	churnProfile   = flag.String("churnprofile", "", "write a CPU profile of the event-to-screen churn window to this file")
	binProfile     = flag.String("binaryprofile", "", "write a CPU profile of the sandscope binary's whole run (start, sync, idle) to this file")
	binHeapProfile = flag.String("binaryheapprofile", "", "write a heap profile (text form, with MemStats) of the sandscope binary once synced to this file")
	holdFor        = flag.Duration("hold", 0, "after loading, print the kubeconfig and namespace and keep the cluster up this long (for manual runs of the binary)")
	waitFor        = flag.String("wait-for", "", "after loading, wait until this file no longer exists before measuring (load on a busy machine, measure once it is quiet)")
	idleProfile    = flag.String("idleprofile", "", "write a CPU profile of the idle window with the TUI running to this file")
)

// profile starts a CPU profile into path ("" = none) and returns its stop.
func profile(b *testing.B, path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatalf("cpu profile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatalf("cpu profile: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Errorf("cpu profile: %v", err)
		}
	}
}

// writeHeapProfile writes the live heap to path ("" = none).
func writeHeapProfile(b *testing.B, path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatalf("heap profile: %v", err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Errorf("heap profile: %v", err)
	}
}

func TestMain(m *testing.M) { testcluster.Main(m) }

// row is one line of the results table.
type row struct{ what, value, note string }

type results struct {
	mu   sync.Mutex
	rows []row
}

func (r *results) add(what, value, note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, row{what, value, note})
}

func (r *results) print(w io.Writer) {
	width := 0
	for _, x := range r.rows {
		width = max(width, len(x.what))
	}
	for _, x := range r.rows {
		fmt.Fprintf(w, "| %-*s | %14s | %s\n", width, x.what, x.value, x.note)
	}
}

// watcherSource adapts a kube.Watcher to ui.Source.
type watcherSource struct{ w *kube.Watcher }

func (s watcherSource) Snapshot() *fleet.Snapshot            { return s.w.Fleet().Snapshot() }
func (s watcherSource) Subscribe() (<-chan struct{}, func()) { return s.w.Subscribe() }

// benchClients are clients of cfg for namespace ns with the client-side
// rate limits sandscope's Connect uses.
func benchClients(b *testing.B, cfg *rest.Config, ns string) *kube.Clients {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100 // what sandscope's Connect uses
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		b.Fatal(err)
	}
	return clients
}

// watchUntil starts a watcher on clients (it runs until ctx ends) and
// waits until its model holds n sandboxes: the watcher, and when its
// informers had synced.
func watchUntil(ctx context.Context, b *testing.B, clients *kube.Clients, n int) (*kube.Watcher, time.Time) {
	w := kube.NewWatcher(clients, kube.WatcherOptions{})
	go func() {
		if err := w.Run(ctx); err != nil {
			b.Errorf("watcher: %v", err)
		}
	}()
	if err := w.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	synced := time.Now()
	if err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		return w.Fleet().Snapshot().NumSandboxes() >= n, nil
	}); err != nil {
		b.Fatalf("the model never held the %d sandboxes: %v", n, err)
	}
	return w, synced
}

// heapPerSandbox is the heap added since before per sandbox of n, after a
// collection (and the -heapprofile then), added to res.
func heapPerSandbox(b *testing.B, before *runtime.MemStats, n int, res *results) float64 {
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	writeHeapProfile(b, *heapProfile)
	heapPer := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	res.add("heap per sandbox (Pod + BatchSandbox)", fmt.Sprintf("%.0f B", heapPer), fmt.Sprintf("HeapAlloc %s after GC (baseline %s)", mb(after.HeapAlloc), mb(before.HeapAlloc)))
	return heapPer
}

func BenchmarkScale(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run is the measurement: use -benchtime 1x")
	}
	c, ns := testcluster.GetWithNamespace(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := *scale
	res := &results{}
	defer func() {
		if b.Failed() { // what was measured before the failure
			res.print(os.Stdout)
		}
	}()
	fmt.Printf("machine: %d CPUs (GOMAXPROCS %d), load average %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAvg())

	// 1. Load the fleet with the simulator.
	loadStart := time.Now()
	loaded, err := sim.Load(ctx, c.Kube, c.Dynamic, sim.LoadOptions{N: n, Namespace: ns, Workers: *workers, Seed: 1,
		Progress: func(done int) {
			if done%5000 == 0 {
				fmt.Printf("  loaded %d/%d (%s)\n", done, n, time.Since(loadStart).Round(time.Second))
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	loadTime := time.Since(loadStart)
	res.add("load (simulator, "+strconv.Itoa(*workers)+" workers)", loadTime.Round(time.Millisecond).String(),
		fmt.Sprintf("%d BatchSandboxes + %d Pods, 4 writes each, %.0f sandboxes/s", n, n, float64(n)/loadTime.Seconds()))
	dead := 0
	for _, l := range loaded {
		if l.Dead {
			dead++
		}
	}
	if *waitFor != "" {
		fmt.Printf("loaded; measuring once %s is gone\n", *waitFor)
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
			_, err := os.Stat(*waitFor)
			return os.IsNotExist(err), nil
		})
	}
	if *holdFor > 0 {
		fmt.Printf("holding for %s: sandscope --kubeconfig %s -n %s\n", *holdFor, c.Kubeconfig, ns)
		time.Sleep(*holdFor)
	}

	// 2a. The real binary in a real terminal: whole-process figures that no
	// in-process measurement can give (this process also holds the loader).
	realBinary(b, c, ns, n, res)
	serveBinary(ctx, b, c, ns, res)

	// Forget the loader's memory so heap and peak RSS are sandscope's alone.
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := procStatus("VmRSS")

	// 2. Start to synced model, and to the first full frame.
	clients := benchClients(b, c.Config, ns)
	stopStartProfile := profile(b, *startProfile)
	cpu0 := cpuTime()
	start := time.Now()
	w, synced := watchUntil(ctx, b, clients, n)
	syncTime, modelTime := synced.Sub(start), time.Since(start)
	app := ui.New(watcherSource{w}, ui.Backend{}, ui.Options{}, ui.DefaultKeyMap())
	app.Init()
	app.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	frame := app.View()
	frameTime := time.Since(start)
	startCPU := cpuTime() - cpu0
	stopStartProfile()
	if !strings.Contains(frame, "SANDBOX") {
		b.Fatalf("first frame has no sandbox table:\n%s", frame)
	}
	snap := w.Fleet().Snapshot()
	taken := 0
	for _, sb := range snap.Sandboxes() {
		if sb.Identity() == model.IdentityIPTaken {
			taken++
		}
	}
	res.add("sandscope: start to synced informers", ms(syncTime), "")
	res.add("sandscope: start to full model", ms(modelTime), fmt.Sprintf("%d sandboxes, %d IP_TAKEN (loaded %d dead with a reused IP)", len(snap.Sandboxes()), taken, dead))
	res.add("sandscope: start to first full frame", ms(frameTime), fmt.Sprintf("CPU %s during start-up", ms(startCPU)))

	// 3. Memory after sync.
	heapPer := heapPerSandbox(b, &before, n, res)
	res.add("process RSS after sync", procStatus("VmRSS"), "before watcher: "+rssBefore)
	res.add("process peak RSS (VmHWM) since start", procStatus("VmHWM"), "peak reset after loading")

	// 4. kubectl against the same server.
	kubectl := filepath.Join(testcluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err == nil {
		for _, args := range [][]string{
			{"get", "pods", "-A", "-o", "name"},
			{"get", "pods", "-A", "-o", "wide"},
			{"get", "batchsandboxes", "-A", "-o", "name"},
			{"get", "batchsandboxes", "-A", "-o", "wide"},
		} {
			d, lines, err := timeKubectl(ctx, kubectl, c.Kubeconfig, args)
			if err != nil {
				res.add("kubectl "+strings.Join(args, " "), "error", err.Error())
				continue
			}
			res.add("kubectl "+strings.Join(args, " "), ms(d), fmt.Sprintf("%d lines; %.1f× sandscope's first frame", lines, d.Seconds()/frameTime.Seconds()))
		}
	} else {
		res.add("kubectl", "skipped", kubectl+" not found")
	}

	// 4a. Exec at fleet scale: the one-shot CLI and the TUI's x.
	execLatency(ctx, b, c, ns, w, clients, res)

	// 5. Event-to-screen latency under churn: a running program renders to a
	// writer that spots each update's marker (a unique restart count on a
	// visible row).
	stopChurnProfile := profile(b, *churnProfile)
	eventToScreen(ctx, b, c, ns, w, snap, res)
	stopChurnProfile()

	// 6. Filter keystroke to frame at N rows.
	filterLatency(w, res)

	// 7. Idle CPU with nothing changing: time passing is the measurement
	// (after 2 s for the churn's last work to drain).
	time.Sleep(2 * time.Second)
	idle0 := cpuTime()
	time.Sleep(*idleFor)
	idleCPU := cpuTime() - idle0
	res.add(fmt.Sprintf("idle CPU over %s", *idleFor), fmt.Sprintf("%.2f %%", 100*idleCPU.Seconds()/idleFor.Seconds()), "of one core; watcher + model running, nothing changing")

	// 7a. The same with the TUI running (rendering to nowhere), which is
	// what the binary does when idle.
	uiIdle(ctx, b, w, res)

	// 8. A sweep at N (its own informers, sync, analysis).
	sweepCPU0 := cpuTime()
	sweepStart := time.Now()
	report := sweep.Sweep(ctx, []sweep.Target{sweep.ClientsTarget("bench", clients)}, sweep.Options{Timeout: 5 * time.Minute, StuckAfter: 5 * time.Minute})
	res.add("sandscope sweep (connect, sync, analyse)", ms(time.Since(sweepStart)), fmt.Sprintf("CPU %s; %d findings", ms(cpuTime()-sweepCPU0), len(report.Findings)))

	fmt.Printf("\nsandscope scale benchmark: N = %d sandboxes, %d CPUs, load average %s\n", n, runtime.NumCPU(), loadAvg())
	res.print(os.Stdout)
	b.ReportMetric(frameTime.Seconds(), "s-to-first-frame")
	b.ReportMetric(heapPer, "heap-B/sandbox")
}

func eventToScreen(ctx context.Context, b *testing.B, c *testcluster.Cluster, ns string, w *kube.Watcher, snap *fleet.Snapshot, res *results) {
	visible := snap.Sandboxes()
	if len(visible) > 30 {
		visible = visible[:30] // the first rows by name: on screen in a 50-line terminal
	}
	fw, stopProgram, ok := markerScreen(ctx, w)
	defer stopProgram()
	if !ok {
		res.add("event-to-screen latency", "n/a", "the RESTARTS column is not on screen; markers cannot be seen")
		return
	}

	// The visible rows' Pods, read once; each writer owns some of them and
	// keeps the latest version it wrote (no read per update).
	pods := c.Kube.CoreV1().Pods(ns)
	var targets []*corev1.Pod
	var targetKeys []string
	for _, sb := range visible {
		if sl := sb.PrimarySlot(); sl != nil && sl.PodName != "" {
			if pod, err := pods.Get(ctx, sl.PodName, metav1.GetOptions{}); err == nil && len(pod.Status.ContainerStatuses) > 0 {
				targets = append(targets, pod)
				targetKeys = append(targetKeys, sb.Key)
			}
		}
	}
	// The same markers seen in the model (a Snapshot after each change
	// signal) split the latency into server + watcher, and UI.
	mw := &modelWatch{frameWriter: frameWriter{pending: map[string]time.Time{}}}
	mctx, mcancel := context.WithCancel(ctx)
	defer mcancel()
	mdone := make(chan struct{})
	go func() { defer close(mdone); mw.run(mctx, w, targetKeys) }()
	var rtt durations
	if len(targets) == 0 {
		res.add("event-to-screen latency", "n/a", "no visible Pods to update")
		return
	}
	const writers = 8
	var wg sync.WaitGroup
	var errs, skipped atomic.Int64
	queues := make([]chan int, writers)
	for i := range queues {
		queues[i] = make(chan int, 64)
		wg.Add(1)
		go func(q chan int) {
			defer wg.Done()
			for k := range q {
				idx := k % len(targets)
				pod := targets[idx].DeepCopy()
				marker := strconv.Itoa(100000 + k)
				pod.Status.ContainerStatuses[0].RestartCount = int32(100000 + k)
				sent := time.Now()
				fw.expect(marker, sent)
				mw.expect(marker, sent)
				out, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
				rtt.add(time.Since(sent))
				if err != nil {
					fw.forget(marker)
					mw.forget(marker)
					errs.Add(1)
					continue
				}
				targets[idx] = out
			}
		}(queues[i])
	}
	k, cpu0 := churnTicks(func(k int) {
		// Pod idx is always written by the same writer, so its versions stay in order.
		select {
		case queues[(k%len(targets))%writers] <- k:
		default:
			skipped.Add(1)
		}
	})
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	time.Sleep(time.Second) // the measured window includes processing the last updates
	churnCPU := cpuTime() - cpu0
	stopProgram()
	mcancel()
	<-mdone
	if writes := rtt.sorted(); len(writes) > 0 {
		res.add("status write round trip p50 / p99", ms(pct(writes, 50))+" / "+ms(pct(writes, 99)), "UpdateStatus to the API server (etcd commit included)")
	}
	if mlat, _ := mw.results(); len(mlat) > 0 {
		sort.Slice(mlat, func(i, j int) bool { return mlat[i] < mlat[j] })
		res.add("status write -> model p50 / p99", ms(pct(mlat, 50))+" / "+ms(pct(mlat, 99)), fmt.Sprintf("%d updates seen in a Snapshot (server, watch, informer, fleet)", len(mlat)))
	}
	lat, lost := fw.results()
	if len(lat) == 0 {
		res.add("event-to-screen latency", "n/a", fmt.Sprintf("no update reached the screen (%d writes, %d errors)", k, errs.Load()))
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.add("event-to-screen p50 (status write -> frame)", ms(pct(lat, 50)), fmt.Sprintf("%d updates seen of %d sent at %d/s to %d visible rows (%d write errors, %d skipped: writers behind); %d not seen (superseded)", len(lat), k, *churnRate, len(targets), errs.Load(), skipped.Load(), lost))
	res.add("event-to-screen p99", ms(pct(lat, 99)), fmt.Sprintf("max %s; sandscope CPU during churn %s (%.0f %% of a core)", ms(lat[len(lat)-1]), ms(churnCPU), 100*churnCPU.Seconds()/(churnFor.Seconds()+1)))
}

// realBinary starts the sandscope binary in tmux against the cluster and
// reports the time to a synced table showing all n sandboxes, its CPU time
// and RSS and peak RSS then, and its idle CPU; then the start-up again with
// --disable-compression (the server gzips watch streams by default, which
// on a fast network costs both sides CPU for nothing).
func realBinary(b *testing.B, c *testcluster.Cluster, ns string, n int, res *results) {
	bin, cpuProfile, env, ok := tmuxBinary(b, res)
	if !ok {
		return
	}
	s, full, cpu := startBinary(b, bin, env, c, ns, n)
	pid := s.PID()
	rss, hwm := procMemory(strconv.Itoa(pid), "VmRSS"), procMemory(strconv.Itoa(pid), "VmHWM")
	res.add("sandscope binary: start to synced full table", ms(full), fmt.Sprintf("in tmux 200x50, `sandscope -n NS` (%d sandboxes on screen's count); CPU %s", n, ms(cpu)))
	proc := strconv.Itoa(pid)
	res.add("sandscope binary: RSS / peak RSS then", rss+" / "+hwm, "whole process, /proc/PID/status; of the RSS, anonymous "+
		procMemory(proc, "RssAnon")+", pages of the binary and other files "+procMemory(proc, "RssFile"))
	// Settle, then the idle window: time passing is the measurement.
	time.Sleep(2 * time.Second)
	cpu0 := procCPU(pid)
	time.Sleep(*idleFor)
	idle := procCPU(pid) - cpu0
	res.add(fmt.Sprintf("sandscope binary: idle CPU over %s", *idleFor), fmt.Sprintf("%.2f %%", 100*idle.Seconds()/idleFor.Seconds()),
		"of one core; RSS then "+procMemory(proc, "VmRSS")+" (anonymous "+procMemory(proc, "RssAnon")+", files "+procMemory(proc, "RssFile")+")")
	quitBinary(b, s)
	if share, err := gcShare(cpuProfile); err != nil {
		res.add("sandscope binary: GC share of its CPU", "unknown", err.Error())
	} else {
		res.add("sandscope binary: GC share of its CPU", share, "samples of the run's CPU profile (start, sync, idle) in the collector's mark, assist and sweep work")
	}

	s, full, cpu = startBinary(b, bin, nil, c, ns, n, "--disable-compression")
	res.add("sandscope binary --disable-compression: start to synced", ms(full), fmt.Sprintf("CPU %s; the same with the server's gzip off", ms(cpu)))
	quitBinary(b, s)
}

// tmuxBinary builds the binary for a run in tmux and names the CPU profile
// its first run writes: the collector's share of the start-up comes from
// its samples (-binaryprofile keeps the file). env is what that run needs
// to write its profiles (the heap profile too, with -binaryheapprofile).
// ok is false, the reason in res, where tmux cannot run.
func tmuxBinary(b *testing.B, res *results) (bin, cpuProfile string, env []string, ok bool) {
	if err := tmuxtest.Available(); err != nil {
		res.add("sandscope binary in tmux", "skipped", err.Error())
		return "", "", nil, false
	}
	bin = tmuxtest.BuildSandscope(b)
	cpuProfile = *binProfile
	if cpuProfile == "" {
		cpuProfile = filepath.Join(b.TempDir(), "sandscope.cpu.prof")
	}
	env = []string{"SANDSCOPE_CPUPROFILE=" + cpuProfile}
	if *binHeapProfile != "" {
		env = append(env, "SANDSCOPE_HEAPPROFILE="+*binHeapProfile)
	}
	return bin, cpuProfile, env, true
}

// churnTicks calls send with k = 0, 1, ... at -churn-rate for -churn-for:
// how many it sent, and this process's CPU time when the first was due.
func churnTicks(send func(k int)) (sent int, cpu0 time.Duration) {
	tick := time.NewTicker(time.Second / time.Duration(*churnRate))
	defer tick.Stop()
	end := time.Now().Add(*churnFor)
	cpu0 = cpuTime()
	for time.Now().Before(end) {
		<-tick.C
		send(sent)
		sent++
	}
	return sent, cpu0
}

// gcShare is the collector's share of a CPU profile's samples: background
// mark workers, mark assists (which a flat profile charges to whatever
// allocated), sweeping and the cycle's start and end.
func gcShare(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	p, err := pprofile.Parse(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	cpu := len(p.SampleType) - 1 // cpu nanoseconds, after the sample count
	var total, gc, assist int64
	for _, sample := range p.Sample {
		v := sample.Value[cpu]
		total += v
		switch gcWork(sample) {
		case "assist":
			assist += v
			gc += v
		case "gc":
			gc += v
		}
	}
	if total == 0 {
		return "", fmt.Errorf("%s: no samples", path)
	}
	return fmt.Sprintf("%.1f %% (%.2f s of %.2f s sampled; assists %.2f s)", 100*float64(gc)/float64(total),
		float64(gc)/1e9, float64(total)/1e9, float64(assist)/1e9), nil
}

// gcWork says whether a sample is the collector's work: "assist" for a mark
// assist, "gc" for the rest of it, "" otherwise.
func gcWork(s *pprofile.Sample) string {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			switch line.Function.Name {
			case "runtime.gcAssistAlloc", "runtime.gcAssistAlloc1":
				return "assist"
			case "runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.sweepone", "runtime.gcStart",
				"runtime.gcMarkTermination", "runtime.gcMarkDone", "runtime.bgscavenge":
				return "gc"
			}
		}
	}
	return ""
}

// startBinary runs the binary in tmux and waits for the synced table
// showing all n sandboxes: the session, the time that took, and the
// process's CPU time then.
func startBinary(b *testing.B, bin string, env []string, c *testcluster.Cluster, ns string, n int, args ...string) (*tmuxtest.Session, time.Duration, time.Duration) {
	start := time.Now()
	argv := append([]string{bin, "--kubeconfig", c.Kubeconfig, "-n", ns}, args...)
	s := tmuxtest.Start(b, tmuxtest.Options{Width: 200, Height: 50, Env: env}, argv...)
	s.WaitForRegexp(regexp.MustCompile(fmt.Sprintf(`(?s)synced.*\b%d sandboxes\b`, n)), 10*time.Minute)
	return s, time.Since(start), procCPU(s.PID())
}

func quitBinary(b *testing.B, s *tmuxtest.Session) {
	defer s.Close()
	s.SendKeys("q")
	if status, _ := s.WaitExit(30 * time.Second); status != 0 {
		b.Errorf("sandscope binary exited with %d after q", status)
	}
}

// procCPU is the user+system CPU time of a process, from /proc/PID/stat
// (clock ticks of 10 ms, the Linux default USER_HZ).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// runProgram runs the program the binary runs (ui.NewProgram: the UI's
// own renderer) on w in a width x 50 terminal, drawing into out. stop ends
// it and waits for its end; calling it again does no harm.
func runProgram(ctx context.Context, w *kube.Watcher, out io.Writer, width int) (stop func()) {
	app := ui.New(watcherSource{w}, ui.Backend{}, ui.Options{}, ui.DefaultKeyMap())
	pctx, cancel := context.WithCancel(ctx)
	p := ui.NewProgram(app, out, tea.WithInput(nil), tea.WithoutSignalHandler(), tea.WithContext(pctx))
	done := make(chan struct{})
	go func() { defer close(done); _, _ = p.Run() }()
	p.Send(tea.WindowSizeMsg{Width: width, Height: 50})
	return func() { cancel(); <-done }
}

// markerScreen runs the program drawing into a frameWriter, which spots
// the markers of event-to-screen latency, and waits for a frame showing
// RESTARTS, the column they are in; ok is false when none came.
func markerScreen(ctx context.Context, w *kube.Watcher) (fw *frameWriter, stop func(), ok bool) {
	fw = &frameWriter{pending: map[string]time.Time{}}
	// Wide enough for every column at its maximum width: RESTARTS is what a
	// narrower terminal may drop when one of the N rows has long cells (at
	// 50,000 sandboxes it did, and no marker could be seen).
	stop = runProgram(ctx, w, fw, 300)
	ok = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return fw.sawRestarts(), nil
	}) == nil
	return fw, stop, ok
}

// uiIdle measures idle CPU with the watcher and a running TUI program (the
// one the binary runs, in a 200x50 terminal, output discarded).
func uiIdle(ctx context.Context, b *testing.B, w *kube.Watcher, res *results) {
	stopProgram := runProgram(ctx, w, io.Discard, 200)
	// Settle, then the idle window: time passing is the measurement.
	time.Sleep(2 * time.Second)
	stop := profile(b, *idleProfile)
	cpu0 := cpuTime()
	time.Sleep(*idleFor)
	idle := cpuTime() - cpu0
	stop()
	stopProgram()
	res.add(fmt.Sprintf("idle CPU over %s, TUI running", *idleFor), fmt.Sprintf("%.2f %%", 100*idle.Seconds()/idleFor.Seconds()), "of one core; watcher + model + TUI (output discarded)")
}

// modelWatch spots the markers in the fleet: after each change signal it
// reads the target sandboxes' restart counts from a Snapshot.
type modelWatch struct{ frameWriter }

func (m *modelWatch) run(ctx context.Context, w *kube.Watcher, keys []string) {
	changes, stop := w.Subscribe()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
		}
		snap := w.Fleet().Snapshot()
		now := time.Now()
		for _, k := range keys {
			sb := snap.Sandbox(k)
			if sb == nil {
				continue
			}
			marker := strconv.Itoa(int(sb.Restarts))
			m.mu.Lock()
			if at, ok := m.pending[marker]; ok {
				m.lat = append(m.lat, now.Sub(at))
				delete(m.pending, marker)
			}
			m.mu.Unlock()
		}
	}
}

// durations collects samples from several goroutines.
type durations struct {
	mu sync.Mutex
	d  []time.Duration
}

func (d *durations) add(v time.Duration) {
	d.mu.Lock()
	d.d = append(d.d, v)
	d.mu.Unlock()
}

func (d *durations) sorted() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := slices.Clone(d.d)
	slices.Sort(out)
	return out
}

// frameWriter receives what the renderer writes and timestamps the first
// frame containing each expected marker.
type frameWriter struct {
	mu       sync.Mutex
	pending  map[string]time.Time
	lat      []time.Duration
	restarts bool // a frame showed the RESTARTS column
}

func (f *frameWriter) expect(marker string, at time.Time) {
	f.mu.Lock()
	f.pending[marker] = at
	f.mu.Unlock()
}

func (f *frameWriter) forget(marker string) {
	f.mu.Lock()
	delete(f.pending, marker)
	f.mu.Unlock()
}

// sawRestarts reports whether a frame showed the RESTARTS column title.
func (f *frameWriter) sawRestarts() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restarts
}

func (f *frameWriter) Write(p []byte) (int, error) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restarts = f.restarts || bytes.Contains(p, []byte("RESTARTS"))
	for m, at := range f.pending {
		if bytes.Contains(p, []byte(m)) {
			f.lat = append(f.lat, now.Sub(at))
			delete(f.pending, m)
		}
	}
	return len(p), nil
}

func (f *frameWriter) results() ([]time.Duration, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.lat...), len(f.pending)
}

// filterLatency types a filter into the sandboxes view, one keystroke at a
// time, and times Update + View for each.
func filterLatency(w *kube.Watcher, res *results) {
	app := ui.New(watcherSource{w}, ui.Backend{}, ui.Options{}, ui.DefaultKeyMap())
	app.Init()
	app.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	_ = app.View()
	snap := w.Fleet().Snapshot()
	if len(snap.Sandboxes()) == 0 {
		return
	}
	target := snap.Sandboxes()[len(snap.Sandboxes())/2].Name()[:8]
	var lat []time.Duration
	for round := 0; round < 5; round++ {
		app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
		for _, r := range target {
			t := time.Now()
			app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			_ = app.View()
			lat = append(lat, time.Since(t))
		}
		for range target {
			t := time.Now()
			app.Update(tea.KeyMsg{Type: tea.KeyBackspace})
			_ = app.View()
			lat = append(lat, time.Since(t))
		}
		app.Update(tea.KeyMsg{Type: tea.KeyEsc})
		_ = app.View()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.add(fmt.Sprintf("filter keystroke -> frame p50 (%d rows)", len(snap.Sandboxes())), ms(pct(lat, 50)), fmt.Sprintf("%d keystrokes typing/erasing %q", len(lat), target))
	res.add("filter keystroke -> frame p95", ms(pct(lat, 95)), "max "+ms(lat[len(lat)-1]))
}

func timeKubectl(ctx context.Context, kubectl, kubeconfig string, args []string) (time.Duration, int, error) {
	return timeCommand(ctx, append([]string{kubectl, "--kubeconfig", kubeconfig}, args...))
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	if i > 0 {
		i--
	}
	return sorted[min(i, len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
func mb(b uint64) string        { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStatus reads one field of /proc/self/status ("VmRSS", "VmHWM").
func procStatus(field string) string { return procMemory("self", field) }

// procMemory reads a memory field ("VmRSS", "VmHWM", "RssAnon", "RssFile")
// of /proc/PROC/status, PROC being "self" or a process ID, in MB.
func procMemory(proc, field string) string {
	mb := memstat.ProcMB(proc, field)
	if mb < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MB", mb)
}

// resetPeakRSS sets VmHWM to the current RSS (Linux clear_refs "5"), so the
// peak measured afterwards is sandscope's, not the loader's.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}
