package clustertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
)

// A real kubectl runs sandscope as its plugin through a symlink named
// kubectl-sandscope on PATH, and completes the plugin's arguments through
// kubectl_complete-sandscope, as `ln -s` or a krew install sets it up.
func TestKubectlPlugin(t *testing.T) {
	f := newFleet(t)
	kubectl := filepath.Join(testcluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: no kubectl in %s (scripts/test.sh builds it)", testcluster.BinDir())
		}
		t.Skipf("no kubectl in %s", testcluster.BinDir())
	}
	bin := tmuxtest.BuildSandscope(t)
	dir := t.TempDir()
	for _, name := range []string{"kubectl-sandscope", "kubectl_complete-sandscope"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, args...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+f.c.Kubeconfig)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
		}
		return out.String()
	}

	mustContain(t, "kubectl plugin list", run("plugin", "list"), filepath.Join(dir, "kubectl-sandscope"))
	mustContain(t, "kubectl sandscope --help", run("sandscope", "--help"), "kubectl sandscope [command]", "Use \"kubectl sandscope [command] --help\"")
	out := run("sandscope", "get", "sb", "-n", f.ns, "--image-checks", "off", "-o", "name")
	if want := "batchsandbox.sandbox.opensandbox.io/alpha\nbatchsandbox.sandbox.opensandbox.io/beta\npod/plain\n"; out != want {
		t.Errorf("kubectl sandscope get sb -o name =\n%s\nwant\n%s", out, want)
	}
	// What -o name prints, kubectl takes back.
	mustContain(t, "kubectl get $(kubectl sandscope get sb -o name)",
		run(append([]string{"get", "-n", f.ns, "-o", "name"}, strings.Fields(out)...)...), "batchsandbox.sandbox.opensandbox.io/alpha")
	mustContain(t, "kubectl __complete sandscope exec", run("__complete", "sandscope", "exec", "-n", f.ns, "a"), "alpha\n")
}
