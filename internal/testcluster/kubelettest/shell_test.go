package kubelettest

import (
	"bytes"
	"context"
	"testing"
)

func TestFakeShell(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script, out string
		rc          int
	}{
		{"echo hi", "hi\n", 0},
		{"exit 3", "", 3},
		{"( sh -c 'exit 3' ); echo M_$?", "M_3\n", 0},
		{"( exit 4 ); echo \"rc=$?\"", "rc=4\n", 0},
		{"( 'echo' 'a b' ); echo M$?", "a b\nM0\n", 0},
		{"false; echo $?", "1\n", 0},
		{"exit 2; echo never", "", 2},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		sh := &FakeShell{Stdout: &out, Stderr: &out}
		if rc := sh.Run(context.Background(), tc.script); rc != tc.rc || out.String() != tc.out {
			t.Errorf("%q: rc %d out %q, want %d %q", tc.script, rc, out.String(), tc.rc, tc.out)
		}
	}
}

// FakeExec is one shell whether a command comes bare or wrapped in sh -c:
// the same words end with the same status and output.
func TestFakeExecOneShellBareOrWrapped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		argv []string
		out  string
		rc   int
	}{
		{[]string{"false"}, "", 1},
		{[]string{"sh", "-c", "false"}, "", 1},
		{[]string{"exit", "3"}, "", 3},
		{[]string{"bash", "-c", "echo a; exit 3"}, "a\n", 3},
		{[]string{"echo", "a", "b"}, "a b\n", 0},
		{[]string{"/bin/sh", "-c", "echo 'a b'"}, "a b\n", 0},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		req := ExecRequest{Namespace: "ns", Pod: "p", UID: "u", Container: "c", Command: tc.argv, Stdout: &out}
		err := FakeExec(context.Background(), req)
		rc := 0
		if err != nil {
			ce, ok := err.(interface{ ExitStatus() int })
			if !ok {
				t.Fatalf("%q: %v is no exit status", tc.argv, err)
			}
			rc = ce.ExitStatus()
		}
		if want := IdentityLine(req) + "\n" + tc.out; rc != tc.rc || out.String() != want {
			t.Errorf("%q: rc %d out %q, want %d %q", tc.argv, rc, out.String(), tc.rc, want)
		}
	}
}
