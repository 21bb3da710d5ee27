package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/test/bench/wiregen"
)

var (
	genContexts = flag.Int("contexts", 10, "BenchmarkGeneratorContexts: generator endpoints, each serving -scale sandboxes")
	genChunk    = flag.Int("gen-chunk", 0, "generator: pause the initial lists after every this many objects (a busy server)")
	genGap      = flag.Duration("gen-gap", 0, "generator: the pause after each -gen-chunk objects")
	genPre      = flag.Bool("gen-precompute", true, "generator: encode and gzip the initial lists before measuring (wiregen.Options.Precompute)")
	// The idle window's own profile: the binary's whole-run profile
	// (-binaryprofile) is all start-up, which outweighs the idle window's
	// CPU a hundredfold.
	genIdlePerf = flag.String("idleperf", "", "BenchmarkGeneratorContexts: record the binary's stacks with perf (root) during the idle window of the k-context run into this file (perf report -i FILE)")
	genIdleOnly = flag.Bool("contexts-idle-only", false, "BenchmarkGeneratorContexts: only the k-context run and its idle window (no 1-context, no stalled run)")
)

func genOptions(n int) wiregen.Options {
	return wiregen.Options{Load: sim.LoadOptions{N: n, Namespace: "bench", Seed: 1}, Chunk: *genChunk, Gap: *genGap, Precompute: *genPre}
}

// startGenerator starts a load generator of opts and writes a kubeconfig
// whose one context ("gen") is it; the generator stops when tb ends.
func startGenerator(tb testing.TB, opts wiregen.Options) (g *wiregen.Server, kubeconfig string) {
	tb.Helper()
	servers, kubeconfig := startGenerators(tb, opts, "gen")
	return servers["gen"], kubeconfig
}

// startGenerators starts a load generator of opts for each of names and
// writes a kubeconfig with a context of that name for each; they stop
// when tb ends.
func startGenerators(tb testing.TB, opts wiregen.Options, names ...string) (servers map[string]*wiregen.Server, kubeconfig string) {
	tb.Helper()
	servers = map[string]*wiregen.Server{}
	for _, name := range names {
		g, err := wiregen.Start(opts)
		if err != nil {
			tb.Fatalf("starting generator %s: %v", name, err)
		}
		tb.Cleanup(g.Close)
		servers[name] = g
	}
	kubeconfig = filepath.Join(tb.TempDir(), "kubeconfig")
	if err := wiregen.WriteKubeconfig(kubeconfig, servers); err != nil {
		tb.Fatal(err)
	}
	return servers, kubeconfig
}

// BenchmarkGenerator measures sandscope against the loopback load generator
// (test/bench/wiregen) at -scale sandboxes, beyond what a real API server on
// this machine holds: the binary's start to a synced table, its CPU, RSS
// and idle CPU; in process, heap per sandbox, filter keystrokes, a status
// change to the frame at -churn-rate, and idle CPU with the TUI.
//
//	go test ./test/bench -run '^$' -bench '^BenchmarkGenerator$' -benchtime 1x -timeout 30m -scale 150000
func BenchmarkGenerator(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run is the measurement: use -benchtime 1x")
	}
	n := *scale
	g, kubeconfig := startGenerator(b, genOptions(n))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := &results{}
	defer func() {
		if b.Failed() {
			res.print(os.Stdout)
		}
	}()
	fmt.Printf("machine: %d CPUs (GOMAXPROCS %d), load average %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAvg())

	// 1. The real binary in tmux.
	genBinary(b, kubeconfig, g.Namespace(), n, res)

	// 2. In process: the watcher to a synced model, then heap.
	w, modelTime, cpu, heapPer := syncInProcess(ctx, b, g.Config(), g.Namespace(), n, res)
	res.add("in process: start to full model", ms(modelTime), fmt.Sprintf("CPU %s (generator's included)", ms(cpu)))

	// 3. Latencies and idle.
	filterLatency(w, res)
	stopChurnProfile := profile(b, *churnProfile)
	genEventToScreen(ctx, g, w, res)
	stopChurnProfile()
	uiIdle(ctx, b, w, res)
	if u := g.Unknown(); u != 0 {
		res.add("requests the generator does not serve", strconv.FormatInt(u, 10), "answered 404; see Requests()")
	}
	fmt.Printf("\nsandscope against the load generator: N = %d sandboxes, %d CPUs, load average %s\n", n, runtime.NumCPU(), loadAvg())
	res.print(os.Stdout)
	b.ReportMetric(heapPer, "heap-B/sandbox")
}

