package sweep_test

import (
	"testing"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/output/outputtest"
)

// A report fails at --fail-on and above; one whose every context was
// unreachable says so.
func TestFailsAndUnreachable(t *testing.T) {
	t.Parallel()
	r := outputtest.SampleReport()
	if !r.Fails(sweep.FailOn{Severity: model.SeverityError}) {
		t.Errorf("fail-on error with errors does not fail")
	}
	r.Findings = r.Findings[2:] // warning + info only
	if r.Fails(sweep.FailOn{Severity: model.SeverityError}) {
		t.Errorf("fail-on error with warnings only fails")
	}
	if !r.Fails(sweep.FailOn{Severity: model.SeverityWarning}) {
		t.Errorf("fail-on warning with a warning does not fail")
	}
	r.Findings = r.Findings[1:] // info only
	if r.Fails(sweep.FailOn{Severity: model.SeverityWarning}) {
		t.Errorf("fail-on warning with info only fails")
	}
	if r.Unreachable() {
		t.Errorf("a report with a reachable context is unreachable")
	}
	r.Contexts[0].Reachable = false
	if !r.Unreachable() {
		t.Errorf("every context unreachable, and the report does not say so")
	}
	if _, err := sweep.ParseFailOn("fatal"); err == nil {
		t.Error("ParseFailOn accepted fatal")
	}
	if s, err := sweep.ParseFailOn("Warning"); err != nil || s != (sweep.FailOn{Severity: model.SeverityWarning}) {
		t.Errorf("sweep.ParseFailOn(Warning) = %v %v", s, err)
	}
	if s, err := sweep.ParseFailOn(sweep.DefaultFailOn); err != nil || s != (sweep.FailOn{Severity: model.SeverityError, Partial: true}) {
		t.Errorf("sweep.ParseFailOn(%s) = %v %v", sweep.DefaultFailOn, s, err)
	}
	for _, bad := range []string{"partial", "error,warning", "error,partial,x"} {
		if _, err := sweep.ParseFailOn(bad); err == nil {
			t.Errorf("ParseFailOn accepted %q", bad)
		}
	}
}
