package model

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Sandbox is one derived row of the fleet: what the engine says about a
// sandbox, and what is actually true of the Pods behind it. Values published
// in a Snapshot are immutable: the Fleet replaces a changed sandbox with a new
// pointer instead of editing it, so readers never lock.
//
// A row is allocated per sandbox and per change, so it does not copy its
// source's metadata, nor its engine, which is the first part of its Key.
// Meta points at the source object's ObjectMeta instead, which is safe to
// share because the Fleet's sources are never modified once handed to it.
// Read it through the accessors (Namespace, Name, UID, Labels, CreatedAt,
// DeletingSince, Finalizers): they say what the row means by each, and a row
// built by hand without Meta reads as empty instead of panicking.
// MarshalJSON writes the same document as when the row held copies.
type Sandbox struct {
	Key string // "<engine>/<namespace>/<name>", unique in a fleet; Engine() reads it
	// Meta is the metadata of the object the sandbox is: its BatchSandbox,
	// its agent Sandbox, or for a plain-Pod sandbox the Pod. Shared and read
	// only; nil reads as empty.
	Meta        *ObjectMeta
	EnginePhase string         // as the engine says it (BatchSandbox "Succeed" = running)
	State       EffectiveState // what is actually true
	Pool        string
	ExpireTime  *time.Time
	Slots       []Slot // one per recorded address / Pod index
	Notices     []Notice
	Restarts    int32 // summed over the linked Pods' containers
}

// Engine is the engine the sandbox belongs to, the first part of its Key
// (a row keeps no second copy).
func (s *Sandbox) Engine() Engine {
	eng, _, _ := strings.Cut(s.Key, "/")
	return Engine(eng)
}

// Namespace is the sandbox's namespace.
func (s *Sandbox) Namespace() string {
	if s.Meta == nil {
		return ""
	}
	return s.Meta.Namespace
}

// Name is the sandbox's name (for a plain-Pod sandbox, the Pod's).
func (s *Sandbox) Name() string {
	if s.Meta == nil {
		return ""
	}
	return s.Meta.Name
}

// UID is the UID of the sandbox's object, "" when unknown.
func (s *Sandbox) UID() types.UID {
	if s.Meta == nil {
		return ""
	}
	return s.Meta.UID
}

// Labels are the labels of the sandbox's object. Read only.
func (s *Sandbox) Labels() Labels {
	if s.Meta == nil {
		return Labels{}
	}
	return s.Meta.Labels
}

// CreatedAt is the creationTimestamp of the sandbox's object.
func (s *Sandbox) CreatedAt() time.Time {
	if s.Meta == nil {
		return time.Time{}
	}
	return s.Meta.Created()
}

// DeletingSince is the deletionTimestamp of the sandbox object, nil while
// it is not being deleted. A plain-Pod sandbox has no object besides its
// Pod, whose deletion its slot reports (Slot.Stuck, the Pod's state): it
// reads nil, so the Pod's deletion is not reported twice. Read only.
func (s *Sandbox) DeletingSince() *time.Time {
	if s.Meta == nil || s.Meta.DeletionTimestamp == nil || s.Engine() == EnginePod {
		return nil
	}
	return &s.Meta.DeletionTimestamp.Time
}

// Finalizers are the finalizers of the sandbox object (none for a plain-Pod
// sandbox, for the reason DeletingSince gives). Read only.
func (s *Sandbox) Finalizers() []string {
	if s.Meta == nil || s.Engine() == EnginePod {
		return nil
	}
	return s.Meta.Finalizers()
}

// sandboxJSON is the JSON form of a Sandbox: the row as it was when it held
// copies of its metadata. Keys, order and encodings are a contract (sweep
// and CLI output): CreatedAt is a time.Time, not a metav1.Time, which would
// drop sub-second digits and write a zero time as null.
type sandboxJSON struct {
	Key           string         `json:"key"`
	Engine        Engine         `json:"engine"`
	Namespace     string         `json:"namespace"`
	Name          string         `json:"name"`
	UID           types.UID      `json:"uid,omitempty"`
	Labels        Labels         `json:"labels,omitzero"`
	EnginePhase   string         `json:"enginePhase"`
	State         EffectiveState `json:"state"`
	CreatedAt     time.Time      `json:"createdAt"`
	DeletingSince *time.Time     `json:"deletingSince,omitempty"`
	Finalizers    []string       `json:"finalizers,omitempty"`
	Pool          string         `json:"pool,omitempty"`
	Claim         string         `json:"claim,omitempty"`
	LaunchType    string         `json:"launchType,omitempty"`
	ExpireTime    *time.Time     `json:"expireTime,omitempty"`
	Slots         []Slot         `json:"slots"`
	Notices       []Notice       `json:"notices,omitempty"`
	Restarts      int32          `json:"restarts"`
}

