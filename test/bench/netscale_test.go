package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/kube"
)

var (
	netLinks   = flag.String("net-links", "40ms:50mbit,40ms:10mbit", "BenchmarkNetScale's links, RTT:RATE, comma-separated (RATE 0: unshaped)")
	netLogReqs = flag.Bool("net-requests", true, "BenchmarkNetScale: print every request the relay carried")
	netAfter   = flag.Duration("net-after", 5*time.Second, "BenchmarkNetScale: how long to keep logging requests after a client synced")
	netNice    = flag.Int("net-nice", 0, "BenchmarkNetScale: after loading, run the measured clients, this process (relay), kube-apiserver and etcd at this nice value (e.g. -10: a machine busy with other work then takes less of their time)")
)

// BenchmarkNetScale puts the real API server behind a shaped link (see
// netlink_test.go) and measures, for each link, the sandscope binary, the
// watcher in this process and `kubectl get pods -A -o wide` through it:
// bytes on the wire, time to a synced table, the header meanwhile, and
// which requests were made when.
//
//	go test ./test/bench -run '^$' -bench '^BenchmarkNetScale$' -benchtime 1x -timeout 60m -scale 10000
func BenchmarkNetScale(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run is the measurement: use -benchtime 1x")
	}
	if why := netLinkUsable(); why != "" {
		b.Skip(why)
	}
	profiles, err := parseLinkProfiles(*netLinks)
	if err != nil {
		b.Fatal(err)
	}
	c, ns := testcluster.GetWithNamespace(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := *scale

	link, err := newNetLink()
	if err != nil {
		b.Skipf("no shaped link here: %v", err)
	}
	defer link.close()
	if err := link.shape(1e9); err != nil {
		b.Skipf("no tbf qdisc here: %v", err)
	}
	ln, err := link.listenIn(net.JoinHostPort(link.nsIP, "6443"))
	if err != nil {
		b.Fatalf("listening in %s: %v", link.ns, err)
	}
	api, err := url.Parse(c.Server)
	if err != nil {
		b.Fatal(err)
	}
	rl, err := newRelay(ln, api.Host, filepath.Join(c.StateDir, "pki"))
	if err != nil {
		b.Fatal(err)
	}
	defer rl.close()
	kubeconfig, err := linkKubeconfig(c.Kubeconfig, "https://"+net.JoinHostPort(link.nsIP, "6443"), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}

	fmt.Printf("machine: %d CPUs, load average %s\n", runtime.NumCPU(), loadAvg())
	loadStart := time.Now()
	if _, err := sim.Load(ctx, c.Kube, c.Dynamic, sim.LoadOptions{N: n, Namespace: ns, Workers: *workers, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("loaded %d BatchSandboxes + %d Pods in %s; load average %s\n", n, n, time.Since(loadStart).Round(time.Second), loadAvg())

	if *netNice != 0 {
		for _, pidFile := range []string{"self", filepath.Join(c.StateDir, "apiserver.pid"), filepath.Join(c.StateDir, "etcd.pid")} {
			if err := reniceAll(pidFile, *netNice); err != nil {
				b.Fatalf("-net-nice: %v", err)
			}
		}
	}
	var bin string
	if err := tmuxtest.Available(); err == nil {
		bin = tmuxtest.BuildSandscope(b)
	} else {
		fmt.Printf("sandscope binary skipped: %v\n", err)
	}
	kubectl := filepath.Join(testcluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		kubectl = ""
	}
	res := &results{}
	for _, p := range profiles {
		if err := link.shape(p.rate); err != nil {
			b.Fatal(err)
		}
		rl.setDelay(p.rtt / 2)
		nm := &netMeasure{b: b, link: link, relay: rl, p: p, n: n, res: res}
		if bin != "" {
			nm.binary(bin, kubeconfig, ns)
		}
		nm.watcher(ctx, kubeconfig, ns)
		if kubectl != "" {
			nm.kubectl(ctx, kubectl, kubeconfig)
		}
	}
	fmt.Printf("\nsandscope over a shaped link: N = %d sandboxes, %d CPUs, load average %s\n", n, runtime.NumCPU(), loadAvg())
	res.print(os.Stdout)
}

// linkKubeconfig writes a copy of the cluster's kubeconfig whose server is
// the relay (the serving certificate names localhost, not the relay's IP).
func linkKubeconfig(path, server, dir string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", err
	}
	for _, cl := range cfg.Clusters {
		cl.Server = server
		cl.TLSServerName = "localhost"
	}
	out := filepath.Join(dir, "kubeconfig-shaped")
	return out, clientcmd.WriteToFile(*cfg, out)
}

// netMeasure measures the clients over one link profile.
type netMeasure struct {
	b     *testing.B
	link  *netLink
	relay *relay
	p     linkProfile
	n     int
	res   *results
}

// begin starts a measurement on fresh connections: the clients' start-up
// pays its handshakes over the link, and nothing else is on it.
func (m *netMeasure) begin() (t0 time.Time, rx0, tx0 int64) {
	m.relay.dropAll()
	time.Sleep(500 * time.Millisecond)
	m.relay.log.reset()
	rx0, tx0 = m.link.counters()
	return time.Now(), rx0, tx0
}

// wire is what a client moved up to its synced point.
type wire struct {
	down, up int64 // veth bytes: frames with their IP, TCP and TLS overhead
	reqs     []loggedRequest
	t0, at   time.Time
}

func (m *netMeasure) synced(t0 time.Time, rx0, tx0 int64) wire {
	rx, tx := m.link.counters()
	return wire{down: rx - rx0, up: tx - tx0, reqs: m.relay.log.snapshot(), t0: t0, at: time.Now()}
}

// report adds the rows of one client's start over the link.
func (m *netMeasure) report(who string, w wire, extra string) {
	d := w.at.Sub(w.t0)
	prefix := fmt.Sprintf("[%s] %s", m.p.text, who)
	m.res.add(prefix+": start → synced", ms(d), extra+"; load average "+loadAvg())
	perRes := map[string]int64{}
	var before []string
	var wireDone time.Time // the server's last byte of the lists, into the link
	for _, r := range w.reqs {
		if r.at.After(w.at) {
			continue
		}
		if q, _ := url.ParseQuery(r.query); q.Get("limit") != "1" && r.lastData.After(wireDone) && !r.lastData.After(w.at) {
			wireDone = r.lastData // the freshness probe (a list of one) left out
		}
		perRes[r.resource()] += r.bytes
		before = append(before, r.resource()+" "+r.kind())
	}
	var keys []string
	for k := range perRes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f B/sandbox (%s)", k, float64(perRes[k])/float64(m.n), mbi(perRes[k])))
	}
	m.res.add(prefix+": server sent its last list byte", ms(wireDone.Sub(w.t0)),
		"the latest DATA frame of a list before synced, read by the relay from the server (it queues up to 256 TLS records ahead of the link)")
	m.res.add(prefix+": response bodies as sent", mbi(sum(perRes)), strings.Join(parts, "; "))
	m.res.add(prefix+": on the veth (down / up)", mbi(w.down)+" / "+mbi(w.up),
		fmt.Sprintf("%.0f B/sandbox down, IP+TCP+TLS included", float64(w.down)/float64(m.n)))
	if m.p.rate > 0 {
		floor := time.Duration(float64(w.down*8)/float64(m.p.rate)*float64(time.Second)) + 3*m.p.rtt
		m.res.add(prefix+": reach (≤ 1.2× bytes÷rate + 3 RTT)", fmt.Sprintf("%.2f×", d.Seconds()/floor.Seconds()),
			fmt.Sprintf("floor %s = %s down at %g Mbit/s + 3 × %s", ms(floor), mbi(w.down), float64(m.p.rate)/1e6, m.p.rtt))
	}
	m.res.add(prefix+": requests before synced", fmt.Sprint(len(before)), countWords(before))
}

