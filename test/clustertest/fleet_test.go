// Package clustertest runs sandscope's command line the way a user does,
// against the real kube-apiserver of internal/testcluster: get and its exit
// codes, shell completion, the kubectl plugin, exec by claim name, every
// command's output kept inert against hostile names, and the requests a
// start makes.
package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// fleet is one namespace with three sandboxes and a Pool:
//
//	alpha  BatchSandbox, team=rl, running at 10.9.0.1
//	beta   BatchSandbox, team=eval, its Pod failed (POD_DEAD)
//	plain  a plain Pod sandbox, running at 10.9.0.3
//	warm   a Pool
type fleet struct {
	c  *testcluster.Cluster
	ns string
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	c := testcluster.Get(t)
	f := &fleet{c: c, ns: c.Namespace(t)}
	k, ct := c.Kubelet(t), c.Controller(t)
	for _, sb := range []struct{ name, team, ip string }{{"alpha", "rl", "10.9.0.1"}, {"beta", "eval", "10.9.0.2"}} {
		pod := testcluster.SandboxPod(sb.name+"-0", "")
		obj := testcluster.BatchSandbox(sb.name, pod)
		obj.SetLabels(map[string]string{osv1.LabelSandboxID: sb.name, "team": sb.team})
		created := ct.Create(testcluster.BatchSandboxGVR, f.ns, obj)
		k.CreatePod(f.ns, testcluster.OwnedByBatchSandbox(pod, created, 0))
		k.SetRunning(f.ns, pod.Name, sb.ip)
		ct.SetEndpoints(f.ns, sb.name, sb.ip)
		ct.SetBatchSandboxStatus(f.ns, sb.name, map[string]any{"phase": "Succeed", "replicas": 1, "allocated": 1, "ready": 1})
	}
	k.Terminate(f.ns, "beta-0", osv1.ContainerSandbox, 1, "Error")
	k.SetPhase(f.ns, "beta-0", corev1.PodFailed, "", "")
	k.CreatePod(f.ns, testcluster.SandboxPod("plain", ""))
	k.SetRunning(f.ns, "plain", "10.9.0.3")
	ct.Create(testcluster.PoolGVR, f.ns, testcluster.Pool("warm", testcluster.SandboxPod("tmpl", ""), 1, 2, 1, 5))
	return f
}

// run runs `sandscope args...` in-process on the test cluster (no
// registry is asked about images) and returns stdout, stderr, exit code.
func (f *fleet) run(args ...string) (string, string, int) {
	return runWith(f.c.Kubeconfig, args...)
}

func runWith(kubeconfig string, args ...string) (string, string, int) {
	r := clitest.Run(cli.Main, "", append([]string{"--kubeconfig", kubeconfig, "--image-checks", "off"}, args...)...)
	return r.Stdout, r.Stderr, r.Code
}

// kubeconfigAt copies the test kubeconfig with its cluster's server moved
// to server: the same credentials, a cluster that is not there.
func kubeconfigAt(t *testing.T, c *testcluster.Cluster, server string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = server
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, got)
		}
	}
}

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	root, err := testcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, rel)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", rel, err))
	}
	return path
}
