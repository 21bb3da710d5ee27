package execute

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sandscope/sandscope/model"
)

// Refusal and failure codes. The identity codes are the model's own (the
// sweep and the TUI use the same words); the rest belong to exec.
const (
	CodeIPTaken             = model.CodeIPTaken
	CodePodGone             = model.CodePodGone
	CodeUIDChanged          = model.CodeUIDChanged
	CodeIPStale             = model.CodeIPStale
	CodeNotExecReady        = model.CodeNotExecReady
	CodePodDead             = model.CodePodDead
	CodeHostNetwork         = "HOST_NETWORK" // execd over a hostNetwork Pod's address: the node's, not the sandbox's
	CodeRedirected          = "REDIRECTED"   // execd answered with a redirect: never followed
	CodePodNotRunning       = "POD_NOT_RUNNING"
	CodePodDeleting         = "POD_DELETING"
	CodeContainerNotRunning = "CONTAINER_NOT_RUNNING"
	CodeReadOnly            = "READ_ONLY"
	CodeForbidden           = "FORBIDDEN"
	CodeTransport           = "TRANSPORT"
	CodeNotFound            = "NOT_FOUND"  // no such sandbox or Pod in the fleet
	CodeNotSynced           = "NOT_SYNCED" // the fleet's first list is still arriving: nothing is resolved yet
	CodeAmbiguous           = "AMBIGUOUS"  // a sandbox name matches several engines
	CodeTimeout             = "TIMEOUT"    // --timeout ended the wait; the command may still run
	CodeUsage               = "USAGE"      // a request the transport cannot carry (stdin over execd, ...)
	CodeConfig              = "CONFIG"     // no kubeconfig, no such context or cluster: retrying cannot help
)

// Executed says whether the command ran, as far as sandscope can prove.
type Executed string

const (
	ExecutedNo      Executed = "no"      // provably did not start
	ExecutedUnknown Executed = "unknown" // the request may have run
	ExecutedYes     Executed = "yes"     // it ran and its end was seen
)

// Exit codes of `sandscope exec` besides the command's own.
const (
	ExitRefused = 125 // sandscope refused or failed before anything ran
	ExitUnknown = 126 // the outcome is unknown: the request may have run
)

// Error is a refusal or failure, shaped for programs: the CLI prints it as
// {"error":{...}} on stderr, the UI shows Code. It never contains a credential.
type Error struct {
	Code      string           `json:"code"`
	Message   string           `json:"message"`
	Retryable bool             `json:"retryable"`
	Executed  Executed         `json:"executed"`
	Evidence  []model.Evidence `json:"evidence"`
	Err       error            `json:"-"`
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (executed: %s)", e.Code, e.Message, e.Executed)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// EvidenceLines are the evidence as text, "observed: ..." or "inferred:
// ...", for the UI's message log.
func (e *Error) EvidenceLines() []string {
	out := make([]string, len(e.Evidence))
	for i, ev := range e.Evidence {
		out[i] = string(ev.Kind) + ": " + ev.Text
	}
	return out
}

// ErrorCode is what the UI shows prominently.
func (e *Error) ErrorCode() string { return e.Code }

// MayHaveRun reports whether the command may have started (executed is
// not "no"): then the error is not a refusal, and nothing may retry blindly.
func (e *Error) MayHaveRun() bool { return e.Executed != ExecutedNo }

// ExitCode is 126 when the command may have run, else 125.
func (e *Error) ExitCode() int {
	if e.Executed == ExecutedNo {
		return ExitRefused
	}
	return ExitUnknown
}

// JSON is the one-line object the CLI prints on stderr.
func (e *Error) JSON() []byte {
	out := *e
	if out.Evidence == nil {
		out.Evidence = []model.Evidence{}
	}
	b, _ := json.Marshal(struct {
		Error *Error `json:"error"`
	}{&out})
	return b
}

// AsError returns err as an *Error, wrapping anything else as a TRANSPORT
// failure whose outcome is unknown (the strict reading).
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeTransport, Message: err.Error(), Executed: ExecutedUnknown, Err: err}
}

func refused(code, msg string, retryable bool, ev ...model.Evidence) *Error {
	return &Error{Code: code, Message: msg, Retryable: retryable, Executed: ExecutedNo, Evidence: ev}
}

func observed(format string, args ...any) model.Evidence {
	return model.Evidence{Kind: model.Observed, Text: fmt.Sprintf(format, args...)}
}

func inferred(format string, args ...any) model.Evidence {
	return model.Evidence{Kind: model.Inferred, Text: fmt.Sprintf(format, args...)}
}
