package bench

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/memstat"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/kube"
)

var (
	churnDuration = flag.Duration("churn-duration", time.Minute, "how long BenchmarkChurnRSS watches churn (the issue's figure is an hour: -churn-duration 60m)")
	churnPerHour  = flag.Int("churn-per-hour", 800, "sandboxes created and deleted an hour on the real API server (the demo's default)")
	churnLive     = flag.Int("churn-live", 100, "sandboxes alive at any time on the real API server (about the demo's)")
	churnHeap     = flag.String("churn-heapprofile", "", "write a heap profile of this process (its watcher) at the end of the fleet churn to this file")
	churnIPs      = flag.Int("churn-ips", 1000, "Pod IPs the churner hands out in turn (more than -churn-live): fewer reuse addresses sooner")
)

// BenchmarkChurnRSS runs the real sandscope binary in tmux for
// -churn-duration and samples its RSS (/proc/PID/status) at the start,
// every sixth of the run and at the end; a flat RSS is the goal.
//
//   - demo: `sandscope --demo`, the simulated fleet churning on the real
//     clock (800 sandboxes an hour, ~100 live, the simulated API server in
//     the same process).
//   - fleet: `sandscope -n NS` on a real kube-apiserver while a churner
//     keeps -churn-live sandboxes (BatchSandbox + its Pod, written as the
//     controller and the kubelet would) and replaces the oldest
//     -churn-per-hour times an hour. Beside the binary, a watcher in this
//     process watches the same namespace: its live heap after a collection
//     is sampled too (the binary's heap cannot be read from outside).
//
// go test ./test/bench -run '^$' -bench ChurnRSS -benchtime 1x -churn-duration 60m -timeout 150m
func BenchmarkChurnRSS(b *testing.B) {
	b.Run("demo", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			churnDemo(b)
		}
	})
	b.Run("fleet", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			churnFleet(b)
		}
	})
}

// memSample is one sample of the binary's memory (and, for a real fleet,
// of the in-process watcher's live heap).
type memSample struct {
	at        time.Duration
	rss, hwm  float64 // MB
	anon      float64 // MB
	heap      float64 // MB, -1 when not measured
	sandboxes int
}

func (s memSample) String() string {
	h := ""
	if s.heap >= 0 {
		h = fmt.Sprintf(", watcher live heap %.1f MB", s.heap)
	}
	n := ""
	if s.sandboxes >= 0 {
		n = fmt.Sprintf(", %d sandboxes watched", s.sandboxes)
	}
	return fmt.Sprintf("%6s: RSS %.1f MB (anonymous %.1f MB), peak %.1f MB%s%s", s.at.Round(time.Second), s.rss, s.anon, s.hwm, h, n)
}

// report logs every sample and reports the first, the middle and the last.
func report(b *testing.B, samples []memSample) {
	for _, s := range samples {
		b.Log(s)
	}
	first, mid, last := samples[0], samples[len(samples)/2], samples[len(samples)-1]
	b.ReportMetric(first.rss, "rssMB-start")
	b.ReportMetric(mid.rss, "rssMB-mid")
	b.ReportMetric(last.rss, "rssMB-end")
	b.ReportMetric(last.hwm, "peakRssMB")
	if last.heap >= 0 {
		b.ReportMetric(first.heap, "heapMB-start")
		b.ReportMetric(mid.heap, "heapMB-mid")
		b.ReportMetric(last.heap, "heapMB-end")
	}
}

// sampleEvery calls sample at the start, every sixth of -churn-duration and
// at its end, and step in between until the end.
func sampleEvery(b *testing.B, sample func(at time.Duration) memSample, step func()) []memSample {
	start := time.Now()
	every := *churnDuration / 6
	samples := []memSample{sample(0)}
	next := every
	for {
		at := time.Since(start)
		if at >= next {
			samples = append(samples, sample(at))
			if next >= *churnDuration {
				return samples
			}
			next += every
		}
		step()
	}
}

func binarySample(pid int, at time.Duration) memSample {
	return memSample{at: at, rss: procMB(pid, "VmRSS"), hwm: procMB(pid, "VmHWM"), anon: procMB(pid, "RssAnon"), heap: -1, sandboxes: -1}
}

func churnDemo(b *testing.B) {
	needTmux(b)
	bin := tmuxtest.BuildSandscope(b)
	s := tmuxtest.Start(b, tmuxtest.Options{Width: 120, Height: 40, Env: []string{"XDG_CONFIG_HOME=" + b.TempDir()}}, bin, "--demo")
	s.WaitFor(`synced`, 60*time.Second)
	time.Sleep(5 * time.Second) // the first frames and the load's garbage
	pid := s.PID()
	samples := sampleEvery(b, func(at time.Duration) memSample { return binarySample(pid, at) },
		func() {
			if exited, status := s.Exited(); exited {
				b.Fatalf("sandscope --demo exited (%d):\n%s", status, s.Capture())
			}
			time.Sleep(time.Second)
		})
	report(b, samples)
	quitBinary(b, s)
}

