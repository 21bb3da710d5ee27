package sweep

import (
	"testing"

	"github.com/sandscope/sandscope/model"
)

// A partial context fails the default --fail-on (error,partial), whatever
// its finding's severity, and passes --fail-on error (output's
// TestWriteSweepPartial: in JUnit, a failure of the context's own case).
func TestPartialFails(t *testing.T) {
	t.Parallel()
	r := Report{
		Contexts: []ContextResult{{Name: "a", Reachable: true, Partial: true, Unseen: []string{"forbidden: list batchsandboxes"}}},
		Findings: []model.Finding{partialFinding("a", []string{"forbidden: list batchsandboxes"})},
	}
	def, err := ParseFailOn(DefaultFailOn)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fails(def) {
		t.Error("a partial context passes the default --fail-on")
	}
	if r.Fails(FailOn{Severity: model.SeverityError}) {
		t.Error("a partial context fails --fail-on error (without partial)")
	}
}
