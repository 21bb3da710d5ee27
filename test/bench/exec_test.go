package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// execRounds is how many execs each exec figure is taken over.
const execRounds = 20

// execLatency measures exec at fleet scale: one sandbox Pod on a test
// kubelet in the loaded namespace, then
//   - the real binary, `sandscope -n NS exec SANDBOX -- true`, end to end
//     (process start, targeted reads, the check, pods/exec, the check after);
//   - the TUI's `x`: the identity check before dispatch, from the watched
//     model, and the whole run;
//   - `kubectl exec` of the same Pod, for scale.
func execLatency(ctx context.Context, b *testing.B, c *testcluster.Cluster, ns string, w *kube.Watcher, clients *kube.Clients, res *results) {
	const name = "bench-exec"
	n := c.StartNode(b, "bench-exec-node", testcluster.NodeOptions{PortForward: kubelettest.EchoPortForward})
	n.Run(ns, testcluster.SandboxPod(name, ""), "10.254.254.7")

	var sb *model.Sandbox
	if err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, s := range w.Fleet().Snapshot().Sandboxes() {
			if s.Name() == name && s.Identity() == model.IdentityOK {
				sb = s
			}
		}
		return sb != nil, nil
	}); err != nil {
		b.Fatalf("sandbox %s never showed OK: %v", name, err)
	}

	// The TUI's x, from the watched model.
	x := execute.New(execute.Options{Cluster: clients, Snapshot: w.Fleet().Snapshot, Transports: execute.DefaultTransports(clients, "", 0)})
	var check, whole []time.Duration
	for range execRounds {
		start := time.Now()
		r, err := x.Run(ctx, execute.Request{Sandbox: sb, Command: []string{"true"}, Stdout: io.Discard, Stderr: io.Discard})
		if err != nil || r.ExitCode != 0 {
			b.Fatalf("x: %v (exit %d)", err, r.ExitCode)
		}
		check, whole = append(check, r.CheckTook), append(whole, time.Since(start))
	}
	res.add("TUI x: identity check before dispatch", medianP95(check), fmt.Sprintf("%d runs; live Pod read + model; whole run %s", execRounds, medianP95(whole)))

	// The real binary, one process per exec.
	if err := tmuxtest.Available(); err == nil {
		bin := tmuxtest.BuildSandscope(b)
		var runs []time.Duration
		for range execRounds {
			cmd := exec.CommandContext(ctx, bin, "--kubeconfig", c.Kubeconfig, "-n", ns, "exec", name, "--", "true")
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("sandscope exec: %v: %s", err, out)
			}
			runs = append(runs, time.Since(start))
		}
		res.add("sandscope exec SANDBOX -- true (binary, end to end)", medianP95(runs), fmt.Sprintf("%d runs; targeted reads, no watch", execRounds))
	}

	kubectl := filepath.Join(testcluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err == nil {
		var runs []time.Duration
		for range execRounds {
			d, _, err := timeKubectl(ctx, kubectl, c.Kubeconfig, []string{"-n", ns, "exec", name, "-c", "sandbox", "--", "true"})
			if err != nil {
				b.Fatalf("kubectl exec: %v", err)
			}
			runs = append(runs, d)
		}
		res.add("kubectl exec POD -- true", medianP95(runs), fmt.Sprintf("%d runs; no identity check", execRounds))
	}
}

func medianP95(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("p50 %s, p95 %s", ms(pct(s, 50)), ms(pct(s, 95)))
}
