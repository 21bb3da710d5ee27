package cli

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/internal/deadserver"
)

// A list of contexts is refused where a command acts in one cluster, in
// the command's own usage code; the TUI refuses --context with
// --all-contexts, and names a listed context the kubeconfig lacks.
func TestContextListsOnlyWhereTheyMeanSomething(t *testing.T) {
	kubeconfig := kubeconfigFor(t, "https://"+deadserver.Refusing(t))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"exec", "sbx", "--", "true"}, ExitUsage, "exec acts in one cluster"},
		{[]string{"explain", "restart", "p", "--block-start", "2026-01-01T00:00:00Z"}, ExitUsage, "explain restart acts in one cluster"},
		{[]string{"create", "--image", "x"}, 3, "create acts in one cluster"},
		{[]string{"entrypoints", "ls"}, 3, "entrypoints ls acts in one cluster"},
		{[]string{"serve"}, ExitUsage, "serve acts in one cluster"},
	} {
		code, stderr, _ := runMain(t, append([]string{"--kubeconfig", kubeconfig, "--context", "broken-ctx,other"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	code, stderr, _ := runMain(t, "--kubeconfig", kubeconfig, "--context", "broken-ctx", "--all-contexts")
	if code != ExitUsage || !strings.Contains(stderr, "--context and --all-contexts cannot be used together") {
		t.Errorf("--context with --all-contexts: exit %d, %q", code, stderr)
	}
	code, stderr, _ = runMain(t, "--kubeconfig", kubeconfig, "--context", "broken-ctx,does-not-exist")
	if code != ExitFailure || !strings.Contains(stderr, `"does-not-exist"`) || !strings.Contains(stderr, "context not found") {
		t.Errorf("an unknown context in the list: exit %d, %q", code, stderr)
	}
}
