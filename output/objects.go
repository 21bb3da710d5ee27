// Package output is where sandscope's printed output lives: what
// `sandscope get` prints, a fleet snapshot as kubectl-style tables
// (metav1.Table) and a small versioned object shape for json, yaml and
// jsonpath, printed by kubectl's own printers (k8s.io/cli-runtime/pkg/printers);
// the sweep's report as a table, JSON (its contract, which serve's
// /findings serves too) and JUnit (sweep.go); explain's restart text
// (restart.go) and the entrypoint checks (entrypoints.go). Text goes
// through internal/textsafe. It reads the values of model, kube and
// actions (a sweep.Report), and none of them imports it.
package output

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
)

// APIVersion is the version of every object `sandscope get` prints. The
// fields below are a contract for scripts: add fields, never rename or
// remove one without a new version.
const APIVersion = "sandscope.io/v1"

// Kinds of the printed objects; a list of them is KindList.
const (
	KindList     = "List"
	KindSandbox  = "Sandbox"
	KindPod      = "Pod"
	KindPool     = "Pool"
	KindWarmPool = "WarmPool"
	KindClaim    = "Claim"
	KindFinding  = "Finding"
)

// Sandbox is one sandbox as the fleet model sees it: what its engine says
// (enginePhase) and what is actually true (state, identity, slots).
type Sandbox struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta   `json:"metadata"`
	Engine          model.Engine        `json:"engine"` // bsbx, agent or pod
	EnginePhase     string              `json:"enginePhase"`
	State           string              `json:"state"`    // a model.EffectiveState's name
	Identity        model.IdentityState `json:"identity"` // the worst of its slots
	Pool            string              `json:"pool,omitempty"`
	Claim           string              `json:"claim,omitempty"`      // the SandboxClaim an agent Sandbox is bound to
	LaunchType      string              `json:"launchType,omitempty"` // warm (from a warm pool) or cold (made for its claim)
	ExpireTime      *metav1.Time        `json:"expireTime,omitempty"`
	Restarts        int32               `json:"restarts"`
	Slots           []model.Slot        `json:"slots"`
	Notices         []model.Notice      `json:"notices"`
}

// Pod is one Pod behind a sandbox.
type Pod struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Sandbox         string            `json:"sandbox,omitempty"` // the sandbox it serves, "" when none
	Phase           corev1.PodPhase   `json:"phase"`
	PodIP           string            `json:"podIP,omitempty"`
	NodeName        string            `json:"nodeName,omitempty"`
	Main            *Container        `json:"mainContainer,omitempty"`
	Restarts        int32             `json:"restarts"` // summed over its containers
}

// Container is the state of a Pod's main container.
type Container struct {
	Name     string `json:"name"`
	State    string `json:"state"` // running, waiting or terminated; "" before the kubelet reported
	Reason   string `json:"reason,omitempty"`
	ExitCode *int32 `json:"exitCode,omitempty"`
}

// Pool is an OpenSandbox Pool: its capacity spec and what it holds now.
type Pool struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Engine          model.Engine      `json:"engine"` // bsbx
	Total           int32             `json:"total"`
	Allocated       int32             `json:"allocated"`
	Available       int32             `json:"available"`
	BufferMin       int32             `json:"bufferMin"`
	BufferMax       int32             `json:"bufferMax"`
	PoolMin         int32             `json:"poolMin"`
	PoolMax         int32             `json:"poolMax"`
	Revision        string            `json:"revision,omitempty"`
}

// WarmPool is an agent-sandbox SandboxWarmPool: how many free members it
// wants and has, how many of those are ready, and the claims bound
// through it and still waiting.
type WarmPool struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Engine          model.Engine      `json:"engine"` // agent
	Template        string            `json:"template,omitempty"`
	Desired         int32             `json:"desired"`
	Members         int32             `json:"members"` // status.replicas
	Ready           int32             `json:"ready"`   // status.readyReplicas
	Claimed         int               `json:"claimed"`
	Waiting         int               `json:"waiting"`
}

// Claim is an agent-sandbox SandboxClaim and the sandbox it is bound to.
type Claim struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta   `json:"metadata"`
	State           string              `json:"state"` // Bound, Pending or Failed
	WarmPool        string              `json:"warmPool,omitempty"`
	Sandbox         string              `json:"sandbox,omitempty"`
	SandboxState    string              `json:"sandboxState,omitempty"`
	Identity        model.IdentityState `json:"identity,omitempty"` // of its sandbox
	LaunchType      string              `json:"launchType,omitempty"`
	PodIPs          []string            `json:"podIPs,omitempty"`
	Reason          string              `json:"reason,omitempty"` // of its Ready condition
}