// syncInProcess runs a watcher against cfg until its model holds n
// sandboxes: the watcher, the time and this process's CPU that took, and
// the heap it added per sandbox after a collection.
func syncInProcess(ctx context.Context, b *testing.B, cfg *rest.Config, ns string, n int, res *results) (*kube.Watcher, time.Duration, time.Duration, float64) {
	runtime.GC()
	debug.FreeOSMemory()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	clients := benchClients(b, cfg, ns)
	stopStartProfile := profile(b, *startProfile)
	cpu0 := cpuTime()
	start := time.Now()
	w, _ := watchUntil(ctx, b, clients, n)
	modelTime, cpu := time.Since(start), cpuTime()-cpu0
	stopStartProfile()
	heapPer := heapPerSandbox(b, &before, n, res)
	return w, modelTime, cpu, heapPer
}

// genBinary runs the binary in tmux against the generator's kubeconfig:
// start to the synced table showing all n, CPU then, RSS, GC share, idle.
func genBinary(b *testing.B, kubeconfig, ns string, n int, res *results) {
	bin, cpuProfile, env, ok := tmuxBinary(b, res)
	if !ok {
		return
	}
	start := time.Now()
	s := tmuxtest.Start(b, tmuxtest.Options{Width: 200, Height: 50, Env: env}, bin, "--kubeconfig", kubeconfig, "-n", ns)
	s.WaitForRegexp(regexp.MustCompile(fmt.Sprintf(`(?s)synced.*\b%s sandboxes\b`, countPattern(n))), 40*time.Minute)
	full := time.Since(start)
	pid := s.PID()
	proc := strconv.Itoa(pid)
	res.add("binary: start to synced full table", ms(full), fmt.Sprintf("CPU %s", ms(procCPU(pid))))
	res.add("binary: RSS / peak RSS then", procMemory(proc, "VmRSS")+" / "+procMemory(proc, "VmHWM"),
		"anonymous "+procMemory(proc, "RssAnon")+", files "+procMemory(proc, "RssFile"))
	// The binary gives the load's garbage back once synced (cli's
	// tuneMemoryForWatch), in a collection that may still run when the
	// synced frame is drawn: RSS again once it has surely ended.
	time.Sleep(2 * time.Second)
	res.add("binary: RSS 2 s after sync", procMemory(proc, "VmRSS"), "anonymous "+procMemory(proc, "RssAnon"))
	cpu0 := procCPU(pid)
	time.Sleep(*idleFor)
	idle := procCPU(pid) - cpu0
	res.add(fmt.Sprintf("binary: idle CPU over %s", *idleFor), fmt.Sprintf("%.2f %%", 100*idle.Seconds()/idleFor.Seconds()), "of one core")
	quitBinary(b, s)
	if share, err := gcShare(cpuProfile); err == nil {
		res.add("binary: GC share of its CPU", share, "")
	}
}

// countPattern matches n as the header prints it, with or without
// thousands separators.
func countPattern(n int) string {
	s := strconv.Itoa(n)
	var grouped strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			grouped.WriteByte(',')
		}
		grouped.WriteRune(r)
	}
	return "(?:" + s + "|" + regexp.QuoteMeta(grouped.String()) + ")"
}

