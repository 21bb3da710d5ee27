package sim

import (
	"bytes"
	"context"
	"testing"
)

func TestSimulatedCommands(t *testing.T) {
	target := execTarget{pod: "sbx-0", id: "1234", command: []string{bootstrap, "tail", "-f", "/dev/null"}}
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
	} {
		var out, errOut bytes.Buffer
		code := runSimulated(context.Background(), target, tc.argv, &out, &errOut)
		if code != tc.code || out.String() != tc.stdout || (tc.stderr != "" && errOut.String() != tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.argv, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}
