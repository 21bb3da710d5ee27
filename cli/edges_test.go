package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runArgs runs sandscope (argv0 names the binary) with args and returns
// the exit code, stdout and stderr.
func runArgs(argv0 string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := MainAs(argv0, args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The CLI's small edges: what a user mistypes gets exit 2 (usage) and one
// line that says what would have been right.
func TestUsageEdges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string // a part of stderr
	}{
		// exec's usage errors are usage errors (2), as in every command;
		// 125 is a target refused.
		{"exec without a command", []string{"exec", "sb1", "--"}, 2, `"code":"USAGE"`},
		{"exec -o without many", []string{"exec", "sb1", "-o", "jsonl", "--", "true"}, 2, "-o is for exec"},
		// Two ways of picking the targets at once: the selector was ignored.
		{"exec pool and selector", []string{"exec", "--all-of-pool", "p", "--selector", "a=b", "-o", "jsonl", "--", "true"}, 2, "--all-of-pool and --selector each pick"},
		{"cp pool and selector", []string{"cp", "--all-of-pool", "p", "--selector", "a=b", "f", ":/f", "-o", "jsonl"}, 2, "--all-of-pool and --selector each pick"},
		{"get alone", []string{"get"}, 2, "sandboxes (sb), pods (po), pools, claims or findings"},
		{"completion for no shell", []string{"completion", "nope"}, 2, `no completion for shell "nope": want bash`},
		// A group of subcommands given another word: cobra printed the help
		// and exited 0.
		{"explain's typo", []string{"explain", "restrat"}, 2, `unknown command "restrat" for "sandscope explain"`},
		{"entrypoints's typo", []string{"entrypoints", "list"}, 3, `unknown command "list" for "sandscope entrypoints"`},
	} {
		code, _, errOut := runArgs("sandscope", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%s (%q): exit %d, stderr %q; want exit %d and %q", tc.name, tc.args, code, errOut, tc.code, tc.stderr)
		}
	}
	if code, out, _ := runArgs("sandscope", "explain"); code != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("explain alone: exit %d, want its help and 0", code)
	}
	if code, out, errOut := runArgs("sandscope", "completion", "bash"); code != 0 || !strings.Contains(out, "__start_sandscope") {
		t.Errorf("completion bash: exit %d, stderr %q, %d bytes", code, errOut, len(out))
	}
}

// An unknown flag's error says where the usage is, in every command, the
// ones with their own usage exit code (create, entrypoints) too.
func TestUnknownFlagPointsAtHelp(t *testing.T) {
	for args, path := range map[string]string{"--bogus": "sandscope", "exec --bogus": "sandscope exec", "sweep --bogus": "sandscope sweep",
		"get sb --bogus": "sandscope get", "create --bogus": "sandscope create", "entrypoints ls --bogus": "sandscope entrypoints ls",
		"explain restart --bogus": "sandscope explain restart"} {
		_, _, errOut := runArgs("sandscope", strings.Fields(args)...)
		line := strings.TrimSpace(errOut)
		if strings.HasPrefix(line, "{") { // exec's usage errors are its JSON error object: its message
			var v struct{ Error struct{ Message string } }
			_ = json.Unmarshal([]byte(line), &v)
			line = v.Error.Message
		}
		if !strings.Contains(line, "unknown flag: --bogus") || !strings.HasSuffix(line, "see "+path+" --help") {
			t.Errorf("sandscope %s: stderr %q; want it to end %q", args, line, "see "+path+" --help")
		}
	}
}

func TestVersionCommand(t *testing.T) {
	code, out, errOut := runArgs("sandscope", "version")
	_, flagOut, _ := runArgs("sandscope", "--version")
	if code != 0 || !strings.HasPrefix(out, "sandscope version ") || out != flagOut {
		t.Errorf("version: exit %d, stdout %q (--version: %q), stderr %q", code, out, flagOut, errOut)
	}
	if _, out, _ := runArgs("/usr/bin/kubectl-sandscope", "version"); !strings.HasPrefix(out, "kubectl sandscope version ") {
		t.Errorf("kubectl sandscope version: %q", out)
	}
}

// Run as kubectl's plugin, errors name the command the user typed.
func TestPluginErrorsSayKubectlSandscope(t *testing.T) {
	for _, args := range [][]string{{"get"}, {"sweep", "--bogus"}, {"create", "--bogus"}, {"explain", "restart"}} {
		_, _, errOut := runArgs("/usr/local/bin/kubectl-sandscope", args...)
		if !strings.HasPrefix(errOut, "kubectl sandscope: ") || strings.Contains(errOut, "\nsandscope") {
			t.Errorf("kubectl sandscope %s: stderr %q; want it to start \"kubectl sandscope: \"", strings.Join(args, " "), errOut)
		}
	}
}

// A context the kubeconfig lacks is named with those it has.
func TestUnknownContextListsContexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: "https://127.0.0.1:1"}}
users:
- {name: u, user: {token: t}}
contexts:
- {name: prod, context: {cluster: c, user: u}}
- {name: staging, context: {cluster: c, user: u}}
current-context: prod
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"get", "sb"}, {"sweep"}, {"exec", "sb1", "--", "true"}} {
		_, _, errOut := runArgs("sandscope", append([]string{"--kubeconfig", path, "--context", "prdo"}, args...)...)
		if !strings.Contains(errOut, `prdo`) || !strings.Contains(errOut, "its contexts: prod, staging") {
			t.Errorf("--context prdo %s: stderr %q; want the contexts it has", strings.Join(args, " "), errOut)
		}
	}
	// The TUI over several contexts checks the list first.
	_, _, errOut := runArgs("sandscope", "--kubeconfig", path, "--context", "prod,prdo")
	if !strings.Contains(errOut, "its contexts: prod, staging") {
		t.Errorf("--context prod,prdo: stderr %q; want the contexts it has", errOut)
	}
}
