package cli

import (
	"bytes"
	"strings"
	"testing"
)

// cobra's completion command is there for every shell, and its scripts
// call back into this binary's __complete.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var out, errOut bytes.Buffer
		code := Main([]string{"completion", shell}, strings.NewReader(""), &out, &errOut)
		if code != ExitOK || !strings.Contains(out.String(), "__complete") {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes without __complete", shell, code, errOut.String(), out.Len())
		}
	}
}

// Completions that need no cluster: get's resources and -o formats; the
// demo, which has no cluster to ask, completes no names.
func TestCompletionWithoutCluster(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "p"}, "pods\npools\n:4\n"},
		{[]string{"get", "sb", "-o", "y"}, "yaml\n:4\n"},
		{[]string{"get", "sb", "-o", "jsonpath"}, "jsonpath=\njsonpath-file=\n:4\n"},
		{[]string{"get", "sb", "-o", "jsonpath-f"}, "jsonpath-file=\n:6\n"},
		{[]string{"--demo", "exec", ""}, ":4\n"},
	} {
		var out bytes.Buffer
		Main(append([]string{"__complete"}, tc.args...), strings.NewReader(""), &out, &bytes.Buffer{})
		if out.String() != tc.want {
			t.Errorf("__complete %s = %q, want %q", strings.Join(tc.args, " "), out.String(), tc.want)
		}
	}
}
