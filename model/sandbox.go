package model

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Sandbox is one derived row of the fleet: what the engine says about a
// sandbox, and what is actually true of the Pods behind it. Values published
// in a Snapshot are immutable: the Fleet replaces a changed sandbox with a new
// pointer instead of editing it, so readers never lock.
type Sandbox struct {
	Key           string         `json:"key"` // "<engine>/<namespace>/<name>", unique in a fleet
	Engine        Engine         `json:"engine"`
	Namespace     string         `json:"namespace"`
	Name          string         `json:"name"`
	UID           string         `json:"uid,omitempty"`
	Labels        Labels         `json:"labels,omitzero"`
	EnginePhase   string         `json:"enginePhase"` // as the engine says it (BatchSandbox "Succeed" = running)
	State         EffectiveState `json:"state"`       // what is actually true
	CreatedAt     time.Time      `json:"createdAt"`
	DeletingSince *time.Time     `json:"deletingSince,omitempty"` // the sandbox object's deletionTimestamp
	Finalizers    []string       `json:"finalizers,omitempty"`
	Pool          string         `json:"pool,omitempty"`
	ExpireTime    *time.Time     `json:"expireTime,omitempty"`
	Slots         []Slot         `json:"slots"` // one per recorded address / Pod index
	Notices       []Notice       `json:"notices,omitempty"`
	Restarts      int32          `json:"restarts"` // summed over the linked Pods' containers
}

// Slot is one recorded address of a sandbox and the Pod linked to it.
type Slot struct {
	Index      int           `json:"index"`
	RecordedIP string        `json:"recordedIP"` // the address the engine forwards to; "" = unassigned
	PodName    string        `json:"podName,omitempty"`
	BoundUID   string        `json:"boundUID,omitempty"` // UID of the Pod first bound to this slot
	Pod        *Pod          `json:"-"`                  // the linked Pod now; nil when gone. Read only.
	Identity   IdentityState `json:"identity"`
	Holder     *Holder       `json:"holder,omitempty"` // who holds RecordedIP now, when another Pod does
	Stuck      *StuckInfo    `json:"stuck,omitempty"`  // set when the linked Pod is stuck Terminating
}

// StuckInfo describes a Pod stuck Terminating.
type StuckInfo struct {
	DeletingSince   time.Time `json:"deletingSince"`
	GraceSeconds    int64     `json:"graceSeconds"`
	PodInitializing bool      `json:"podInitializing"` // main container still waiting in PodInitializing
}

// identityRank orders identity states from harmless to dangerous. A switch,
// not a map: the header's counts, the state sort and the problem filter ask
// it for every sandbox on every live refresh.
func identityRank(s IdentityState) int {
	switch s {
	case IdentityOK:
		return 0
	case IdentityUnassigned:
		return 1
	case IdentityUnknown:
		return 2
	case IdentityIPStale:
		return 3
	case IdentityUIDChanged:
		return 4
	case IdentityPodGone:
		return 5
	case IdentityPodDead:
		return 6
	case IdentityIPTaken:
		return 7
	}
	return 0
}

// Identity is the worst identity state over the sandbox's slots
// (UNASSIGNED when it has none).
func (s *Sandbox) Identity() IdentityState {
	worst := IdentityUnassigned
	for i, sl := range s.Slots {
		if i == 0 || identityRank(sl.Identity) > identityRank(worst) {
			worst = sl.Identity
		}
	}
	return worst
}

// PrimarySlot is the slot a request to the sandbox goes to (the engine takes
// entry 0), or nil when there is none.
func (s *Sandbox) PrimarySlot() *Slot {
	if len(s.Slots) == 0 {
		return nil
	}
	return &s.Slots[0]
}

