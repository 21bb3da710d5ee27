package create

import (
	"fmt"
	"strings"
)

// Executed says whether the user's start command may have run, so no
// client re-runs it blindly.
type Executed string

const (
	ExecutedNo      Executed = "no"
	ExecutedUnknown Executed = "unknown"
	ExecutedYes     Executed = "yes"
)

// Exit codes of `sandscope create`.
const (
	ExitReady   = 0 // Ready (or Queued with --wait=false)
	ExitFailed  = 1 // failed after creating; cleaned up unless --keep-failed
	ExitRefused = 2 // refused before creating anything
	ExitUsage   = 3 // usage or connection error
)

// Codes of refusals and errors before anything was created.
const (
	CodeEntrypointUnresolved = "ENTRYPOINT_UNRESOLVED"
	CodeReadOnly             = "READ_ONLY"
	CodeUsage                = "USAGE"
	CodeEngineUnavailable    = "ENGINE_UNAVAILABLE"
	CodeForbidden            = "FORBIDDEN"
	CodeNotFound             = "NOT_FOUND"
	CodeConnection           = "CONNECTION"
	CodeCreateRejected       = "CREATE_REJECTED"
	CodeInternal             = "INTERNAL"
)

// Cleanup says what happened to the created object after a failure.
type Cleanup struct {
	// Deleted: the object no longer exists. Pending: deletion requested
	// but the object is still there (finalizers) when sandscope stopped
	// waiting. Kept: --keep-failed left it in place.
	Deleted     bool     `json:"deleted"`
	Pending     bool     `json:"pending,omitempty"`
	Kept        bool     `json:"kept,omitempty"`
	Finalizers  []string `json:"finalizers,omitempty"`
	Terminating []string `json:"terminatingPods,omitempty"`
	Detail      string   `json:"detail"`
}

// Error is a refusal or a failure, shaped for programs (the CLI prints
// {"error":{...}}).
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	// RetryReason says why a failure that would otherwise be retryable is
	// not: retrying at once would add to a pile-up (Pods still pulling).
	RetryReason string        `json:"retryReason,omitempty"`
	Executed    Executed      `json:"executed"`
	Stage       Stage         `json:"stage,omitempty"` // last stage reached; empty when nothing was created
	Sandbox     string        `json:"sandbox,omitempty"`
	Namespace   string        `json:"namespace,omitempty"`
	Cleanup     *Cleanup      `json:"cleanup,omitempty"`
	Stages      []StageRecord `json:"stages,omitempty"`
	Err         error         `json:"-"`
	exit        int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Code, e.Message)
	if e.Sandbox != "" {
		fmt.Fprintf(&b, " [sandbox %s/%s", e.Namespace, e.Sandbox)
		if e.Stage != "" {
			fmt.Fprintf(&b, ", last stage %s", e.Stage)
		}
		b.WriteString("]")
	}
	if e.Cleanup != nil && e.Cleanup.Detail != "" {
		fmt.Fprintf(&b, "; %s", e.Cleanup.Detail)
	}
	if e.RetryReason != "" {
		fmt.Fprintf(&b, " (retryable: %v: %s; executed: %s)", e.Retryable, e.RetryReason, e.Executed)
	} else {
		fmt.Fprintf(&b, " (retryable: %v, executed: %s)", e.Retryable, e.Executed)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode is the stable code (READ_ONLY, ...), as the UI asks of refusals.
func (e *Error) ErrorCode() string { return e.Code }

// ExitCode is the process exit code for this error.
func (e *Error) ExitCode() int {
	if e.exit == 0 {
		return ExitFailed
	}
	return e.exit
}

// Refused is true when nothing was created.
func (e *Error) Refused() bool { return e.exit == ExitRefused || e.exit == ExitUsage }

func refused(code, msg string, retryable bool) *Error {
	return &Error{Code: code, Message: msg, Retryable: retryable, Executed: ExecutedNo, exit: ExitRefused}
}

func usage(msg string) *Error {
	return &Error{Code: CodeUsage, Message: msg, Executed: ExecutedNo, exit: ExitUsage}
}

// Usage builds a usage error (for the CLI's own flag checks).
func Usage(msg string) *Error { return usage(msg) }

// Refuse builds a refusal before anything was created (exit 2).
func Refuse(code, msg string, retryable bool) *Error { return refused(code, msg, retryable) }

// ConnectionError wraps a failure to reach the cluster before anything was
// created (exit 3).
func ConnectionError(err error) *Error {
	return &Error{Code: CodeConnection, Message: err.Error(), Retryable: true, Executed: ExecutedNo, Err: err, exit: ExitUsage}
}
