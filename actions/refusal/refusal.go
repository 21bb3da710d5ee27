// Package refusal is the one vocabulary in which sandscope's actions answer
// when they do not succeed: a refusal (nothing ran) or a failure (the request
// may have run). Its Error carries a stable code a program can switch on,
// whether the request may have run (Executed), whether retrying can help, the
// evidence behind the answer, and the JSON form programs read. The word
// "refusal" is kept for the answer after which nothing ran (Executed "no").
//
// Each action keeps its own codes (exec's IP_TAKEN, create's
// ENTRYPOINT_UNRESOLVED); the words every action uses are here. Exit codes
// are not: they are each command's own, and only cli/ maps an Error to one.
//
// Functions return an Error as a plain error, never as *Error: a nil
// *Error returned as an error is a non-nil error (the typed-nil trap).
// Callers find it with errors.As:
//
//	var r *refusal.Error
//	if errors.As(err, &r) && r.Executed == refusal.ExecutedNo { ... }
package refusal

import (
	"fmt"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// Codes every action uses in the same sense.
const (
	CodeReadOnly  = "READ_ONLY" // sandscope runs --readonly: nothing that changes the cluster is sent
	CodeForbidden = "FORBIDDEN" // the API server (or the exec daemon) denied the request
	CodeNotFound  = "NOT_FOUND" // no such object
	CodeUsage     = "USAGE"     // a request the action cannot carry out as given
)

// Executed says whether the request (the user's command, the start command
// of a sandbox) may have run, as far as sandscope can prove, so that no
// client re-runs it blindly.
type Executed string

// The answers to "may it have run?".
const (
	ExecutedNo      Executed = "no"      // provably did not start
	ExecutedUnknown Executed = "unknown" // may have run
	ExecutedYes     Executed = "yes"     // it ran and its end was seen
)

// Error is an action's answer when it did not succeed: a refusal (Executed
// "no") or a failure (the request may have run), shaped for programs. It
// never contains a credential.
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	// RetryReason says why a failure that would otherwise be retryable is
	// not (retrying at once would add to a pile-up).
	RetryReason string   `json:"retryReason,omitempty"`
	Executed    Executed `json:"executed"`
	// Evidence is what the answer rests on, each item observed or inferred.
	Evidence []model.Evidence `json:"evidence"`
	Err      error            `json:"-"`
}

// New is a refusal: nothing ran.
func New(code, message string, retryable bool, evidence ...model.Evidence) error {
	return &Error{Code: code, Message: message, Retryable: retryable, Executed: ExecutedNo, Evidence: evidence}
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (executed: %s)", e.Code, e.Message, e.Executed)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode is the stable code, which the UI shows prominently.
func (e *Error) ErrorCode() string { return e.Code }

// MayHaveRun reports whether the request may have started (Executed is not
// "no"): then the error is no refusal, and nothing may retry it blindly.
func (e *Error) MayHaveRun() bool { return e.Executed != ExecutedNo }

// EvidenceLines are the evidence as text, "observed: ..." or "inferred:
// ...", for the UI's message log.
func (e *Error) EvidenceLines() []string {
	out := make([]string, len(e.Evidence))
	for i, ev := range e.Evidence {
		out[i] = string(ev.Kind) + ": " + ev.Text
	}
	return out
}

// JSON is the one line a command prints for programs,
// {"error":{"code",...,"evidence":[...]}}, the evidence a list even when empty.
func (e *Error) JSON() []byte {
	out := *e
	if out.Evidence == nil {
		out.Evidence = []model.Evidence{}
	}
	b, _ := textsafe.MarshalJSON(struct {
		Error *Error `json:"error"`
	}{&out})
	return b
}