func churnFleet(b *testing.B) {
	needTmux(b)
	if *churnIPs <= *churnLive {
		b.Fatalf("-churn-ips %d must exceed -churn-live %d: live Pods would share addresses", *churnIPs, *churnLive)
	}
	c, ns := testcluster.GetWithNamespace(b)
	ch := &churner{b: b, c: c, ns: ns}
	for range *churnLive {
		ch.create()
	}
	bin := tmuxtest.BuildSandscope(b)
	s := tmuxtest.Start(b, tmuxtest.Options{Width: 120, Height: 40, Env: []string{"XDG_CONFIG_HOME=" + b.TempDir()}},
		bin, "--kubeconfig", c.Kubeconfig, "-n", ns)
	s.WaitForRegexp(regexp.MustCompile(fmt.Sprintf(`(?s)synced.*\b%d sandboxes\b`, *churnLive)), 2*time.Minute)
	pid := s.PID()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		b.Fatal(err)
	}
	w := kube.NewWatcher(clients, kube.WatcherOptions{Namespace: ns})
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	sctx, scancel := context.WithTimeout(ctx, 2*time.Minute)
	defer scancel()
	if err := w.WaitForSync(sctx); err != nil {
		b.Fatal(err)
	}
	time.Sleep(5 * time.Second)

	every := time.Hour / time.Duration(*churnPerHour)
	nextChurn := time.Now().Add(every)
	samples := sampleEvery(b, func(at time.Duration) memSample {
		m := binarySample(pid, at)
		m.heap, m.sandboxes = memstat.LiveHeapMB(), w.Fleet().Snapshot().NumSandboxes()
		return m
	}, func() {
		if exited, status := s.Exited(); exited {
			b.Fatalf("sandscope exited (%d):\n%s", status, s.Capture())
		}
		if time.Now().Before(nextChurn) {
			time.Sleep(min(time.Until(nextChurn), time.Second))
			return
		}
		nextChurn = nextChurn.Add(every)
		ch.retire()
		ch.create()
	})
	b.Logf("%d sandboxes created and %d deleted on the API server (%d an hour, %d live, IPs from %d addresses)", ch.made, ch.made-len(ch.live), *churnPerHour, *churnLive, *churnIPs)
	report(b, samples)
	writeHeapProfile(b, *churnHeap)
	quitBinary(b, s)
}

// churner plays an engine's controller and the kubelet on a real API
// server: each sandbox is a BatchSandbox and its Running Pod, linked as
// testcluster.RunningSandbox links them; a retired one goes as the
// controller and the garbage collector take it away (the object, then its
// Pod). IPs come from -churn-ips addresses in turn: a run of more
// sandboxes than that reuses them, as a node's Pod CIDR does.
//
// It keeps its Controller and Kubelet for minutes: each one holds a
// testcluster.Context, whose timer and cleanup live until the benchmark
// ends, and one pair per sandbox (as RunningSandbox makes) was 4 KB of
// this process's heap per sandbox churned, which the watcher's live heap
// sampled here would carry as if it were the watcher's.
type churner struct {
	b    *testing.B
	c    *testcluster.Cluster
	ns   string
	live []string
	made int

	ctl     *testcluster.Controller
	kl      *testcluster.Kubelet
	renewed time.Time
}

// actors returns the churner's Controller and Kubelet, new ones every five
// minutes (a testcluster.Context ends ten minutes after it was made).
func (ch *churner) actors() (*testcluster.Controller, *testcluster.Kubelet) {
	if ch.ctl == nil || time.Since(ch.renewed) > 5*time.Minute {
		ch.ctl, ch.kl, ch.renewed = ch.c.Controller(ch.b), ch.c.Kubelet(ch.b), time.Now()
	}
	return ch.ctl, ch.kl
}

func (ch *churner) create() {
	name := fmt.Sprintf("churn-%06d", ch.made)
	n := ch.made%*churnIPs + 1
	ip := fmt.Sprintf("10.%d.%d.%d", 128+n>>16&127, n>>8&255, n&255)
	ch.made++
	ctl, kl := ch.actors()
	pod := testcluster.SandboxPod(name+"-0", "python:3.12-slim", "python", "-m", "server")
	testcluster.OwnedByBatchSandbox(pod, ctl.Create(testcluster.BatchSandboxGVR, ch.ns, testcluster.BatchSandbox(name, pod)), 0)
	kl.CreatePod(ch.ns, pod)
	ctl.SetEndpoints(ch.ns, name, ip)
	ctl.SetBatchSandboxStatus(ch.ns, name, map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
	kl.SetRunning(ch.ns, name+"-0", ip)
	ch.live = append(ch.live, name)
}

func (ch *churner) retire() {
	if len(ch.live) == 0 {
		return
	}
	name := ch.live[0]
	ch.live = ch.live[1:]
	ctl, kl := ch.actors()
	ctl.Delete(kube.BatchSandboxGVR, ch.ns, name)
	kl.ForceDelete(ch.ns, name+"-0")
}

func needTmux(b *testing.B) {
	if err := tmuxtest.Available(); err != nil {
		b.Skip(err)
	}
}

// procMB reads a memory field of /proc/PID/status in MB (-1: unreadable).
func procMB(pid int, field string) float64 { return memstat.ProcMB(strconv.Itoa(pid), field) }