// BatchSandbox is the slim typed form of an OpenSandbox BatchSandbox
// (sandbox.opensandbox.io/v1alpha1), decoded straight from the wire by kube/
// (or converted from unstructured by an informer transform). ObjectMeta keeps
// only what the model uses (no managedFields, no annotations once parsed).
// It is a runtime.Object so an informer can carry it.
type BatchSandbox struct {
	ObjectMeta
	Replicas int32
	// InitialEventsEnd: this is the bookmark that ends a streamed initial
	// list (annotation k8s.io/initial-events-end), which the reflector
	// recognises through GetAnnotations.
	InitialEventsEnd bool
	PoolRef          string
	ExpireTime       *time.Time
	MainImage        string   // image of the template's main container ("sandbox")
	MainCommand      []string // command of the template's main container
	Phase            string   // status.phase: Pending, Succeed (= running), Pausing, Paused, Resuming, Failed
	StatusReplicas   int32
	Allocated        int32
	Ready            int32
	Conditions       []Condition
	Endpoints        []string // sandbox.opensandbox.io/endpoints, slot i <-> pod index i; nil when absent
	AllocatedPods    []string // pooled: alloc-status pods minus alloc-released
	Notices          []Notice // problems found while parsing (malformed annotations, ...)
}

// GetAnnotations says only whether this is the initial-events-end bookmark:
// the other annotations are parsed into fields and dropped.
func (b *BatchSandbox) GetAnnotations() map[string]string {
	if b.InitialEventsEnd {
		return map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return nil
}

// GetObjectKind: a slim BatchSandbox carries no type information.
func (b *BatchSandbox) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies everything, so a copy shares nothing mutable.
func (b *BatchSandbox) DeepCopyObject() runtime.Object {
	if b == nil {
		return nil
	}
	out := *b
	b.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if b.ExpireTime != nil {
		t := *b.ExpireTime
		out.ExpireTime = &t
	}
	out.MainCommand = slices.Clone(b.MainCommand)
	out.Conditions = slices.Clone(b.Conditions)
	out.Endpoints = slices.Clone(b.Endpoints)
	out.AllocatedPods = slices.Clone(b.AllocatedPods)
	if b.Notices != nil {
		out.Notices = make([]Notice, len(b.Notices))
		for i, n := range b.Notices {
			n.Evidence = slices.Clone(n.Evidence)
			out.Notices[i] = n
		}
	}
	return &out
}

// AgentSandbox is the slim typed form of an agents.x-k8s.io Sandbox.
type AgentSandbox struct {
	ObjectMeta
	Version      string // served version it was read at (v1beta1, v1alpha1)
	Replicas     *int32
	MainImage    string
	ShutdownTime *time.Time
	Selector     string   // status.selector: label selector of its Pod
	PodIPs       []string // status.podIPs
	NodeName     string
	Conditions   []Condition
	Notices      []Notice
}

// Pool is the slim typed form of an OpenSandbox Pool.
type Pool struct {
	ObjectMeta
	Total, Allocated, Available int32
	Revision                    string
	BufferMin, BufferMax        int32
	PoolMin, PoolMax            int32
}

// Condition is a status condition of a custom resource.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// ImageConfig is what a registry said about an image's config (manifest +
// config blob, never layers), or why it could not say.
type ImageConfig struct {
	Ref        string   // the reference or digest it was read for
	Digest     string   // resolved manifest digest, when known
	Entrypoint []string // config.Entrypoint
	Cmd        []string // config.Cmd
	Err        string   // non-empty when the read failed: the reason
}

// SourceStatus describes where a snapshot came from and how fresh it is.
type SourceStatus struct {
	Context           string     `json:"context"`
	Cluster           string     `json:"cluster"`
	Server            string     `json:"server"`
	Namespaces        []string   `json:"namespaces"` // empty = all namespaces
	Synced            bool       `json:"synced"`
	DisconnectedSince *time.Time `json:"disconnectedSince,omitempty"`
	AsOf              time.Time  `json:"asOf"`            // time of the last data received
	Notes             []string   `json:"notes,omitempty"` // e.g. "BatchSandbox CRD not installed"
	Forbidden         []string   `json:"forbidden,omitempty"`
	ReadOnly          bool       `json:"readOnly"`
	Demo              bool       `json:"demo"`
}
