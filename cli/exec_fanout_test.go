package cli

import (
	"strings"
	"testing"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/clitest"
)

// A fan-out whose selection matches nothing ran nowhere: it says so with
// NOT_FOUND and exit 125, never a silent exit 0 a script takes for success.
func TestExecFanOutToNothingIsNotFound(t *testing.T) {
	for _, args := range [][]string{
		{"--all-of-pool", "nosuchpool", "-o", "jsonl"},
		{"--selector", "x=y"},
		{"-n", "eval", "--selector", "x=y", "-o", "jsonl"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := clitest.Run(Main, "", append(append([]string{"--demo", "exec"}, args...), "--", "hostname")...)
			if r.Code != execExitRefused || r.Stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 125 and no lines", r.Code, r.Stdout, r.Stderr)
			}
			e := r.ErrorObject(t, "code", "message", "retryable", "executed", "evidence")
			if e["code"] != refusal.CodeNotFound || e["executed"] != "no" {
				t.Errorf("error %v, want NOT_FOUND, executed no", e)
			}
		})
	}
}
