package execute

import (
	"errors"
	"fmt"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/model"
)

// Exec's refusal and failure codes, besides the shared ones in package
// refusal. The identity codes are the model's own (the sweep and the TUI use
// the same words).
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
	CodeTransport           = "TRANSPORT"
	CodeNotSynced           = "NOT_SYNCED" // the fleet's first list is still arriving: nothing is resolved yet
	CodeAmbiguous           = "AMBIGUOUS"  // a sandbox name matches several engines
	CodeTimeout             = "TIMEOUT"    // --timeout ended the wait; the command may still run
	CodeConfig              = "CONFIG"     // no kubeconfig, no such context or cluster: retrying cannot help
)

// asError returns err's refusal.Error or, when it carries none, reads it
// strictly: a TRANSPORT failure whose outcome is unknown. nil for nil.
func asError(err error) *refusal.Error {
	if err == nil {
		return nil
	}
	var e *refusal.Error
	if errors.As(err, &e) {
		return e
	}
	return &refusal.Error{Code: CodeTransport, Message: err.Error(), Executed: refusal.ExecutedUnknown, Err: err}
}

func observed(format string, args ...any) model.Evidence {
	return model.Evidence{Kind: model.Observed, Text: fmt.Sprintf(format, args...)}
}

func inferred(format string, args ...any) model.Evidence {
	return model.Evidence{Kind: model.Inferred, Text: fmt.Sprintf(format, args...)}
}
