package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
)

// A bad flag gets the usage exit code of its command family, the parent's
// and every subcommand's alike (the README's exit code table).
func TestBadFlagExitCodes(t *testing.T) {
	for args, want := range map[string]int{
		"--bogus":                 2,
		"sweep --bogus":           2,
		"exec --bogus":            2,
		"explain restart --bogus": 2,
		"get sb --bogus":          2,
		"create --bogus":          3,
		"entrypoints --bogus":     3,
		"entrypoints ls --bogus":  3,
		"entrypoints set --bogus": 3,
	} {
		var out, errOut bytes.Buffer
		if code := Main(strings.Fields(args), strings.NewReader(""), &out, &errOut); code != want {
			t.Errorf("sandscope %s: exit %d, want %d (%s)", args, code, want, strings.TrimSpace(errOut.String()))
		}
	}
}

// The README's exit codes of exec, create (and entrypoints) and sweep, as
// each command maps its actions' results.
func TestExitCodeTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"refused", &refusal.Error{Code: execute.CodeIPTaken, Executed: refusal.ExecutedNo}, 125},
		{"may have run", &refusal.Error{Code: execute.CodeTimeout, Executed: refusal.ExecutedUnknown}, 126},
		{"not a refusal: read strictly", errors.New("stream broke"), 126},
	} {
		var ee *ExitError
		if !errors.As(printExecError(&Globals{Out: io.Discard, Err: io.Discard}, tc.err), &ee) || ee.Code != tc.want {
			t.Errorf("exec, %s: %+v, want exit %d", tc.name, ee, tc.want)
		}
	}

	failedAfterCreating := &create.Error{Sandbox: "id"}
	failedAfterCreating.Code = create.CodeImagePull
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"usage", create.Usage("bad flag"), 3},
		{"no cluster", create.ConnectionError(errors.New("no route")), 3},
		{"object not built", create.Refuse(create.CodeInternal, "bad spec", false), 3},
		{"refused", create.Refuse(refusal.CodeReadOnly, "read-only", false), 2},
		{"registry", fmt.Errorf("resolving: %w", &imageconfig.Error{Kind: imageconfig.NotFound}), 2},
		{"failed after creating", failedAfterCreating, 1},
		{"anything else", errors.New("ConfigMap update conflict"), 1},
	} {
		if got := createExitCode(tc.err); got != tc.want {
			t.Errorf("create, %s: exit %d, want %d", tc.name, got, tc.want)
		}
	}

	report := &sweep.Report{
		Contexts: []sweep.ContextResult{{Name: "a", Reachable: true}},
		Findings: []model.Finding{{Code: model.CodeRestartOOM, Severity: model.SeverityWarning}},
	}
	if got := sweepExitCode(report, sweep.FailOn{Severity: model.SeverityError}); got != 0 {
		t.Errorf("sweep, a warning at --fail-on error: exit %d, want 0", got)
	}
	if got := sweepExitCode(report, sweep.FailOn{Severity: model.SeverityWarning}); got != 1 {
		t.Errorf("sweep, a warning at --fail-on warning: exit %d, want 1", got)
	}
	report.Contexts[0].Reachable = false
	if got := sweepExitCode(report, sweep.FailOn{Severity: model.SeverityWarning}); got != 2 {
		t.Errorf("sweep, no context reachable: exit %d, want 2", got)
	}
}