// after reports what the client requested in the window after its sync.
func (m *netMeasure) after(who string, w wire) {
	time.Sleep(*netAfter)
	reqs := m.relay.log.snapshot()
	var later []string
	for _, r := range reqs {
		if r.at.After(w.at) {
			later = append(later, fmt.Sprintf("%s %s at +%s", r.resource(), r.kind(), r.at.Sub(w.at).Round(time.Millisecond)))
		}
	}
	m.res.add(fmt.Sprintf("[%s] %s: requests in the %s after synced", m.p.text, who, *netAfter), fmt.Sprint(len(later)), strings.Join(later, "; "))
	if *netLogReqs {
		fmt.Printf("\n[%s] %s: requests through the relay (arrival at the server side, relative to the start; synced at %.3fs):\n",
			m.p.text, who, w.at.Sub(w.t0).Seconds())
		printRequests(os.Stdout, reqs, w.t0)
	}
}

// binary runs the sandscope binary in tmux through the link, sampling its
// header until the synced table shows all n sandboxes.
func (m *netMeasure) binary(bin, kubeconfig, ns string) {
	t0, rx0, tx0 := m.begin()
	s := tmuxtest.Start(m.b, tmuxtest.Options{Width: 200, Height: 50}, niced(bin, "--kubeconfig", kubeconfig, "-n", ns)...)
	done := regexp.MustCompile(fmt.Sprintf(`(?s)synced.*\b%d sandboxes\b`, m.n))
	var samples []string
	last := ""
	deadline := t0.Add(15 * time.Minute)
	var w wire
	for {
		screen := s.Capture()
		if done.MatchString(screen) {
			w = m.synced(t0, rx0, tx0)
			samples = append(samples, fmt.Sprintf("%.1fs %q", time.Since(t0).Seconds(), header(screen)))
			break
		}
		if h := header(screen); h != last {
			samples = append(samples, fmt.Sprintf("%.1fs %q", time.Since(t0).Seconds(), h))
			last = h
		}
		if time.Now().After(deadline) {
			m.b.Fatalf("[%s] the binary did not show a synced table of %d sandboxes in 15 minutes:\n%s", m.p.text, m.n, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cpu := procCPU(s.PID())
	m.report("sandscope binary", w, fmt.Sprintf("`sandscope -n NS` in tmux 200x50; CPU %s", ms(cpu)))
	m.res.add(fmt.Sprintf("[%s] sandscope binary: header meanwhile", m.p.text), fmt.Sprint(len(samples)), strings.Join(samples, " | "))
	m.after("sandscope binary", w)
	quitBinary(m.b, s)
}

// header is the screen's first lines, up to the table's column titles.
func header(screen string) string {
	var out []string
	for _, line := range strings.Split(screen, "\n") {
		if strings.Contains(line, "SANDBOX") || len(out) == 3 {
			break
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(out, " / ")
}

// watcher runs sandscope's watcher in this process through the link, to
// its synced point (as BenchmarkScale measures it).
func (m *netMeasure) watcher(ctx context.Context, kubeconfig, ns string) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		m.b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 50, 100 // what sandscope's Connect uses
	clients, err := kube.NewClients(cfg, ns)
	if err != nil {
		m.b.Fatal(err)
	}
	t0, rx0, tx0 := m.begin()
	cpu0 := cpuTime()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := kube.NewWatcher(clients, kube.WatcherOptions{})
	go func() { _ = w.Run(wctx) }()
	if err := w.WaitForSync(ctx); err != nil {
		m.b.Fatal(err)
	}
	got := m.synced(t0, rx0, tx0)
	m.report("watcher in-process", got, fmt.Sprintf("kube.Watcher to WaitForSync; CPU %s (this process, relay included)", ms(cpuTime()-cpu0)))
	m.after("watcher in-process", got)
}

// kubectl times `kubectl get pods -A -o wide` through the link.
func (m *netMeasure) kubectl(ctx context.Context, kubectl, kubeconfig string) {
	args := []string{"get", "pods", "-A", "-o", "wide"}
	t0, rx0, tx0 := m.begin()
	d, lines, err := timeCommand(ctx, niced(append([]string{kubectl, "--kubeconfig", kubeconfig}, args...)...))
	got := m.synced(t0, rx0, tx0)
	who := "kubectl " + strings.Join(args, " ")
	if err != nil {
		m.res.add(fmt.Sprintf("[%s] %s", m.p.text, who), "error", err.Error())
		return
	}
	got.at = t0.Add(d)
	m.report(who, got, fmt.Sprintf("wall time of the command, %d lines", lines))
	if *netLogReqs {
		fmt.Printf("\n[%s] %s: requests through the relay:\n", m.p.text, who)
		printRequests(os.Stdout, got.reqs, t0)
	}
}

func sum(m map[string]int64) int64 {
	var t int64
	for _, v := range m {
		t += v
	}
	return t
}

func mbi(b int64) string { return fmt.Sprintf("%.2f MB", float64(b)/1e6) }

// countWords turns ["a", "b", "a"] into "2× a, 1× b".
func countWords(words []string) string {
	counts := map[string]int{}
	var order []string
	for _, w := range words {
		if counts[w] == 0 {
			order = append(order, w)
		}
		counts[w]++
	}
	var parts []string
	for _, w := range order {
		parts = append(parts, fmt.Sprintf("%d× %s", counts[w], w))
	}
	return strings.Join(parts, ", ")
}

// niced is argv run at -net-nice (nice execs the program: same PID).
func niced(argv ...string) []string {
	if *netNice == 0 {
		return argv
	}
	return append([]string{"nice", "-n", strconv.Itoa(*netNice)}, argv...)
}

// reniceAll sets the nice value of every thread of a process ("self" or a
// pid file): on Linux a nice value belongs to a thread, and new threads
// take their creator's.
func reniceAll(proc string, nice int) error {
	pid := proc
	if proc != "self" {
		data, err := os.ReadFile(proc)
		if err != nil {
			return err
		}
		pid = strings.TrimSpace(string(data))
	}
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			return fmt.Errorf("setpriority %d: %w", tid, err)
		}
	}
	return nil
}

// timeCommand runs argv and returns its wall time and the lines it printed.
func timeCommand(ctx context.Context, argv []string) (time.Duration, int, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
	}
	return d, bytes.Count(out.Bytes(), []byte("\n")), nil
}
