package clustertest

import (
	"slices"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/internal/deadserver"
	"github.com/sandscope/sandscope/internal/testcluster"
)

// complete asks sandscope's cobra __complete, as the shell scripts of
// `sandscope completion bash|zsh|fish` do, and returns the candidates and
// the directive line.
func complete(t *testing.T, kubeconfig string, args ...string) ([]string, string) {
	t.Helper()
	out, _, code := runWith(kubeconfig, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %s: exit %d", strings.Join(args, " "), code)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// Completion asks the cluster for sandbox, Pod and Pool names and for the
// namespaces that hold sandboxes; contexts come from the kubeconfig.
func TestCompletionFromTheCluster(t *testing.T) {
	f := newFleet(t)
	kc := f.c.Kubeconfig
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"exec", "-n", f.ns, ""}, []string{"alpha", "beta", "plain"}},
		{[]string{"exec", "-n", f.ns, "al"}, []string{"alpha"}},
		{[]string{"exec", "-n", f.ns, "alpha", ""}, nil},
		{[]string{"exec", "-n", f.ns, "alpha", "--", ""}, nil},
		{[]string{"explain", "restart", "-n", f.ns, "b"}, []string{"beta"}},
		{[]string{"get", ""}, []string{"sandboxes", "pods", "pools", "claims", "findings"}},
		{[]string{"get", "sb", "-n", f.ns, ""}, []string{"alpha", "beta", "plain"}},
		{[]string{"get", "sb", "-n", f.ns, "alpha", ""}, []string{"beta", "plain"}},
		{[]string{"get", "po", "-n", f.ns, ""}, []string{"alpha-0", "beta-0", "plain"}},
		{[]string{"get", "pools", "-n", f.ns, ""}, []string{"warm"}},
		{[]string{"get", "findings", "-n", f.ns, "p"}, []string{"plain"}},
		{[]string{"get", "sb", "-o", "jsonp"}, []string{"jsonpath=", "jsonpath-file="}},
		{[]string{"create", "-n", f.ns, "--pool", ""}, []string{"warm"}},
		{[]string{"exec", "-n", f.ns, "--all-of-pool", "w"}, []string{"warm"}},
		{[]string{"sweep", "--context", ""}, []string{"testcluster"}},
		{[]string{"sweep", "--context", "testcluster,t"}, []string{"testcluster,testcluster"}},
	} {
		got, directive := complete(t, kc, tc.args...)
		if !slices.Equal(got, tc.want) || directive != ":4" {
			t.Errorf("__complete %s = %q %s, want %q :4 (no file names)", strings.Join(tc.args, " "), got, directive, tc.want)
		}
	}
	// Namespaces: those holding sandboxes.
	got, _ := complete(t, kc, "get", "sb", "--namespace", "")
	if !slices.Contains(got, f.ns) {
		t.Errorf("--namespace completes %q, want %s among them", got, f.ns)
	}
	empty := f.c.Namespace(t)
	if slices.Contains(got, empty) {
		t.Errorf("--namespace completes %s, which holds no sandbox", empty)
	}
}

// A cluster that refuses or never answers completes nothing, quietly:
// no error text reaches the command line, no file names are offered. One
// that never answers costs the completion timeout (2 s) each, hence fewer.
func TestCompletionWithoutACluster(t *testing.T) {
	c := testcluster.Get(t)
	every := [][]string{{"exec", ""}, {"get", "pools", ""}, {"get", "sb", "-n", ""}, {"create", "--pool", ""}}
	for name, tc := range map[string]struct {
		server string
		cases  [][]string
	}{
		"refused": {"https://" + deadserver.Refusing(t), every},
		"silent":  {"https://" + deadserver.Silent(t), every[1:3]},
	} {
		kc := kubeconfigAt(t, c, tc.server)
		for _, args := range tc.cases {
			got, directive := complete(t, kc, args...)
			if len(got) != 0 || directive != ":4" {
				t.Errorf("%s cluster: __complete %s = %q %s, want nothing and :4", name, strings.Join(args, " "), got, directive)
			}
		}
	}
}
