package create_test

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/kube/imageconfig/registrytest"
)

// sandscope runs the real command line against the test cluster.
func (h *harness) sandscope(args ...string) (code int, stdout, stderr string) {
	h.t.Helper()
	r := clitest.Run(cli.Main, "", append([]string{"--kubeconfig", h.c.Kubeconfig, "-n", h.ns}, args...)...)
	return r.Code, r.Stdout, r.Stderr
}

func TestCLICreateRefusedJSON(t *testing.T) {
	h := newHarness(t)
	closed := registrytest.ClosedPort(t)
	code, stdout, stderr := h.sandscope("create", "--image", closed+"/app:v1", "--registry-timeout", "1s", "-o", "json")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (stderr %s)", code, stderr)
	}
	lines := clitest.JSONLines(t, stdout)
	if len(lines) != 1 {
		t.Fatalf("stdout %q", stdout)
	}
	e := lines[0]["error"].(map[string]any)
	if e["code"] != "ENTRYPOINT_UNRESOLVED" || e["retryable"] != true || e["executed"] != "no" || !strings.Contains(e["message"].(string), closed) {
		t.Errorf("error object %v", e)
	}
	if left := h.sandboxes(); len(left) != 0 {
		t.Errorf("refused create left %v", left)
	}
}

func TestCLICreateFailsWithStagesJSON(t *testing.T) {
	h := newHarness(t)
	code, stdout, stderr := h.sandscope("create", "--image", "busybox", "--wait-timeout", "2s", "-o", "json", "--", "sleep", "1d")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (stderr %s)", code, stderr)
	}
	lines := clitest.JSONLines(t, stdout)
	if len(lines) != 3 || lines[0]["stage"] != "Queued" || lines[1]["stage"] != "Failed" {
		t.Fatalf("json lines %v", lines)
	}
	e := lines[2]["error"].(map[string]any)
	if e["code"] != "TIMEOUT" || e["stage"] != "Queued" || e["executed"] != "no" {
		t.Errorf("error %v", e)
	}
	// The Failed stage line and the error object agree.
	if lines[1]["executed"] != e["executed"] || lines[1]["retryable"] != e["retryable"] {
		t.Errorf("Failed line executed %v retryable %v, error executed %v retryable %v", lines[1]["executed"], lines[1]["retryable"], e["executed"], e["retryable"])
	}
	if c, _ := e["cleanup"].(map[string]any); c["deleted"] != true {
		t.Errorf("cleanup %v", e["cleanup"])
	}
	if left := h.sandboxes(); len(left) != 0 {
		t.Errorf("failed create left %v", left)
	}
}

func TestCLICreateTextAndUsage(t *testing.T) {
	h := newHarness(t)
	code, _, stderr := h.sandscope("create", "--image", "busybox", "--wait-timeout", "1s", "--entrypoint", "sleep", "--entrypoint", "1d")
	if code != 1 || !strings.Contains(stderr, "Queued") || !strings.Contains(stderr, "TIMEOUT") {
		t.Errorf("text mode: exit %d stderr %q", code, stderr)
	}
	for _, args := range [][]string{
		{"create"},
		{"create", "--image", "x", "-o", "yaml"},
		{"create", "--image", "x", "--no-such-flag"},
		{"create", "--image", "x", "--keep-alive", "--", "sh"},
		{"create", "--image", "x", "--env", "NOEQUALS"},
		{"create", "--image", "x", "--cpu", "lots"},
	} {
		if code, _, stderr := h.sandscope(args...); code != 3 {
			t.Errorf("%q: exit %d, want 3 (%s)", args, code, stderr)
		}
	}
	code, stdout, _ := h.sandscope("--readonly", "create", "--image", "busybox", "--keep-alive", "-o", "json")
	if code != 2 || !strings.Contains(stdout, `"READ_ONLY"`) {
		t.Errorf("--readonly: exit %d %s", code, stdout)
	}
	if left := h.sandboxes(); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

func TestCLIEntrypoints(t *testing.T) {
	h := newHarness(t)
	ref, digest := h.reg.PushImage(t, "rl:v1", nil, nil)
	if code, out, errOut := h.sandscope("entrypoints", "set", ref, "--", "python", "-m", "trainer"); code != 0 || !strings.Contains(out, digest) {
		t.Fatalf("set: %d %q %q", code, out, errOut)
	}
	if code, out, _ := h.sandscope("entrypoints", "get", ref); code != 0 || strings.TrimSpace(out) != "python -m trainer" {
		t.Errorf("get: %d %q", code, out)
	}
	if code, out, _ := h.sandscope("entrypoints", "ls", "-o", "json"); code != 0 || !strings.Contains(out, digest) || !strings.Contains(out, `"trainer"`) {
		t.Errorf("ls: %d %q", code, out)
	}
	// The table now answers a create of the image without ENTRYPOINT.
	code, out, errOut := h.sandscope("create", "--image", ref, "--wait=false", "-o", "json")
	if code != 0 || !strings.Contains(out, `"source":"table"`) {
		t.Errorf("create via table: %d %q %q", code, out, errOut)
	}
	h.reg.PushImage(t, "rl:v1", nil, nil) // retag
	if code, _, _ := h.sandscope("entrypoints", "get", ref); code != 1 {
		t.Errorf("get after retag: exit %d, want 1 (no entry for the new digest)", code)
	}
	if code, out, _ := h.sandscope("entrypoints", "rm", digest); code != 0 || !strings.Contains(out, digest) {
		t.Errorf("rm: %d %q", code, out)
	}
	if code, _, _ := h.sandscope("--readonly", "entrypoints", "set", ref, "--", "x"); code != 2 {
		t.Errorf("readonly set: exit %d, want 2", code)
	}
	if code, _, _ := h.sandscope("entrypoints", "set", ref); code != 3 {
		t.Errorf("set without argv: exit %d, want 3", code)
	}
}
