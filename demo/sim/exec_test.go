package sim

import (
	"bytes"
	"context"
	"testing"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

func TestSimulatedCommands(t *testing.T) {
	t.Parallel()
	target := execTarget{pod: "sbx-0", id: "1234", command: []string{osv1.BootstrapPath, "tail", "-f", "/dev/null"}}
	for _, tc := range []struct {
		argv           []string
		stdout, stderr string
		code           int
	}{
		{[]string{"hostname"}, "sbx-0\n", "", 0},
		{[]string{"sh", "-c", "hostname && echo 'a  b'"}, "sbx-0\na  b\n", "", 0},
		{[]string{"sh", "-c", "false && hostname; echo after"}, "after\n", "", 0},
		{[]string{"sh", "-c", "exit 3; hostname"}, "", "", 3},
		{[]string{"cat", "pi.txt"}, "3.14159265358979 (computed in sandbox 1234, pod sbx-0)\n", "", 0},
		{[]string{"cat", "nope"}, "", "cat: nope: No such file or directory\n", 1},
		{[]string{"ls"}, "README.md\npi.txt\n", "", 0},
		{[]string{"rm", "-rf", "/"}, "", "", 127},
		{[]string{"sh", "-c", "false; exit"}, "", "", 1}, // a bare exit keeps the last status
		{[]string{"sh", "-c", "false; echo $? && true; echo \"$?\""}, "1\n0\n", "", 0},
		{[]string{"sh", "-c", "exit nope"}, "", "sh: 1: exit: Illegal number: nope\n", 2},
		{[]string{"sh", "-c", "cd /workspace && pwd; cd /tmp"}, "/workspace\n", "sh: 1: cd: can't cd to /tmp (the demo sandbox has one directory, /workspace)\n", 2},
	} {
		var out, errOut bytes.Buffer
		code := runSimulated(context.Background(), target, tc.argv, &out, &errOut)
		if code != tc.code || out.String() != tc.stdout || (tc.stderr != "" && errOut.String() != tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.argv, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestShellLines runs lines as the demo's interactive shell does: each
// starts from the status the previous one left, and exit ends the shell.
func TestShellLines(t *testing.T) {
	t.Parallel()
	target := execTarget{pod: "sbx-0"}
	for _, tc := range []struct {
		line   string
		last   int
		stdout string
		code   int
		exited bool
	}{
		{"", 3, "", 3, false}, // an empty line keeps $?
		{"echo $?", 3, "3\n", 0, false},
		{"exit", 5, "", 5, true},
		{"hostname; exit 7; echo unreached", 0, "sbx-0\n", 7, true},
		{"false && exit 9", 0, "", 1, false},
	} {
		var out, errOut bytes.Buffer
		code, exited := runScript(context.Background(), target, tc.line, tc.last, &out, &errOut)
		if code != tc.code || exited != tc.exited || out.String() != tc.stdout {
			t.Errorf("%q after %d: exit %d, exited %t, stdout %q; want %d, %t, %q", tc.line, tc.last, code, exited, out.String(), tc.code, tc.exited, tc.stdout)
		}
	}
}
