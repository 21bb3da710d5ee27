// Package model is sandscope's pure domain: the objects of a fleet as
// sandscope keeps them (Pod, BatchSandbox, agent Sandbox, Pool) and their
// conversions from the API's, the derived row of a sandbox with the identity
// of the Pods behind it, and the notices, findings and score reported about
// them. It does no I/O: kube/ feeds the objects to the engine of
// model/fleet, which derives the rows; actions/ and ui/ read them.
package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Engine names the source a sandbox comes from.
type Engine string

// The engines sandscope reads sandboxes from.
const (
	EngineBatchSandbox Engine = "bsbx"  // OpenSandbox BatchSandbox (sandbox.opensandbox.io)
	EngineAgent        Engine = "agent" // kubernetes-sigs agent-sandbox Sandbox (agents.x-k8s.io)
	EnginePod          Engine = "pod"   // a plain Pod labelled opensandbox.io/id (or a user selector)
)

// IdentityState answers, for one recorded address: "if a request were sent to
// the address the engine records, which Pod would receive it?"
type IdentityState string

const (
	// IdentityOK means the recorded IP is the linked Pod's current podIP, the Pod is
	// Running and not deleting, and no other live Pod holds the IP.
	IdentityOK IdentityState = "OK"
	// IdentityIPTaken means another live Pod (different UID) holds the recorded IP.
	IdentityIPTaken IdentityState = "IP_TAKEN"
	// IdentityPodDead means the linked Pod is Failed/Succeeded (or its main
	// container terminated) while the engine still records its address.
	IdentityPodDead IdentityState = "POD_DEAD"
	// IdentityPodGone means the linked Pod no longer exists; its address is still recorded.
	IdentityPodGone IdentityState = "POD_GONE"
	// IdentityUIDChanged means a Pod with the linked name exists but is not the Pod
	// first bound (same-name re-creation seen while watching).
	IdentityUIDChanged IdentityState = "UID_CHANGED"
	// IdentityIPStale means the linked Pod lives but at another IP than recorded.
	IdentityIPStale IdentityState = "IP_STALE"
	// IdentityUnassigned means an empty slot (no address recorded yet).
	IdentityUnassigned IdentityState = "UNASSIGNED"
	// IdentityUnknown means informers not synced or connection lost. Never show a stale OK.
	IdentityUnknown IdentityState = "UNKNOWN"
)

// identityOrder lists the identity states from harmless to dangerous.
var identityOrder = [...]IdentityState{IdentityOK, IdentityUnassigned, IdentityUnknown, IdentityIPStale,
	IdentityUIDChanged, IdentityPodGone, IdentityPodDead, IdentityIPTaken}

// Rank orders identity states from harmless (OK, 0) to dangerous (IP_TAKEN,
// 7); any other value ranks as OK. The header's counts, the state sort and
// the problem filter ask it for every sandbox on every live refresh: the
// usual OK is found at the first comparison, no map lookup.
func (s IdentityState) Rank() int {
	for i, o := range identityOrder {
		if o == s {
			return i
		}
	}
	return 0
}

// EffectiveState is what is actually true of a sandbox, whatever its engine
// says. It is a byte in every derived row, where a string took two words
// (the row and its one slot fill a smaller size class); it reads and writes
// as its name (String, MarshalText), and the zero value as "".
type EffectiveState uint16

// The effective states, each with what makes it true.
const (
	StatePending     EffectiveState = iota + 1 // no Pod placed yet
	StateStarting                              // Pod scheduled, containers not all running
	StateRunning                               // main container running, Pod not deleting
	StateDead                                  // Pod Failed/Succeeded or main container terminated
	StateGone                                  // the linked Pod no longer exists
	StateTerminating                           // the Pod (or the sandbox object) is being deleted
	StateFailed                                // engine failure with no running Pod (image pull, crash loop, ...)
	StateUnknown                               // not synced / disconnected
	StateSuspended                             // paused on purpose (agent-sandbox operatingMode Suspended); no Pod
	StateExpired                               // past its shutdown time; the engine removed the Pod and keeps the object
)

