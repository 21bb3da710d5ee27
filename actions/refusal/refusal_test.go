package refusal_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/model"
)

// The JSON line is the contract `exec` prints on stderr: every key always
// there, the evidence a list even when there is none.
func TestJSON(t *testing.T) {
	err := refusal.New("IP_TAKEN", "address taken", false, model.Evidence{Kind: model.Observed, Text: "seen"})
	var r *refusal.Error
	if !errors.As(err, &r) {
		t.Fatalf("New returned %T", err)
	}
	want := `{"error":{"code":"IP_TAKEN","message":"address taken","retryable":false,"executed":"no","evidence":[{"kind":"observed","text":"seen"}]}}`
	if got := string(r.JSON()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	r = &refusal.Error{Code: "TRANSPORT", Message: "broke", Retryable: true, Executed: refusal.ExecutedUnknown}
	want = `{"error":{"code":"TRANSPORT","message":"broke","retryable":true,"executed":"unknown","evidence":[]}}`
	if got := string(r.JSON()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if r.Evidence != nil {
		t.Errorf("JSON changed the error: evidence %v", r.Evidence)
	}
}

// An Error is found through wrapping, says whether the request may have
// run, and reads as its code, message and outcome.
func TestErrorThroughWrapping(t *testing.T) {
	cause := errors.New("connection reset")
	err := fmt.Errorf("opening the shell: %w", &refusal.Error{Code: "TRANSPORT", Message: "stream broke",
		Executed: refusal.ExecutedUnknown, Err: cause, Evidence: []model.Evidence{{Kind: model.Inferred, Text: "the Pod may have it"}}})
	var r *refusal.Error
	if !errors.As(err, &r) || !errors.Is(err, cause) {
		t.Fatalf("error or cause lost in %v", err)
	}
	if !r.MayHaveRun() || r.ErrorCode() != "TRANSPORT" || r.Error() != "TRANSPORT: stream broke (executed: unknown)" {
		t.Errorf("MayHaveRun %v, ErrorCode %q, Error %q", r.MayHaveRun(), r.ErrorCode(), r.Error())
	}
	if got := r.EvidenceLines(); len(got) != 1 || got[0] != "inferred: the Pod may have it" {
		t.Errorf("evidence lines %q", got)
	}
	if errors.As(refusal.New(refusal.CodeReadOnly, "read-only", false), &r); r.MayHaveRun() || r.Executed != refusal.ExecutedNo {
		t.Errorf("New is no refusal: executed %q", r.Executed)
	}
}