// genEventToScreen is eventToScreen with the generator as the writer: each
// update is a MODIFIED event of a visible row's Pod carrying a unique
// restart count, timed from its send to the first frame showing it.
func genEventToScreen(ctx context.Context, g *wiregen.Server, w *kube.Watcher, res *results) {
	snap := w.Fleet().Snapshot()
	visible := snap.Sandboxes()
	if len(visible) > 30 {
		visible = visible[:30]
	}
	want := map[string]bool{}
	for _, sb := range visible {
		want[sb.Name()] = true
	}
	var targets []int
	for i := 0; i < g.N() && len(targets) < len(want); i++ {
		if want[g.Name(i)] {
			targets = append(targets, i)
		}
	}
	fw, stopProgram, ok := markerScreen(ctx, w)
	defer stopProgram()
	if !ok || len(targets) == 0 {
		res.add("event-to-screen latency", "n/a", "the RESTARTS column or the visible rows' Pods are not on screen")
		return
	}
	k, cpu0 := churnTicks(func(k int) {
		marker := 100000 + k
		fw.expect(strconv.Itoa(marker), time.Now())
		g.SetRestarts(targets[k%len(targets)], int32(marker))
	})
	time.Sleep(time.Second)
	churnCPU := cpuTime() - cpu0
	stopProgram()
	lat, lost := fw.results()
	if len(lat) == 0 {
		res.add("event-to-screen latency", "n/a", fmt.Sprintf("no update reached the screen (%d sent)", k))
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.add("event-to-screen p50 / p99 (status change -> frame)", ms(pct(lat, 50))+" / "+ms(pct(lat, 99)),
		fmt.Sprintf("%d seen of %d sent at %d/s to %d visible rows, %d not seen (superseded); max %s; CPU during churn %s (generator's included)",
			len(lat), k, *churnRate, len(targets), lost, ms(lat[len(lat)-1]), ms(churnCPU)))
}

// BenchmarkGeneratorVsAPIServer checks the generator's figures against a
// real API server's: -scale sandboxes loaded into the server, the same fleet
// served by the generator, then the binary started against each twice,
// alternately (time to the synced table, its CPU, RSS), and the watcher in
// process against each (heap per sandbox).
//
//	go test ./test/bench -run '^$' -bench GeneratorVsAPIServer -benchtime 1x -timeout 60m -scale 10000
func BenchmarkGeneratorVsAPIServer(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run is the measurement: use -benchtime 1x")
	}
	if err := tmuxtest.Available(); err != nil {
		b.Skip(err)
	}
	c, ns := testcluster.GetWithNamespace(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := *scale
	opts := genOptions(n)
	opts.Load.Namespace, opts.Load.Workers = ns, *workers
	if _, err := sim.Load(ctx, c.Kube, c.Dynamic, opts.Load); err != nil {
		b.Fatal(err)
	}
	g, genConfig := startGenerator(b, opts)
	if *waitFor != "" {
		fmt.Printf("loaded; measuring once %s is gone\n", *waitFor)
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
			_, err := os.Stat(*waitFor)
			return os.IsNotExist(err), nil
		})
	}
	bin := tmuxtest.BuildSandscope(b)
	res := &results{}
	sides := []struct{ name, kubeconfig string }{{"API server", c.Kubeconfig}, {"generator", genConfig}}
	for round := 1; round <= 2; round++ {
		for _, side := range sides {
			start := time.Now()
			s := tmuxtest.Start(b, tmuxtest.Options{Width: 200, Height: 50}, bin, "--kubeconfig", side.kubeconfig, "-n", ns)
			s.WaitForRegexp(regexp.MustCompile(fmt.Sprintf(`(?s)synced.*\b%s sandboxes\b`, countPattern(n))), 10*time.Minute)
			full := time.Since(start)
			proc := strconv.Itoa(s.PID())
			res.add(fmt.Sprintf("%s, run %d: binary start to synced table", side.name, round), ms(full),
				fmt.Sprintf("CPU %s; RSS %s (anonymous %s)", ms(procCPU(s.PID())), procMemory(proc, "VmRSS"), procMemory(proc, "RssAnon")))
			quitBinary(b, s)
		}
	}
	for _, cfg := range []struct {
		name string
		cfg  *rest.Config
	}{{"API server", c.Config}, {"generator", g.Config()}} {
		wctx, wcancel := context.WithCancel(ctx)
		inner := &results{}
		_, d, cpu, heapPer := syncInProcess(wctx, b, cfg.cfg, ns, n, inner)
		wcancel()
		res.add(cfg.name+": in process, heap per sandbox", fmt.Sprintf("%.0f B", heapPer), fmt.Sprintf("model full in %s, CPU %s (this process)", ms(d), ms(cpu)))
		time.Sleep(time.Second) // the watcher's goroutines end
	}
	fmt.Printf("\nthe generator against a real API server: N = %d, %d CPUs, load average %s\n", n, runtime.NumCPU(), loadAvg())
	res.print(os.Stdout)
}