// stateNames are the states' names, by value ("" for the zero value).
var stateNames = [...]string{"", "Pending", "Starting", "Running", "Dead", "Gone", "Terminating", "Failed", "Unknown", "Suspended", "Expired"}

// String is the state's name ("" for the zero value).
func (s EffectiveState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "EffectiveState(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText writes the state's name; a value no state has is an error.
func (s EffectiveState) MarshalText() ([]byte, error) {
	if int(s) >= len(stateNames) {
		return nil, fmt.Errorf("no effective state %d", s)
	}
	return []byte(stateNames[s]), nil
}

// MarshalJSON writes the state's name as a JSON string. The text methods
// alone would do for encoding/json, but apimachinery's unstructured
// converter, which -o json and yaml go through, honours only this one.
func (s EffectiveState) MarshalJSON() ([]byte, error) {
	name, err := s.MarshalText()
	if err != nil {
		return nil, err
	}
	return strconv.AppendQuote(nil, string(name)), nil
}

// UnmarshalJSON reads a state's name from a JSON string.
func (s *EffectiveState) UnmarshalJSON(b []byte) error {
	name, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("effective state %s: %w", b, err)
	}
	return s.UnmarshalText([]byte(name))
}

// UnmarshalText reads a state's name ("" is the zero value).
func (s *EffectiveState) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = EffectiveState(i)
			return nil
		}
	}
	return fmt.Errorf("unknown effective state %q", b)
}

// Severity of a notice or finding.
type Severity string

// The severities, from the one that needs action to the one that informs.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rank orders severities: error > warning > info > anything else.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// EvidenceKind keeps what was seen apart from what was concluded.
type EvidenceKind string

// The kinds of evidence: what was read from the cluster, and what was
// concluded from it.
const (
	Observed EvidenceKind = "observed" // read from the API: a status field written by its owner, a log line
	Inferred EvidenceKind = "inferred" // computed from observed facts (a predicted time, a match)
	// Claimed is what an Event says. Anyone allowed to create Events in a
	// namespace (tenants included) writes them, reporting fields and all,
	// so an Event only corroborates what the Pod's spec and status show.
	Claimed EvidenceKind = "claimed"
)

// Evidence is one piece of support for a notice or finding.
type Evidence struct {
	Kind EvidenceKind `json:"kind"`
	Text string       `json:"text"`
	At   *time.Time   `json:"at,omitempty"`
}

// Notice codes. They are a contract shared by the TUI, the sweep (as finding
// codes) and exec refusals: never rename one.
const (
	CodeIPTaken               = "IP_TAKEN"
	CodePodDead               = "POD_DEAD"
	CodePodGone               = "POD_GONE"
	CodeUIDChanged            = "UID_CHANGED"
	CodeIPStale               = "IP_STALE"
	CodeStuckTerminating      = "STUCK_TERMINATING"
	CodeEntrypointNotRun      = "ENTRYPOINT_NOT_RUN"
	CodeImageConfigUnreadable = "IMAGE_CONFIG_UNREADABLE"
	CodeNotExecReady          = "NOT_EXEC_READY"
	CodeStateMismatch         = "STATE_MISMATCH"
	CodeFailedSticky          = "FAILED_STICKY"
	CodeExpiringSoon          = "EXPIRING_SOON"
	CodeBadAnnotation         = "BAD_ANNOTATION"
	CodeRestarted             = "RESTARTED"
	CodeRestartOOM            = "RESTART_OOM"
	CodeRestartLiveness       = "RESTART_LIVENESS"
	CodeRestartEvicted        = "RESTART_EVICTED"
	CodeRestartUnexplained    = "RESTART_UNEXPLAINED"
	CodeContextUnreachable    = "CONTEXT_UNREACHABLE"
	CodeContextPartial        = "CONTEXT_PARTIAL"     // the read could not see everything (forbidden, timed out, CRD missing)
	CodeNamespaceNotFound     = "NAMESPACE_NOT_FOUND" // the namespace swept does not exist: nothing was there to see
	CodeTaskFailed            = "TASK_FAILED"
	CodePodRecreated          = "POD_RECREATED"
	// agent-sandbox extensions: about a warm pool or a claim, not one sandbox.
	CodeWarmPoolExhausted = "WARM_POOL_EXHAUSTED"
	CodeWarmPoolDegraded  = "WARM_POOL_DEGRADED"
	CodeClaimPending      = "CLAIM_PENDING"
	CodeClaimSandboxDead  = "CLAIM_SANDBOX_DEAD"
)

