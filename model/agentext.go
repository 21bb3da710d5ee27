package model

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The agent-sandbox extensions (extensions.agents.x-k8s.io): a
// SandboxClaim is what a user holds, bound to a Sandbox adopted from a
// SandboxWarmPool (or made for it); a SandboxTemplate is the pod template
// both are made from.

// Owner kinds of an agent Sandbox made by the extensions.
const (
	KindSandboxClaim    = "SandboxClaim"
	KindSandboxWarmPool = "SandboxWarmPool"
)

// Launch types of a claimed Sandbox: adopted from a warm pool, or made for
// the claim when no member was ready.
const (
	LaunchWarm = "warm"
	LaunchCold = "cold"
)

// SandboxClaim is the slim typed form of a SandboxClaim.
type SandboxClaim struct {
	ObjectMeta
	WarmPool string // spec.warmPoolRef.name
	Template string // spec.sandboxTemplateRef.name (older versions)
	// Sandbox is the Sandbox the claim is bound to: status.sandbox.name,
	// else its agents.x-k8s.io/sandbox-name annotation; "" while unbound.
	Sandbox    string
	PodIPs     []string // status.sandbox.podIPs
	Conditions []Condition
}

// Claim states, as `get claims` shows them.
const (
	ClaimBound   = "Bound"
	ClaimPending = "Pending"
	ClaimFailed  = "Failed"
)

// ReadyCondition is the claim's Ready condition, nil when there is none.
func (c *SandboxClaim) ReadyCondition() *Condition {
	for i := range c.Conditions {
		if c.Conditions[i].Type == "Ready" {
			return &c.Conditions[i]
		}
	}
	return nil
}

// State is Bound once the claim names its Sandbox, Failed when its Ready
// condition is False for a reason other than waiting, else Pending.
func (c *SandboxClaim) State() string {
	if c.Sandbox != "" {
		return ClaimBound
	}
	if r := c.ReadyCondition(); r != nil && r.Status == "False" && r.Reason != "" && !waitingReason(r.Reason) {
		return ClaimFailed
	}
	return ClaimPending
}

func waitingReason(r string) bool {
	switch r {
	case "Pending", "SandboxNotReady", "DependenciesNotReady", "SandboxPending", "Provisioning", "WaitingForSandbox":
		return true
	}
	return false
}

// WarmPool is the slim typed form of a SandboxWarmPool.
type WarmPool struct {
	ObjectMeta
	Template      string // spec.sandboxTemplateRef.name
	Desired       int32  // spec.replicas
	Replicas      int32  // status.replicas: members (claimed Sandboxes leave the pool)
	ReadyReplicas int32  // status.readyReplicas: members with Ready True
	Selector      string // status.selector
}

// SandboxTemplate is what sandscope keeps of a SandboxTemplate: that it exists.
type SandboxTemplate struct {
	ObjectMeta
}

// AnnotationSandboxName is where a claim names its Sandbox besides its status.
const AnnotationSandboxName = "agents.x-k8s.io/sandbox-name"

// SandboxClaimFromUnstructured converts a SandboxClaim. nil in, nil out.
func SandboxClaimFromUnstructured(u *unstructured.Unstructured) *SandboxClaim {
	if u == nil {
		return nil
	}
	obj := u.Object
	c := &SandboxClaim{ObjectMeta: slimMeta(u)}
	c.WarmPool = nestedString(obj, "spec", "warmPoolRef", "name")
	c.Template = nestedString(obj, "spec", "sandboxTemplateRef", "name")
	c.Sandbox = nestedString(obj, "status", "sandbox", "name")
	if c.Sandbox == "" {
		c.Sandbox = u.GetAnnotations()[AnnotationSandboxName]
	}
	c.PodIPs = nestedStrings(obj, "status", "sandbox", "podIPs")
	c.Conditions = conditionsOf(obj)
	return c
}

// WarmPoolFromUnstructured converts a SandboxWarmPool. nil in, nil out.
func WarmPoolFromUnstructured(u *unstructured.Unstructured) *WarmPool {
	if u == nil {
		return nil
	}
	obj := u.Object
	desired := int32(1) // the CRD's default
	if _, ok := nestedField(obj, "spec", "replicas"); ok {
		desired = int32(nestedInt(obj, "spec", "replicas"))
	}
	return &WarmPool{
		ObjectMeta:    slimMeta(u),
		Template:      nestedString(obj, "spec", "sandboxTemplateRef", "name"),
		Desired:       desired,
		Replicas:      int32(nestedInt(obj, "status", "replicas")),
		ReadyReplicas: int32(nestedInt(obj, "status", "readyReplicas")),
		Selector:      nestedString(obj, "status", "selector"),
	}
}

// SandboxTemplateFromUnstructured converts a SandboxTemplate. nil in, nil out.
func SandboxTemplateFromUnstructured(u *unstructured.Unstructured) *SandboxTemplate {
	if u == nil {
		return nil
	}
	return &SandboxTemplate{ObjectMeta: slimMeta(u)}
}

// AgentOwner is the name of the agent Sandbox's controlling owner of kind
// (SandboxClaim, SandboxWarmPool), "" when it has none.
func (m *ObjectMeta) AgentOwner(kind string) string {
	for _, r := range m.OwnerReferences {
		if r.Kind == kind {
			return r.Name
		}
	}
	return ""
}

// Claim is the SandboxClaim an agent Sandbox is bound to ("" when none).
func (s *Sandbox) Claim() string {
	if s.Meta == nil || s.Engine() != EngineAgent {
		return ""
	}
	return s.Meta.AgentOwner(KindSandboxClaim)
}

// LaunchType is warm for a Sandbox adopted from (or still in) a warm pool,
// cold for one made for its claim (named after it), "" for any other.
func (s *Sandbox) LaunchType() string {
	if s.Meta == nil || s.Engine() != EngineAgent {
		return ""
	}
	if s.Meta.AgentOwner(KindSandboxWarmPool) != "" {
		return LaunchWarm
	}
	if c := s.Meta.AgentOwner(KindSandboxClaim); c != "" {
		if c == s.Meta.Name {
			return LaunchCold
		}
		return LaunchWarm
	}
	return ""
}

// ClaimRow is one SandboxClaim with the Sandbox it is bound to.
type ClaimRow struct {
	Claim   *SandboxClaim
	Sandbox *Sandbox // nil while unbound or when the Sandbox is gone
}

// WarmPoolRow is one SandboxWarmPool with what the fleet shows of it.
type WarmPoolRow struct {
	Pool *WarmPool
	// Members are the free Sandboxes the pool owns now; Ready those of
	// them whose Ready condition is True.
	Members, Ready int
	// Claimed counts the claims bound through the pool (the pool's status
	// has no such count: a claimed Sandbox leaves the pool).
	Claimed int
	// Waiting counts its claims not yet bound; OldestWaiting is when the
	// oldest of them was made.
	Waiting       int
	OldestWaiting time.Time
	// Cold counts its bound claims whose Sandbox was made for them because
	// no member was ready (launch type cold).
	Cold int
	// Unready are the members whose Ready condition is not True.
	Unready []*Sandbox
	// Replaced are the members this reader saw deleted while not Ready,
	// oldest first: the controller deletes a member not Ready 5 minutes
	// after it was made and makes another in its place.
	Replaced []MemberReplaced
}

// MemberReplaced is a warm-pool member seen deleted while not Ready.
type MemberReplaced struct {
	Sandbox string
	At      time.Time // when the deletion was seen
}
