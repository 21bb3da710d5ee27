package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
)

// serveBinary runs `sandscope serve` (the exporter) against the loaded
// cluster and reports its start to /readyz, its RSS then, its idle CPU once
// the first analysis is done, and the wall time of a scrape of /metrics over
// HTTP, as Prometheus sees it.
func serveBinary(ctx context.Context, b *testing.B, c *testcluster.Cluster, ns string, res *results) {
	bin := tmuxtest.BuildSandscope(b)
	addr := deadserver.Refusing(b) // free now: serve listens on it
	// Plain HTTP: the measurement is the fleet's cost, not TLS's or the token review's.
	cmd := exec.CommandContext(ctx, bin, "serve", "--kubeconfig", c.Kubeconfig, "-n", ns, "--listen", addr, "--image-checks=off", "--insecure-plain-http")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting sandscope serve: %v", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	base := "http://" + addr
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		status, _, _ := get(base + "/readyz")
		return status == http.StatusOK, nil
	})
	if err != nil {
		b.Fatalf("sandscope serve never became ready: %v", err)
	}
	ready, cpu := time.Since(start), procCPU(pid)
	proc := strconv.Itoa(pid)
	res.add("sandscope serve: start to /readyz", ms(ready), "CPU "+ms(cpu)+"; RSS then "+procMemory(proc, "VmRSS")+" (anonymous "+
		procMemory(proc, "RssAnon")+", files "+procMemory(proc, "RssFile")+")")

	// The first analysis runs once the fleet has synced (/findings answers
	// 503 until it is done); the idle window starts after it.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		status, _, _ := get(base + "/findings")
		return status == http.StatusOK, nil
	})
	if err != nil {
		b.Fatalf("sandscope serve never served its first analysis: %v", err)
	}
	// Settle, then the idle window: time passing is the measurement.
	time.Sleep(2 * time.Second)
	cpu0 := procCPU(pid)
	time.Sleep(*idleFor)
	idle := procCPU(pid) - cpu0
	res.add(fmt.Sprintf("sandscope serve: idle CPU over %s", *idleFor), fmt.Sprintf("%.2f %%", 100*idle.Seconds()/idleFor.Seconds()),
		"of one core; RSS then "+procMemory(proc, "VmRSS"))

	var scrapes []time.Duration
	var size int
	for range 20 {
		t0 := time.Now()
		status, n, err := get(base + "/metrics")
		if status != http.StatusOK {
			b.Fatalf("GET /metrics: %d %v", status, err)
		}
		scrapes = append(scrapes, time.Since(t0))
		size = n
	}
	slices.Sort(scrapes)
	res.add("sandscope serve: one scrape of /metrics over HTTP", fmt.Sprintf("p50 %s, max %s", ms(pct(scrapes, 50)), ms(scrapes[len(scrapes)-1])),
		fmt.Sprintf("20 scrapes, %d bytes each", size))
}

// get fetches url and reads the whole body: the status and the body's size.
func get(url string) (int, int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, int(n), err
}
