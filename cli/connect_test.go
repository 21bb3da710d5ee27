package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/internal/deadserver"
)

// requestTimeout is what every case passes as --request-timeout.
const requestTimeout = 2 * time.Second

// kubeconfigFor writes a kubeconfig with one context "broken-ctx" whose
// cluster is server, and returns its path.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: broken-cluster
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: someone
  user:
    token: not-a-real-token
contexts:
- name: broken-ctx
  context: {cluster: broken-cluster, user: someone, namespace: sandboxes}
current-context: broken-ctx
`, server)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runMain runs the real sandscope entry point and returns its exit code and
// everything written to stderr, including what libraries (klog) write to
// the process's own os.Stderr.
func runMain(t *testing.T, args ...string) (code int, stderr string, elapsed time.Duration) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	realStderr := os.Stderr
	os.Stderr = w
	procStderr := make(chan string)
	go func() {
		data, _ := io.ReadAll(r)
		procStderr <- string(data)
	}()
	var out, errOut bytes.Buffer
	start := time.Now()
	code = Main(args, strings.NewReader(""), &out, &errOut)
	elapsed = time.Since(start)
	os.Stderr = realStderr
	w.Close()
	leaked := <-procStderr
	r.Close()
	if out.Len() != 0 {
		t.Errorf("stdout not empty: %q", out.String())
	}
	return code, errOut.String() + leaked, elapsed
}

func TestConnectFailuresAreOneLine(t *testing.T) {
	closed := "https://" + deadserver.Refusing(t)
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("clusters: [this is: not {valid yaml\n\t- at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Tests run as root, where mode 000 still reads; a directory cannot be read as a file by anyone.
	dir := t.TempDir()
	silent := "https://" + deadserver.Silent(t)

	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the one line
	}{
		{
			name: "context does not exist",
			args: []string{"--kubeconfig", kubeconfigFor(t, closed), "--context", "does-not-exist"},
			want: []string{`"does-not-exist"`, "context not found"},
		},
		{
			name: "closed port",
			args: []string{"--kubeconfig", kubeconfigFor(t, closed)},
			want: []string{`"broken-ctx"`, closed, "cannot reach cluster", "connection refused"},
		},
		{
			name: "closed port via --context",
			args: []string{"--kubeconfig", kubeconfigFor(t, closed), "--context", "broken-ctx"},
			want: []string{`"broken-ctx"`, closed},
		},
		{
			name: "server never answers",
			args: []string{"--kubeconfig", kubeconfigFor(t, silent)},
			want: []string{`"broken-ctx"`, silent, "did not answer within 2s"},
		},
		{
			name: "garbage kubeconfig",
			args: []string{"--kubeconfig", garbage},
			want: []string{"kubeconfig", garbage},
		},
		{
			name: "kubeconfig is a directory",
			args: []string{"--kubeconfig", dir},
			want: []string{"kubeconfig", dir},
		},
		{
			name: "kubeconfig missing",
			args: []string{"--kubeconfig", filepath.Join(dir, "nope")},
			want: []string{"kubeconfig", filepath.Join(dir, "nope")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--request-timeout", requestTimeout.String()}, tc.args...)
			code, stderr, elapsed := runMain(t, args...)
			t.Logf("exit %d after %s: %s", code, elapsed.Round(time.Millisecond), strings.TrimSpace(stderr))
			if code == 0 {
				t.Fatalf("exit code 0, want non-zero; stderr %q", stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Fatalf("stderr is not exactly one line:\n%s", stderr)
			}
			if !strings.HasPrefix(stderr, "sandscope: ") {
				t.Errorf("stderr line does not start with %q: %q", "sandscope: ", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr looks like a crash: %q", stderr)
			}
			// Not a speed target: "within the request timeout" is the
			// behaviour under test (no hang); the slack absorbs a loaded CI box.
			if limit := requestTimeout + 5*time.Second; elapsed > limit {
				t.Errorf("took %s, want at most the request timeout (%s) plus slack", elapsed, requestTimeout)
			}
		})
	}
}

// KUBECONFIG is honoured like kubectl does, and the line names its context
// and server.
func TestConnectHonoursKUBECONFIG(t *testing.T) {
	closed := "https://" + deadserver.Refusing(t)
	t.Setenv("KUBECONFIG", kubeconfigFor(t, closed))
	code, stderr, _ := runMain(t, "--request-timeout", requestTimeout.String())
	if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `"broken-ctx"`) || !strings.Contains(stderr, closed) {
		t.Fatalf("exit %d, stderr %q; want non-zero and one line naming broken-ctx and %s", code, stderr, closed)
	}
}

// exec's connection failures are JSON refusals: a configuration that names
// no cluster is CONFIG and not retryable (a retry cannot help); a cluster
// that cannot be reached now is TRANSPORT and retryable.
func TestExecConnectFailureCodes(t *testing.T) {
	closed := "https://" + deadserver.Refusing(t)
	for _, tc := range []struct {
		name      string
		args      []string
		code      string
		retryable bool
	}{
		{"kubeconfig missing", []string{"--kubeconfig", filepath.Join(t.TempDir(), "nope")}, "CONFIG", false},
		{"no such context", []string{"--kubeconfig", kubeconfigFor(t, closed), "--context", "does-not-exist"}, "CONFIG", false},
		{"unreachable", []string{"--kubeconfig", kubeconfigFor(t, closed)}, "TRANSPORT", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--request-timeout", requestTimeout.String()}, tc.args...)
			code, stderr, _ := runMain(t, append(args, "exec", "sbx", "--", "true")...)
			var v struct {
				Error struct {
					Code      string `json:"code"`
					Retryable bool   `json:"retryable"`
					Executed  string `json:"executed"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(stderr), &v); err != nil {
				t.Fatalf("stderr is not one JSON object: %q", stderr)
			}
			if code != 125 || v.Error.Code != tc.code || v.Error.Retryable != tc.retryable || v.Error.Executed != "no" {
				t.Fatalf("exit %d %s", code, stderr)
			}
		})
	}
}

// A context whose cluster entry is missing is named as such (clientcmd
// alone says "no kubeconfig found"), and sweep's one stderr line names the
// context and the cause of every context it could not sweep.
func TestMissingClusterEntryIsNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := "apiVersion: v1\nkind: Config\nclusters: [{name: c1, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u1, user: {token: x}}]\n" +
		"contexts: [{name: ctx1, context: {cluster: c1, user: u1}}, {name: ctx2, context: {cluster: gone, user: u1}}]\n" +
		"current-context: ctx1\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr, _ := runMain(t, "--kubeconfig", path, "--context", "ctx2")
	if code == 0 || !strings.Contains(stderr, `cluster "gone" of the context is not defined`) || !strings.Contains(stderr, `"ctx2"`) {
		t.Errorf("TUI: exit %d: %s", code, stderr)
	}
	var out, errOut bytes.Buffer
	code = Main([]string{"--kubeconfig", path, "sweep", "--context", "ctx2,does-not-exist", "-o", "table"}, strings.NewReader(""), &out, &errOut)
	stderr = errOut.String()
	if code != 2 || !strings.Contains(stderr, `cluster "gone"`) || !strings.Contains(stderr, "does-not-exist") || strings.Contains(stderr, "no kubeconfig found") {
		t.Errorf("sweep: exit %d: %s", code, stderr)
	}
}
