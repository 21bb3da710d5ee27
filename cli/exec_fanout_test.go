package cli

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/clitest"
)

// A fan-out whose selection matches nothing ran nowhere: it says so with
// NOT_FOUND and exit 125, never a silent exit 0 a script takes for success.
func TestExecFanOutToNothingIsNotFound(t *testing.T) {
	for _, args := range [][]string{
		{"--all-of-pool", "nosuchpool", "-o", "jsonl"},
		{"--selector", "x=y"},
		{"-n", "eval", "--selector", "x=y", "-o", "jsonl"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := clitest.Run(Main, "", append(append([]string{"--demo", "exec"}, args...), "--", "hostname")...)
			if r.Code != execExitRefused || r.Stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 125 and no lines", r.Code, r.Stdout, r.Stderr)
			}
			e := r.ErrorObject(t, "code", "message", "retryable", "executed", "evidence")
			if e["code"] != refusal.CodeNotFound || e["executed"] != "no" {
				t.Errorf("error %v, want NOT_FOUND, executed no", e)
			}
		})
	}
}

// --all-of-pool of an agent-sandbox warm pool runs on its Sandboxes: its
// free members and its claims' Sandboxes (the README's Exec section), the
// ones get lists with that pool or a claim made on it.
func TestExecAllOfWarmPool(t *testing.T) {
	const pool = "agents-warm"
	var sbs struct {
		Items []struct {
			Pool     string `json:"pool"`
			Metadata struct{ Name, Namespace string }
		}
	}
	var claims struct {
		Items []struct {
			WarmPool string `json:"warmPool"`
			Sandbox  string `json:"sandbox"`
			Metadata struct{ Namespace string }
		}
	}
	for _, q := range []struct {
		what string
		into any
	}{{"sandboxes", &sbs}, {"claims", &claims}} {
		r := clitest.Run(Main, "", "--demo", "get", q.what, "-A", "-o", "json")
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), q.into) != nil {
			t.Fatalf("get %s: exit %d, stderr %s", q.what, r.Code, r.Stderr)
		}
	}
	want := map[string]bool{}
	members, claimed := 0, 0
	for _, s := range sbs.Items {
		if s.Pool == pool {
			want[s.Metadata.Namespace+"/"+s.Metadata.Name] = true
			members++
		}
	}
	for _, c := range claims.Items {
		if c.WarmPool == pool && c.Sandbox != "" {
			want[c.Metadata.Namespace+"/"+c.Sandbox] = true
			claimed++
		}
	}
	if members == 0 || claimed == 0 {
		t.Fatalf("the demo's warm pool %s has %d free members and %d bound claims; the test wants both", pool, members, claimed)
	}
	for _, ns := range [][]string{nil, {"-n", "sandboxes"}} {
		args := append(append([]string{"--demo", "exec"}, ns...), "--all-of-pool", pool, "-o", "jsonl", "--", "hostname")
		r := clitest.Run(Main, "", args...)
		got := map[string]bool{}
		for _, l := range clitest.JSONLines(t, r.Stdout) {
			key, _ := l["sandbox"].(string) // agent/NS/NAME
			got[strings.TrimPrefix(key, "agent/")] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("%v: exit %d, ran on %v; want %v (stderr %s)", args, r.Code, got, want, r.Stderr)
		}
	}
}

// otherDemoNamespace is a namespace of the demo fleet other than ns.
func otherDemoNamespace(ns string) string {
	if ns == "eval" {
		return "sandboxes"
	}
	return "eval"
}

// A sandbox (or pod/NAME) exec'd in a namespace that lacks it is NOT_FOUND
// naming the namespace that holds it (the README's Exec section), though
// the demo's one-shot exec reads only -n's namespace to run.
func TestExecDemoNotFoundNamesWhereItIs(t *testing.T) {
	ns, sandbox, pod := steadyDemoSandbox(t)
	// pod/NAME too: a Pod nobody saw in that namespace is not found there,
	// not gone from it.
	for _, ref := range []string{sandbox, "pod/" + pod} {
		r := clitest.Run(Main, "", "--demo", "exec", "-n", otherDemoNamespace(ns), ref, "--", "hostname")
		e := r.ErrorObject(t, "code", "message", "executed")
		if r.Code != execExitRefused || e["code"] != refusal.CodeNotFound || !strings.Contains(e["message"].(string), "in namespace "+ns) {
			t.Errorf("%s: exit %d, error %v; want 125, NOT_FOUND naming namespace %s", ref, r.Code, e, ns)
		}
	}
}

// --expect-ip that is no IP address is a usage error: exit 2, USAGE in the
// JSON error object, as exec's other usage errors.
func TestExecExpectIPNotAnIP(t *testing.T) {
	ns, sandbox, _ := steadyDemoSandbox(t)
	r := clitest.Run(Main, "", "--demo", "exec", "-n", ns, sandbox, "--expect-ip", "notanip", "--", "hostname")
	e := r.ErrorObject(t, "code", "message", "retryable", "executed", "evidence")
	if r.Code != ExitUsage || e["code"] != refusal.CodeUsage || e["executed"] != "no" {
		t.Errorf("exit %d, error %v; want 2, USAGE", r.Code, e)
	}
}

// Every exec usage error, cobra's own (arguments, flags) and the root's
// checks included, is the JSON error object with code USAGE and exit 2:
// a program reading exec's stderr meets one shape (the README's commands
// table).
func TestExecUsageErrorsAreJSON(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"X", "--bogus", "--", "x"},
		{"X", "--timeout", "soon", "--", "x"},
		{"X", "--context", "a,b", "--", "x"},
		{"X", "--image-checks", "bogus", "--", "x"},
		{"X", "Y", "--", "x"},
		{"X", "-o", "jsonl", "--", "x"},
		{"X", "--all-of-pool", "p", "--", "x"},
		{"X", "--via", "bogus", "--", "x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := clitest.Run(Main, "", append([]string{"--demo", "exec"}, args...)...)
			e := r.ErrorObject(t, "code", "message", "retryable", "executed", "evidence")
			if r.Code != ExitUsage || e["code"] != refusal.CodeUsage || e["executed"] != "no" {
				t.Errorf("exit %d, error %v; want 2, USAGE", r.Code, e)
			}
		})
	}
}

// cp's usage errors are its JSON error object too (with "written"): cobra's
// own (arguments, flags) and the root's checks printed plain text.
func TestCpUsageErrorsAreJSON(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"a"},
		{"a", "b", "--bogus"},
		{"x:/a", "b", "--context", "a,b"},
		{"x:/a", "b", "--image-checks", "bogus"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := clitest.Run(Main, "", append([]string{"cp"}, args...)...)
			e := r.ErrorObject(t, "code", "message", "retryable", "executed", "written", "evidence")
			if r.Code != ExitUsage || e["code"] != refusal.CodeUsage || e["written"] != "no" {
				t.Errorf("exit %d, error %v; want 2, USAGE", r.Code, e)
			}
		})
	}
}
