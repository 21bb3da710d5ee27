package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/clitest"
)

// createDemo runs `sandscope --demo create ... -o json` through the real
// entry point and returns its exit code and JSON lines.
func createDemo(t *testing.T, args ...string) (int, []map[string]any, string) {
	t.Helper()
	r := clitest.Run(Main, "", append([]string{"--demo", "create", "-o", "json", "--wait-timeout", "1m"}, args...)...)
	return r.Code, clitest.JSONLines(t, r.Stdout), r.Stderr
}

func TestCreateDemoCommand(t *testing.T) {
	t.Run("ready", func(t *testing.T) {
		code, lines, stderr := createDemo(t, "--image", sim.ImageScorer)
		if code != 0 || len(lines) < 2 {
			t.Fatalf("exit %d, %d JSON lines, stderr %q; want 0 and the stages then the result", code, len(lines), stderr)
		}
		if first := lines[0]; first["stage"] != "Queued" {
			t.Errorf("first line %v, want the Queued stage", first)
		}
		res := lines[len(lines)-1]
		ep, _ := res["entrypoint"].(map[string]any)
		if res["stage"] != "Ready" || ep["source"] != "registry" || res["sandbox"] == "" || res["stages"] == nil {
			t.Errorf("result %v; want stage Ready with the entrypoint from the registry", res)
		}
	})
	t.Run("refused", func(t *testing.T) {
		code, lines, stderr := createDemo(t, "--image", sim.ImageUnreachable)
		if code != 2 || len(lines) != 1 {
			t.Fatalf("exit %d, lines %v, stderr %q; want 2 and one error object", code, lines, stderr)
		}
		e, _ := lines[0]["error"].(map[string]any)
		if e["code"] != "ENTRYPOINT_UNRESOLVED" || e["executed"] != "no" || e["retryable"] != true {
			t.Errorf("error object %v", e)
		}
	})
	t.Run("namespace outside the demo fleet", func(t *testing.T) {
		code, lines, _ := createDemo(t, "-n", "not-in-the-demo", "--image", sim.ImageScorer)
		if e, _ := lines[0]["error"].(map[string]any); code != 2 || e["code"] != "NOT_FOUND" || e["executed"] != "no" {
			t.Errorf("exit %d, lines %v; want 2 and NOT_FOUND, executed no", code, lines)
		}
	})
}

// In text, the Failed stage line says what the error object says of
// whether anything ran and whether to retry, as the README promises.
func TestCreateDemoTextFailedLineSaysExecutedAndRetryable(t *testing.T) {
	r := clitest.Run(Main, "", "--demo", "create", "--wait-timeout", "1m", "--image", sim.ImageMissing)
	if r.Code != 1 || !regexp.MustCompile(`(?m)^ *\+\S+\s+Failed\s+IMAGE_PULL_FAILED \(executed: no, retryable: false\)$`).MatchString(r.Stderr) {
		t.Errorf("exit %d, stderr:\n%s\nwant 1 and the Failed line with executed and retryable", r.Code, r.Stderr)
	}
}

// cp in the demo is refused before anything, one target or many: its Pods
// are simulated and run no tar. A fan-out crashed with a nil pointer (exit
// 70), asking a cluster's API for the demo's sandboxes.
func TestCpInTheDemoIsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"cp", "--selector", "x=y", "cp_demo_test.go", ":/tmp/f", "-o", "jsonl"},
		{"cp", "--all-of-pool", "agents-warm", "cp_demo_test.go", ":/tmp/f", "-o", "jsonl"},
		{"cp", "1729c28e:/workspace/pi.txt", "-"},
	} {
		r := clitest.Run(Main, "", append([]string{"--demo"}, args...)...)
		if obj := r.ErrorObject(t, "code", "written"); r.Code != 2 || obj["code"] != "USAGE" || obj["written"] != "no" {
			t.Errorf("%q: exit %d, stderr %s; want 2 and USAGE, nothing written", args, r.Code, r.Stderr)
		}
	}
}

// A create whose image pull failed says, as its retry reason, which pull
// failed: it named the last Pulling event's image, the execd installer's.
func TestCreateDemoPullFailureReasonNamesThePull(t *testing.T) {
	code, lines, stderr := createDemo(t, "--image", sim.ImageMissing)
	if code != 1 || len(lines) == 0 {
		t.Fatalf("exit %d, stderr %q; want 1", code, stderr)
	}
	obj, _ := lines[len(lines)-1]["error"].(map[string]any)
	reason, _ := obj["retryReason"].(string)
	if obj["code"] != "IMAGE_PULL_FAILED" || !strings.Contains(reason, "ErrImagePull") || strings.Contains(reason, "execd") {
		t.Errorf("error %v: want IMAGE_PULL_FAILED with the failed pull as the retry reason", obj)
	}
}

// A create's result lists its notices as a JSON array, empty or not, for
// every engine: an agent-sandbox create printed "notices":null.
func TestCreateDemoNoticesAreAList(t *testing.T) {
	for _, args := range [][]string{{"--image", sim.ImageScorer}, {"--template", "python-agent"}, {"--warm-pool", "agents-warm"}} {
		code, lines, stderr := createDemo(t, args...)
		if code != 0 || len(lines) == 0 {
			t.Fatalf("%q: exit %d, stderr %q", args, code, stderr)
		}
		if _, ok := lines[len(lines)-1]["notices"].([]any); !ok {
			t.Errorf("%q: notices %#v, want a list", args, lines[len(lines)-1]["notices"])
		}
	}
}

// explain restart in the demo reads every namespace without -n: a name
// found nowhere says so, not "in namespace sandboxes", the one namespace it
// named though it read them all.
func TestExplainDemoNotFoundSaysWhereItLooked(t *testing.T) {
	for args, want := range map[string]string{
		"nosuch":         `no Pod or sandbox "nosuch" in any namespace`,
		"-n eval nosuch": `no Pod or sandbox "nosuch" in namespace eval`,
	} {
		r := clitest.Run(Main, "", append(append([]string{"--demo", "explain", "restart"}, strings.Fields(args)...), "--block-start", "2026-12-02T14:00:00Z")...)
		if r.Code != 1 || !strings.Contains(r.Stderr, want) {
			t.Errorf("explain restart %s: exit %d, %q; want 1 and %q", args, r.Code, r.Stderr, want)
		}
	}
}