// Finding is a finding in the JSON contract of `sandscope sweep -o json`
// (code, severity, context, namespace, sandbox, pod, message, evidence),
// with apiVersion and kind.
type Finding struct {
	metav1.TypeMeta `json:",inline"`
	model.Finding
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: APIVersion, Kind: kind}
}

func objectMeta(m *model.ObjectMeta) metav1.ObjectMeta {
	if m == nil {
		return metav1.ObjectMeta{}
	}
	out := metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID,
		CreationTimestamp: m.GetCreationTimestamp(), DeletionTimestamp: m.DeletionTimestamp,
		Finalizers: m.Finalizers(),
	}
	if m.Labels.Len() > 0 {
		out.Labels = m.Labels.Map()
	}
	return out
}

// SandboxObject is the printed form of sb.
func SandboxObject(sb *model.Sandbox) Sandbox {
	out := Sandbox{
		TypeMeta: typeMeta(KindSandbox), Metadata: objectMeta(sb.Meta),
		Engine: sb.Engine(), EnginePhase: sb.EnginePhase, State: sb.State.String(), Identity: sb.Identity(),
		Pool: sb.Pool, Claim: sb.Claim(), LaunchType: sb.LaunchType(), Restarts: sb.Restarts, Slots: sb.Slots, Notices: sb.Notices,
	}
	if sb.ExpireTime != nil {
		out.ExpireTime = &metav1.Time{Time: *sb.ExpireTime}
	}
	if out.Slots == nil {
		out.Slots = []model.Slot{}
	}
	if out.Notices == nil {
		out.Notices = []model.Notice{}
	}
	return out
}

// PodObject is the printed form of p; sandbox is the name of the sandbox it
// serves ("" for none).
func PodObject(p *model.Pod, sandbox string) Pod {
	return Pod{
		TypeMeta: typeMeta(KindPod), Metadata: objectMeta(&p.ObjectMeta), Sandbox: sandbox,
		Phase: p.Status.Phase, PodIP: p.Status.PodIP, NodeName: p.Spec.NodeName, Main: mainContainer(p),
		Restarts: p.Restarts(),
	}
}

// mainContainer is the state of p's main container, nil when p has none.
func mainContainer(p *model.Pod) *Container {
	c, cs := p.Main()
	if c == nil {
		return nil
	}
	out := &Container{Name: c.Name}
	if cs != nil {
		out.State, out.Reason, out.ExitCode = stateOf(cs.State)
	}
	return out
}

// PoolObject is the printed form of p.
func PoolObject(p *model.Pool) Pool {
	return Pool{
		TypeMeta: typeMeta(KindPool), Metadata: objectMeta(&p.ObjectMeta), Engine: model.EngineBatchSandbox,
		Total: p.Total, Allocated: p.Allocated, Available: p.Available,
		BufferMin: p.BufferMin, BufferMax: p.BufferMax, PoolMin: p.PoolMin, PoolMax: p.PoolMax,
		Revision: p.Revision,
	}
}

// WarmPoolObject is the printed form of a warm pool's row.
func WarmPoolObject(r model.WarmPoolRow) WarmPool {
	p := r.Pool
	return WarmPool{
		TypeMeta: typeMeta(KindWarmPool), Metadata: objectMeta(&p.ObjectMeta), Engine: model.EngineAgent,
		Template: p.Template, Desired: p.Desired, Members: p.Replicas, Ready: p.ReadyReplicas,
		Claimed: r.Claimed, Waiting: r.Waiting,
	}
}

// ClaimObject is the printed form of a claim's row.
func ClaimObject(r model.ClaimRow) Claim {
	c := r.Claim
	out := Claim{TypeMeta: typeMeta(KindClaim), Metadata: objectMeta(&c.ObjectMeta), State: c.State(),
		WarmPool: c.WarmPool, Sandbox: c.Sandbox, PodIPs: c.PodIPs}
	if rc := c.ReadyCondition(); rc != nil {
		out.Reason = rc.Reason
	}
	if sb := r.Sandbox; sb != nil {
		out.Sandbox, out.SandboxState, out.Identity, out.LaunchType = sb.Name(), sb.State.String(), sb.Identity(), sb.LaunchType()
	}
	return out
}

// FindingObject is the printed form of f.
func FindingObject(f model.Finding) Finding {
	return Finding{TypeMeta: typeMeta(KindFinding), Finding: f}
}

// stateOf names a container state, with its reason and, once terminated,
// its exit code.
func stateOf(st corev1.ContainerState) (state, reason string, exitCode *int32) {
	switch {
	case st.Running != nil:
		return "running", "", nil
	case st.Waiting != nil:
		return "waiting", st.Waiting.Reason, nil
	case st.Terminated != nil:
		code := st.Terminated.ExitCode
		return "terminated", st.Terminated.Reason, &code
	}
	return "", "", nil
}
