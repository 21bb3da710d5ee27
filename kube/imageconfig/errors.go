package imageconfig

import (
	"fmt"
	"strings"
)

// Kind says why a read failed, coarsely enough for a caller to decide
// between "try again" and "fix the request".
type Kind string

const (
	// Unreachable means the registry could not be talked to (DNS, refused
	// connection, TLS, a 5xx or 429 from it or a proxy). Retryable.
	Unreachable Kind = "Unreachable"
	// Timeout means no answer within the deadline. Retryable.
	Timeout Kind = "Timeout"
	// Canceled means the caller gave up (Ctrl-C). Retryable.
	Canceled Kind = "Canceled"
	// NotFound means the registry says the repository, tag or digest does not
	// exist, or an index has no variant for the platform.
	NotFound Kind = "NotFound"
	// Unauthorized means the registry refused the credentials (401/403).
	Unauthorized Kind = "Unauthorized"
	// NoEntrypoint means the image exists but its config has neither Entrypoint
	// nor Cmd. Read returns the config together with this error.
	NoEntrypoint Kind = "NoEntrypoint"
	// Invalid means the reference does not parse.
	Invalid Kind = "Invalid"
	// Registry means the registry answered something unusable (unexpected
	// status, malformed manifest, schema 1, a config or argv past the
	// limits).
	Registry Kind = "Registry"
	// NotAllowed means the registry is not among Options.Registries; nothing
	// was sent to it.
	NotAllowed Kind = "NotAllowed"
)

// Error is a failed image-config read.
type Error struct {
	Kind Kind
	Host string // registry host, e.g. "127.0.0.1:5000", "index.docker.io"
	Ref  string // the reference as given
	Err  error  // the cause
}

func (e *Error) Error() string {
	var b strings.Builder
	switch e.Kind {
	case Unreachable:
		fmt.Fprintf(&b, "registry %s unreachable", e.Host)
	case Timeout:
		fmt.Fprintf(&b, "registry %s timed out", e.Host)
	case Canceled:
		fmt.Fprintf(&b, "read from registry %s canceled", e.Host)
	case NotFound:
		fmt.Fprintf(&b, "image %s not found at registry %s", e.Ref, e.Host)
	case Unauthorized:
		fmt.Fprintf(&b, "registry %s refused access to %s", e.Host, e.Ref)
	case NoEntrypoint:
		fmt.Fprintf(&b, "image %s has neither ENTRYPOINT nor CMD", e.Ref)
		return b.String()
	case Invalid:
		fmt.Fprintf(&b, "invalid image reference %q", e.Ref)
	case NotAllowed:
		fmt.Fprintf(&b, "registry %s is not among the allowed registries (--image-registries); %s not read", e.Host, e.Ref)
	default:
		fmt.Fprintf(&b, "registry %s: reading %s failed", e.Host, e.Ref)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(strings.Join(strings.Fields(e.Err.Error()), " "))
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable is true when the same read may succeed later unchanged.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case Unreachable, Timeout, Canceled:
		return true
	}
	return false
}