// MarshalJSON writes the row with its metadata inline. A value receiver, so
// a Sandbox held by value marshals the same as a *Sandbox.
func (s Sandbox) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// The caller's encoder re-escapes (or not) what this returns: escaping
	// here too would override its SetEscapeHTML(false).
	enc.SetEscapeHTML(false)
	err := enc.Encode(sandboxJSON{
		Key: s.Key, Engine: s.Engine(),
		Namespace: s.Namespace(), Name: s.Name(), UID: s.UID(), Labels: s.Labels(),
		EnginePhase: s.EnginePhase, State: s.State,
		CreatedAt: s.CreatedAt(), DeletingSince: s.DeletingSince(), Finalizers: s.Finalizers(),
		Pool: s.Pool, Claim: s.Claim(), LaunchType: s.LaunchType(), ExpireTime: s.ExpireTime, Slots: s.Slots, Notices: s.Notices, Restarts: s.Restarts,
	})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// Slot is one recorded address of a sandbox and the Pod linked to it.
type Slot struct {
	// Index is an int32 so that NamespaceOnly shares its word (slots are
	// ≤ 1024 per sandbox).
	Index int32 `json:"index"`
	// NamespaceOnly: the holder of RecordedIP was looked for in the
	// sandbox's namespace only (unchecked): other namespaces could not be
	// read (RBAC), their lookup failed or has not answered yet, so a
	// POD_DEAD or POD_GONE may hide an IP_TAKEN there. JSON also says it
	// as "holderChecked": false.
	NamespaceOnly bool          `json:"namespaceOnly,omitempty"`
	RecordedIP    string        `json:"recordedIP"` // the address the engine forwards to; "" = unassigned
	PodName       string        `json:"podName,omitempty"`
	BoundUID      string        `json:"boundUID,omitempty"` // UID of the Pod first bound to this slot
	Pod           *Pod          `json:"-"`                  // the linked Pod now; nil when gone. Read only.
	Identity      IdentityState `json:"identity"`
	Holder        *Holder       `json:"holder,omitempty"` // who holds RecordedIP now, when another Pod does
	Stuck         *StuckInfo    `json:"stuck,omitempty"`  // set when the linked Pod is stuck Terminating
}

