package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/demo"
)

// steadyDemoSandbox is a BatchSandbox of the default demo fleet that stays
// running: the oldest one, one of the simulator's pinned examples (never
// deleted, nothing scripted to happen to it). `sandscope --demo` starts the
// same fleet (same seed), so the name is valid in its own process too.
func steadyDemoSandbox(t *testing.T) (ns, sandbox, pod string) {
	t.Helper()
	return steadyDemoSandboxOutside(t, "")
}

// steadyDemoSandboxOutside is steadyDemoSandbox in a namespace other than
// avoid ("" avoids none): which one is oldest depends on the whole
// simulated history, so a test that needs another namespace asks for it.
func steadyDemoSandboxOutside(t *testing.T, avoid string) (ns, sandbox, pod string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := d.Clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: osv1.LabelBatchSandboxName + ",!" + osv1.LabelPoolName})
	if err != nil {
		t.Fatal(err)
	}
	items := pods.Items
	sort.SliceStable(items, func(i, j int) bool { return items[i].CreationTimestamp.Before(&items[j].CreationTimestamp) })
	for _, p := range items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && (avoid == "" || p.Namespace != avoid) {
			return p.Namespace, p.Labels[osv1.LabelBatchSandboxName], p.Name
		}
	}
	t.Fatal("no running BatchSandbox Pod in the demo fleet")
	return "", "", ""
}

// TestExecDemoCommand is `sandscope --demo exec`: one-shot, a shell reading
// a script from stdin (-i -- sh), and a refusal, all in the simulated fleet.
func TestExecDemoCommand(t *testing.T) {
	ns, sandbox, pod := steadyDemoSandbox(t)
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"--demo", "exec", "-n", ns}, args...), strings.NewReader(stdin), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run("", sandbox, "--", "hostname"); code != 0 || out != pod+"\n" {
		t.Errorf("exec hostname in %s/%s: exit %d, stdout %q, stderr %q; want 0 and %s", ns, sandbox, code, out, errOut, pod)
	}
	if code, out, errOut := run("hostname\necho hi\nexit 3\n", sandbox, "-i", "--", "sh"); code != 3 || out != pod+"\nhi\n" {
		t.Errorf("exec -i -- sh: exit %d, stdout %q, stderr %q; want 3 and the two answers", code, out, errOut)
	}
	code, _, errOut := run("", "no-such-sandbox", "--", "hostname")
	var e struct{ Error refusal.Error }
	if err := json.Unmarshal([]byte(errOut), &e); err != nil || code != execExitRefused || e.Error.Code != refusal.CodeNotFound {
		t.Errorf("exec into a sandbox the demo lacks: exit %d, stderr %q; want 125 and NOT_FOUND", code, errOut)
	}
}

// sweep --demo honours -n, and --context a,b sweeps a simulated fleet for
// each name, as the TUI's --demo --context a,b shows them.
func TestDemoSweepNamespaceAndContext(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"--demo", "sweep", "-n", "eval", "-o", "json"}, strings.NewReader(""), &out, &errOut); code == 2 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var r struct {
		Findings []struct{ Namespace, Context string } `json:"findings"`
		Contexts []struct {
			Name      string
			Reachable bool
		} `json:"contexts"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Findings) == 0 {
		t.Fatalf("report: %v, %d findings", err, len(r.Findings))
	}
	for _, f := range r.Findings {
		if f.Namespace != "eval" {
			t.Fatalf("a finding in namespace %q under -n eval", f.Namespace)
		}
	}
	out.Reset()
	errOut.Reset()
	if code := Main([]string{"--demo", "--context", "prod,staging", "sweep", "-o", "json"}, strings.NewReader(""), &out, &errOut); code == 2 {
		t.Fatalf("--demo --context prod,staging: exit %d: %s", code, errOut.String())
	}
	r.Findings, r.Contexts = nil, nil
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range r.Findings {
		seen[f.Context] = true
	}
	if len(r.Contexts) != 2 || r.Contexts[0].Name == r.Contexts[1].Name || !r.Contexts[0].Reachable || !r.Contexts[1].Reachable ||
		!seen["prod"] || !seen["staging"] {
		t.Errorf("--demo --context prod,staging: contexts %+v, findings in %v; want both swept, with findings", r.Contexts, seen)
	}
}