// Notice is a short coded message attached to a sandbox. The sweep turns each
// into a Finding; the TUI shows them in the NOTICES column and the detail view.
type Notice struct {
	Code     string     `json:"code"`
	Severity Severity   `json:"severity"`
	Message  string     `json:"message"`
	Pod      string     `json:"pod,omitempty"` // the Pod it is about, when there is one
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Finding is a notice placed in a context: what `sandscope sweep` reports.
// The JSON field names are a contract.
type Finding struct {
	Code      string     `json:"code"`
	Severity  Severity   `json:"severity"`
	Context   string     `json:"context"`
	Namespace string     `json:"namespace"`
	Sandbox   string     `json:"sandbox"`
	Pod       string     `json:"pod"`
	Message   string     `json:"message"`
	Evidence  []Evidence `json:"evidence"`
}

// Holder is a Pod that holds an IP address.
type Holder struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	UID       string `json:"uid"`
	Sandbox   string `json:"sandbox,omitempty"` // key of the sandbox the Pod belongs to, if any
	// Since is when the Pod is known to hold the IP from: its start
	// (status.startTime), or, when SinceObserved, the time sandscope first
	// saw it hold the IP (a Pod with no startTime, or one that took the IP
	// while watched). Zero when unknown.
	Since         time.Time `json:"since"`
	SinceObserved bool      `json:"sinceObserved,omitempty"`
}

// SinceText says what Since is, in layout (UTC): "started 15:04:05",
// "observed holding it since 15:04:05", or "" when unknown.
func (h *Holder) SinceText(layout string) string {
	switch {
	case h.Since.IsZero():
		return ""
	case h.SinceObserved:
		return "observed holding it since " + h.Since.UTC().Format(layout)
	}
	return "started " + h.Since.UTC().Format(layout)
}

// IPHolding is one entry of an IP's history: a Pod held the IP from From
// until To (nil while it still does).
type IPHolding struct {
	IP        string     `json:"ip"`
	Namespace string     `json:"namespace"`
	Pod       string     `json:"pod"`
	UID       string     `json:"uid"`
	Sandbox   string     `json:"sandbox,omitempty"`
	From      time.Time  `json:"from"`
	To        *time.Time `json:"to,omitempty"`
}

// SandboxKey is the key of a sandbox in a fleet: "<engine>/<namespace>/<name>".
func SandboxKey(e Engine, namespace, name string) string {
	return string(e) + "/" + namespace + "/" + name
}

// ParseSandboxKey splits a sandbox key; ok is false for anything that is
// not "<engine>/<namespace>/<name>" with a known engine.
func ParseSandboxKey(key string) (e Engine, namespace, name string, ok bool) {
	eng, rest, ok1 := strings.Cut(key, "/")
	ns, name, ok2 := strings.Cut(rest, "/")
	switch Engine(eng) {
	case EngineBatchSandbox, EngineAgent, EnginePod:
	default:
		return "", "", "", false
	}
	if !ok1 || !ok2 || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", "", false
	}
	return Engine(eng), ns, name, true
}
