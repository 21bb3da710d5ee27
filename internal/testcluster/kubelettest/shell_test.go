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
