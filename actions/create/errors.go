package create

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// Create's codes of refusals and errors before anything was created,
// besides the shared ones in package refusal (the failures after creating
// are in stages.go).
const (
	CodeEntrypointUnresolved = "ENTRYPOINT_UNRESOLVED"
	CodeEngineUnavailable    = "ENGINE_UNAVAILABLE"
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

// Error is a create's refusal or failure: the shared refusal.Error (code,
// message, retryable, executed: whether the start command may have run)
// and how far the create got. Functions return it as an error; errors.As
// finds it as a *Error or as its *refusal.Error.
type Error struct {
	actionError
	Stage Stage `json:"stage,omitempty"` // last stage reached; empty when nothing was created
	// Sandbox is the object created, or perhaps created (the create request
	// may have reached the server); empty when nothing was.
	Sandbox   string        `json:"sandbox,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	Cleanup   *Cleanup      `json:"cleanup,omitempty"`
	Stages    []StageRecord `json:"stages,omitempty"`
}

// actionError names refusal.Error for embedding: embedded under its own
// name its field would be called Error, the name of the method every error
// has. Embedded, its fields stay at the top of create's JSON.
type actionError = refusal.Error

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

// Created reports whether the create got as far as an object (or perhaps
// did): its failure is then a failure, never a refusal. When it is false,
// nothing was created.
func (e *Error) Created() bool { return e.Sandbox != "" }

// As lets errors.As find the shared refusal.Error inside a create's error.
func (e *Error) As(target any) bool {
	if r, ok := target.(**refusal.Error); ok {
		*r = &e.actionError
		return true
	}
	return false
}

// MarshalJSON writes create's form of the error: the shared fields, less
// the evidence (the stages are a create's account), then how far it got.
func (e *Error) MarshalJSON() ([]byte, error) {
	type fields Error // the same fields without this method
	return json.Marshal(struct {
		*fields
		Evidence []model.Evidence `json:"evidence,omitempty"` // shadows the refusal's: never set
	}{fields: (*fields)(e)})
}

// nothingCreated is an Error before any object was created: refused, or
// failed (no connection, an object the server rejected) without one.
func nothingCreated(code, msg string, retryable bool) *Error {
	return &Error{actionError: refusal.Error{Code: code, Message: msg, Retryable: retryable, Executed: refusal.ExecutedNo}}
}

func usage(msg string) *Error { return nothingCreated(refusal.CodeUsage, msg, false) }

// Usage is a usage error (for the CLI's own flag checks).
func Usage(msg string) error { return usage(msg) }

// Refuse is a refusal before anything was created.
func Refuse(code, msg string, retryable bool) error { return nothingCreated(code, msg, retryable) }

// ConnectionError is a failure to reach the cluster before anything was
// created: worth a retry, unless the configuration itself is wrong or
// missing (no kubeconfig, no such context) or the server refused the
// credentials, which no retry changes.
func ConnectionError(err error) error {
	var ce *kube.ConnectError
	final := errors.As(err, &ce) && (ce.Local || ce.Denied)
	e := nothingCreated(CodeConnection, err.Error(), !final)
	e.Err = err
	return e
}