// MarshalJSON adds holderChecked: false when the slot's holder could not
// be looked for everywhere (NamespaceOnly), else true. A value receiver,
// as Sandbox's.
func (s Slot) MarshalJSON() ([]byte, error) {
	type plain Slot // without this method
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the caller's encoder escapes, or not
	err := enc.Encode(struct {
		plain
		HolderChecked bool `json:"holderChecked"`
	}{plain(s), !s.NamespaceOnly})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// StuckPods counts the distinct Pods of the sandbox's slots that are stuck
// Terminating, and how many of those still have their main container
// waiting in PodInitializing (an image pull holding its slot).
func (s *Sandbox) StuckPods() (stuck, initializing int) {
	for i := range s.Slots {
		sl := &s.Slots[i]
		if sl.Stuck == nil || slices.ContainsFunc(s.Slots[:i], func(o Slot) bool { return o.Stuck != nil && o.PodName == sl.PodName }) {
			continue
		}
		stuck++
		if sl.Stuck.PodInitializing {
			initializing++
		}
	}
	return stuck, initializing
}

// StuckObject reports whether the sandbox object itself is stuck
// Terminating on finalizers (a STUCK_TERMINATING notice naming no Pod).
func (s *Sandbox) StuckObject() bool {
	return s.DeletingSince() != nil && len(s.Finalizers()) > 0 &&
		slices.ContainsFunc(s.Notices, func(n Notice) bool { return n.Code == CodeStuckTerminating && n.Pod == "" })
}

// StuckInfo describes a Pod stuck Terminating.
type StuckInfo struct {
	DeletingSince   time.Time `json:"deletingSince"`
	GraceSeconds    int64     `json:"graceSeconds"`
	PodInitializing bool      `json:"podInitializing"` // main container still waiting in PodInitializing
}

// Identity is the worst identity state over the sandbox's slots
// (UNASSIGNED when it has none).
func (s *Sandbox) Identity() IdentityState {
	worst := IdentityUnassigned
	for i, sl := range s.Slots {
		if i == 0 || sl.Identity.Rank() > worst.Rank() {
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

// Engine phases of an OpenSandbox BatchSandbox (status.phase).
const (
	PhaseSucceed   = "Succeed" // running and ready, not "finished"
	PhasePending   = "Pending"
	PhaseAllocated = "Allocated" // server-side state; tolerated in status too
	PhaseFailed    = "Failed"
	// PhaseDeleted is the phase sandscope shows for a sandbox whose object is
	// gone while Pods naming it remain; no engine writes it.
	PhaseDeleted = "deleted"
)

// BatchSandbox is the slim typed form of an OpenSandbox BatchSandbox
// (sandbox.opensandbox.io/v1alpha1), decoded straight from the wire by kube/
// (or converted from unstructured by an informer transform). ObjectMeta keeps
// only what the model uses (no managedFields, no annotations once parsed).
// It is a runtime.Object so an informer can carry it.
type BatchSandbox struct {
	ObjectMeta
	// ResourceVersion: the watch decodes straight into this type, so the
	// reflector reads each event's version here. The watch's transform
	// clears it after (nothing reads it later): it is the decoder's, not
	// the cache's.
	ResourceVersion string
	Replicas        int32
	// InitialEventsEnd: this is the bookmark that ends a streamed initial
	// list (annotation k8s.io/initial-events-end), which the reflector
	// recognises through GetAnnotations.
	InitialEventsEnd bool
	ExpireTime       *time.Time
	Phase            string   // status.phase: Pending, Succeed (= running), Pausing, Paused, Resuming, Failed
	Endpoints        []string // sandbox.opensandbox.io/endpoints, slot i <-> pod index i; nil when absent
	// readyAt is ReadySince in Unix nanoseconds, 0 when unset. It is kept
	// here rather than in rare because a fleet whose sandboxes came Ready
	// late has it on nearly every object, which then cost the rare part and
	// a time each (104 bytes); the struct had the 8 bytes to spare in its
	// size class. A time UnixNano cannot hold goes to rare.readySince.
	readyAt int64
	// rare holds the fields most sandboxes leave empty, nil when all are:
	// read them through PoolRef, AllocatedPods, Notices, Task and
	// ReadySince.
	rare *rareBatchSandbox
}

// rareBatchSandbox is the part of a BatchSandbox that most lack: what only
// a pooled sandbox has (spec.poolRef, which excludes a template, and the
// Pods the Pool allocated to it), the problems met while parsing it, its
// task, and a late Ready transition.
type rareBatchSandbox struct {
	poolRef       string
	allocatedPods []string // alloc-status pods minus alloc-released
	notices       []Notice // problems found while parsing (malformed annotations, ...)
	// task is spec.taskTemplate and the task counters of the status, nil
	// for a sandbox without a task template and with every counter 0.
	task       *BatchTask
	readySince *time.Time // see ReadySince; only for a time readyAt cannot hold
}

// LateReadyAfter is when Ready comes late: a Ready=True transition this long after the sandbox was
// created is kept (BatchSandbox.ReadySince) as evidence for POD_RECREATED.
const LateReadyAfter = time.Minute

// BatchTask is a BatchSandbox's task: the process of spec.taskTemplate
// (the controller's task executor runs it in the sandbox) and the five
// task counters of its status.
type BatchTask struct {
	HasTemplate bool
	Command     []string // taskTemplate.spec.process command followed by args
	Counts      TaskCounts
}

// TaskCounts are BatchSandbox status.taskRunning, taskSucceed, taskFailed,
// taskPending and taskUnknown.
type TaskCounts struct {
	Running, Succeed, Failed, Pending, Unknown int32
}

// IsZero reports whether every counter is 0.
func (c TaskCounts) IsZero() bool { return c == TaskCounts{} }

// Task is the sandbox's task template and counters, nil when it has
// neither. Read only.
func (b *BatchSandbox) Task() *BatchTask {
	if b.rare == nil {
		return nil
	}
	return b.rare.task
}

// ReadySince is the lastTransitionTime of the engine's Ready=True
// condition when it came later than LateReadyAfter after the sandbox was
// created (a sandbox becomes Ready seconds after it is created, so a late
// one points at a re-created Pod or a slow start), else nil.
func (b *BatchSandbox) ReadySince() *time.Time {
	if b.readyAt != 0 {
		t := time.Unix(0, b.readyAt).UTC()
		return &t
	}
	if b.rare == nil {
		return nil
	}
	return b.rare.readySince
}

// SetTask records the task template (hasTemplate, command) and counters,
// allocating the rare part only when there is something to keep. Both
// decoders call it, so they agree.
func (b *BatchSandbox) SetTask(hasTemplate bool, command []string, counts TaskCounts) {
	if !hasTemplate && counts.IsZero() {
		return
	}
	b.rareFields().task = &BatchTask{HasTemplate: hasTemplate, Command: command, Counts: counts}
}

// SetReady records the engine's Ready=True transition time when it came
// later than LateReadyAfter after creation. Both decoders call it.
func (b *BatchSandbox) SetReady(since time.Time) {
	if created := b.Created(); since.IsZero() || created.IsZero() || since.Sub(created) <= LateReadyAfter {
		return
	}
	since = since.UTC() // both decoders' times read alike (metav1 gives Local)
	if ns := since.UnixNano(); ns != 0 && time.Unix(0, ns).UTC().Equal(since) {
		b.readyAt = ns
		return
	}
	b.rareFields().readySince = &since
}

// PoolRef is spec.poolRef: the Pool a pooled sandbox takes its Pods from,
// "" for a sandbox made from its own template.
func (b *BatchSandbox) PoolRef() string {
	if b.rare == nil {
		return ""
	}
	return b.rare.poolRef
}

// SetPoolRef sets what PoolRef reads, for a sandbox being built.
func (b *BatchSandbox) SetPoolRef(pool string) {
	if pool != "" || b.rare != nil {
		b.rareFields().poolRef = pool
	}
}

// AllocatedPods are the Pods a Pool allocated to a pooled sandbox (the
// alloc-status annotation minus alloc-released), nil when none are.
func (b *BatchSandbox) AllocatedPods() []string {
	if b.rare == nil {
		return nil
	}
	return b.rare.allocatedPods
}

// Notices are the problems found while parsing the object (malformed
// annotations, ...), nil when there were none.
func (b *BatchSandbox) Notices() []Notice {
	if b.rare == nil {
		return nil
	}
	return b.rare.notices
}

// rareFields returns b.rare, allocating it on first use: conversions call it
// only to set a field, so a BatchSandbox without one carries no rare part.
func (b *BatchSandbox) rareFields() *rareBatchSandbox {
	if b.rare == nil {
		b.rare = &rareBatchSandbox{}
	}
	return b.rare
}

// GetResourceVersion returns the object's resourceVersion.
func (b *BatchSandbox) GetResourceVersion() string { return b.ResourceVersion }

// SetResourceVersion sets the object's resourceVersion.
func (b *BatchSandbox) SetResourceVersion(version string) { b.ResourceVersion = version }

// GetAnnotations says only whether this is the initial-events-end bookmark:
// the other annotations are parsed into fields and dropped.
func (b *BatchSandbox) GetAnnotations() map[string]string {
	if b.InitialEventsEnd {
		return map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return nil
}

// GetObjectKind returns an empty kind: a slim BatchSandbox carries no type information.
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
	out.Endpoints = slices.Clone(b.Endpoints)
	if r := b.rare; r != nil {
		out.rare = &rareBatchSandbox{poolRef: r.poolRef, allocatedPods: slices.Clone(r.allocatedPods),
			notices: copyNotices(r.notices)}
		if t := r.task; t != nil {
			out.rare.task = &BatchTask{HasTemplate: t.HasTemplate, Command: slices.Clone(t.Command), Counts: t.Counts}
		}
		if at := r.readySince; at != nil {
			t := *at
			out.rare.readySince = &t
		}
	}
	return &out
}

// copyNotices copies ns down to the evidence's timestamps.
func copyNotices(ns []Notice) []Notice {
	if ns == nil {
		return nil
	}
	out := make([]Notice, len(ns))
	for i, n := range ns {
		n.Evidence = slices.Clone(n.Evidence)
		for j, e := range n.Evidence {
			if e.At != nil {
				at := *e.At
				n.Evidence[j].At = &at
			}
		}
		out[i] = n
	}
	return out
}

// AgentSandbox is the slim typed form of an agents.x-k8s.io Sandbox.
type AgentSandbox struct {
	ObjectMeta
	Version string // served version it was read at (v1beta1, v1alpha1)
	// Suspended: spec.operatingMode Suspended (v1beta1), or spec.replicas 0
	// (v1alpha1, which converts to it): the controller deletes the Pod.
	Suspended bool
	// Service: status.service or status.serviceFQDN is set, so a headless
	// Service routes to the Pods the selector picks.
	Service      bool
	ShutdownTime *time.Time
	Selector     string   // status.selector: label selector of its Pod
	PodIPs       []string // status.podIPs
	NodeName     string
	Conditions   []Condition
	Notices      []Notice
}

// Agent-sandbox Ready reasons that say the controller took the Pod away on
// purpose: nothing routes to the sandbox any more.
const (
	ReasonSandboxExpired   = "SandboxExpired"
	ReasonSandboxSuspended = "SandboxSuspended"
)

// ReadyReason is the reason of the Ready condition, "" when there is none.
func (a *AgentSandbox) ReadyReason() string {
	for i := range a.Conditions {
		if a.Conditions[i].Type == "Ready" {
			return a.Conditions[i].Reason
		}
	}
	return ""
}

// Expired reports whether the controller says shutdownTime passed (Ready False
// SandboxExpired); it deleted the Pod and wiped the status.
func (a *AgentSandbox) Expired() bool { return a.ReadyReason() == ReasonSandboxExpired }

// Paused reports whether it is suspended by spec, or the controller says so.
func (a *AgentSandbox) Paused() bool {
	if a.Suspended || a.ReadyReason() == ReasonSandboxSuspended {
		return true
	}
	for i := range a.Conditions {
		if c := &a.Conditions[i]; c.Type == "Suspended" && c.Status == "True" {
			return true
		}
	}
	return false
}

// Routed reports whether something still sends traffic to the Pods the Sandbox selects
// (a status.selector or a Service), and the controller has not taken the
// Pod away on purpose. Only then does the Pod's own IP stand in for
// podIPs the Sandbox does not record.
func (a *AgentSandbox) Routed() bool {
	if a.Selector == "" && !a.Service {
		return false
	}
	r := a.ReadyReason()
	return r != ReasonSandboxExpired && r != ReasonSandboxSuspended
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
	User              string     `json:"user,omitempty"`
	ServerVersion     string     `json:"serverVersion,omitempty"` // the API server's gitVersion
	Server            string     `json:"server"`
	Namespaces        []string   `json:"namespaces"` // empty = all namespaces
	Synced            bool       `json:"synced"`
	DisconnectedSince *time.Time `json:"disconnectedSince,omitempty"`
	AsOf              time.Time  `json:"asOf"`            // when the data was last proven current (kube: a consistent read)
	Notes             []string   `json:"notes,omitempty"` // e.g. "BatchSandbox CRD not installed"
	Forbidden         []string   `json:"forbidden,omitempty"`
	// NotInstalled lists the engines (model.Engine*) whose CRD the server
	// does not serve: Pods naming such a sandbox are read without it.
	NotInstalled []Engine `json:"notInstalled,omitempty"`
	// Syncing says, until Synced, how far each resource's initial list has
	// come (syncprogress.go).
	Syncing  []ListProgress `json:"syncing,omitempty"`
	ReadOnly bool           `json:"readOnly"`
	Demo     bool           `json:"demo"`
}