// BenchmarkGeneratorContexts measures many clusters at once: -contexts
// generator endpoints of -scale sandboxes each, as that many kubeconfig
// contexts passed with --context a,b,...: the binary's time to the synced
// table, CPU and RSS against one context's; then the same with the first
// endpoint stalled (it accepts connections and never answers), timed to the
// other contexts' sandboxes all on screen.
//
//	go test ./test/bench -run '^$' -bench GeneratorContexts -benchtime 1x -timeout 30m -scale 10000 -contexts 10
func BenchmarkGeneratorContexts(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run is the measurement: use -benchtime 1x")
	}
	if err := tmuxtest.Available(); err != nil {
		b.Skip(err)
	}
	n, k := *scale, *genContexts
	var names []string
	for i := range k {
		names = append(names, fmt.Sprintf("gen%02d", i))
	}
	servers, kubeconfig := startGenerators(b, genOptions(n), names...)
	bin := tmuxtest.BuildSandscope(b)
	res := &results{}
	run := func(what string, contexts []string, want int) *tmuxtest.Session {
		start := time.Now()
		s := tmuxtest.Start(b, tmuxtest.Options{Width: 200, Height: 50}, bin, "--kubeconfig", kubeconfig, "-n", "bench",
			"--context", strings.Join(contexts, ","))
		s.WaitForRegexp(regexp.MustCompile(fmt.Sprintf(`\b%s sandboxes\b`, countPattern(want))), 10*time.Minute)
		full := time.Since(start)
		proc := strconv.Itoa(s.PID())
		res.add(what, ms(full), fmt.Sprintf("CPU %s; RSS %s (anonymous %s)", ms(procCPU(s.PID())), procMemory(proc, "VmRSS"), procMemory(proc, "RssAnon")))
		return s
	}
	if !*genIdleOnly {
		s := run("1 context: start to all sandboxes on screen", names[:1], n)
		quitBinary(b, s)
	}
	s := run(fmt.Sprintf("%d contexts: start to all sandboxes on screen", k), names, k*n)
	time.Sleep(2 * time.Second)
	load0 := loadAvg()
	cpu0 := procCPU(s.PID())
	perfDone := recordStacks(b, s.PID(), *idleFor, *genIdlePerf)
	time.Sleep(*idleFor)
	res.add(fmt.Sprintf("%d contexts: idle CPU over %s", k, *idleFor), fmt.Sprintf("%.2f %%", 100*(procCPU(s.PID())-cpu0).Seconds()/idleFor.Seconds()),
		fmt.Sprintf("of one core; load average %s before, %s after", load0, loadAvg()))
	perfDone()
	quitBinary(b, s)
	if *genIdleOnly {
		fmt.Printf("\nsandscope against %d generator endpoints of %d sandboxes: %d CPUs, load average %s\n", k, n, runtime.NumCPU(), loadAvg())
		res.print(os.Stdout)
		return
	}
	servers[names[0]].Stall(true)
	s = run(fmt.Sprintf("%d contexts, %s stalled: start to the other %d contexts' sandboxes on screen", k, names[0], k-1), names, (k-1)*n)
	head := strings.SplitN(s.Capture(), "\n", 3)
	res.add("  its header then", strings.TrimSpace(head[0]), "")
	servers[names[0]].Stall(false)
	quitBinary(b, s)
	fmt.Printf("\nsandscope against %d generator endpoints of %d sandboxes: %d CPUs, load average %s\n", k, n, runtime.NumCPU(), loadAvg())
	res.print(os.Stdout)
}

// recordStacks samples pid's stacks with perf for d into path (nothing
// when path is ""), and returns a func that waits for perf to write them.
func recordStacks(b *testing.B, pid int, d time.Duration, path string) (wait func()) {
	if path == "" {
		return func() {}
	}
	cmd := exec.Command("perf", "record", "-q", "-F", "997", "-g", "-p", strconv.Itoa(pid), "-o", path, "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("perf record: %v", err)
	}
	return func() {
		if err := cmd.Wait(); err != nil {
			b.Errorf("perf record: %v", err)
		}
	}
}
