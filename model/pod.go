package model

import (
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
)

// Pod is the part of a corev1.Pod that sandscope reads, and the form the
// Fleet keeps. The fields keep the API's names and layout
// (Spec.Containers, Status.ContainerStatuses, State.Terminated, ...), so
// code reading a Pod reads like code reading the API object; the status
// fields few Pods set are read through methods of the same names
// (Status.Reason(), GetDeletionGracePeriodSeconds(), ...), which keeps the
// struct small (docs/design.md, "Compact model records"). SlimPod makes one.
//
// Its ObjectMeta is the model's own, which the informer's store and key
// functions read through metav1.Object.
type Pod struct {
	ObjectMeta
	Spec   PodSpec
	Status PodStatus
}

// PodSpec says where the Pod runs, how long it may take to stop, and its
// containers. Its restartPolicy is not kept: nothing reads it.
type PodSpec struct {
	NodeName    string
	HostNetwork bool // its podIP is the node's, shared by design
	// graceSet and grace are spec.terminationGracePeriodSeconds (read it
	// through the Pod's TerminationGracePeriodSeconds): an int32 beside
	// HostNetwork, in the word the bool took anyway, where a pointer took a
	// word and an allocation per Pod. A value an int32 cannot hold is kept
	// with the rare status fields.
	graceSet   bool
	grace      int32
	Containers []Container
}

// Container says what runs (image, command, args), how it is probed, and its
// memory limit, which is kept only once the container has ended (restart
// forensics name it when telling an OOM kill apart).
type Container struct {
	Name          string
	Image         string
	Command       []string
	Args          []string
	LivenessProbe *corev1.Probe
	MemoryLimit   *resource.Quantity
}

// PodStatus holds the phase and addresses, and the statuses of the containers.
type PodStatus struct {
	Phase corev1.PodPhase
	PodIP string
	// startTime is status.startTime as Unix nanoseconds, 0 when unset: a
	// word where a *metav1.Time took a word and a 24-byte allocation per
	// Pod. A time an int64 of nanoseconds cannot hold (before 1678, after
	// 2262), or the Unix epoch itself, is kept with the rare fields. Read
	// it through StartTime, set it through SetStartTime.
	startTime int64
	// condAt and cond are the Pod's one kept condition (nearly always
	// Ready) when it has no reason or message: its lastTransitionTime as
	// Unix nanoseconds (0 when unset) and its type and status as a code
	// (0 when it keeps none). Any other condition, or several, are kept in
	// rare.conditions. A word and a byte of the Pod, where a pointer to the
	// condition took a word and a 96-byte allocation per Pod. Read them
	// through Condition and Conditions, set them through SetConditions.
	condAt            int64
	ContainerStatuses []ContainerStatus
	// rare holds the fields few Pods set, nil when none is: read them
	// through Reason, Message, PodIPs, InitContainerStatuses and the Pod's
	// GetDeletionGracePeriodSeconds, set them through the Set methods.
	rare *rarePodStatus
	cond condCode
}

// rarePodStatus is the part of a Pod that few Pods set: why a Pod failed as
// a whole (status.reason and message: Evicted, NodeLost, ...), the
// addresses of a dual-stack Pod, the init container statuses while an init
// container has not completed (SlimPod drops them after), and, once the
// Pod is being deleted, its metadata.deletionGracePeriodSeconds.
type rarePodStatus struct {
	reason  string
	message string
	// podIPs only when the Pod has more than its podIP (dual stack): the
	// single-stack case would repeat it.
	podIPs                     []corev1.PodIP
	initContainerStatuses      []ContainerStatus
	deletionGracePeriodSeconds *int64
	// conditions when the Pod keeps more than one, or one PodStatus.cond
	// cannot hold.
	conditions []PodCondition
	// terminationGrace: a spec.terminationGracePeriodSeconds an int32
	// cannot hold (see PodSpec.grace).
	terminationGrace *int64
	// startTime: a status.startTime PodStatus.startTime cannot hold.
	startTime *metav1.Time
}

// rareFields returns s.rare, allocating it on first use: the setters call it
// only to store a value that is set, so a Pod without one carries none.
func (s *PodStatus) rareFields() *rarePodStatus {
	if s.rare == nil {
		s.rare = &rarePodStatus{}
	}
	return s.rare
}

// GetDeletionGracePeriodSeconds is metadata.deletionGracePeriodSeconds,
// nil until the Pod is being deleted. Only a Pod's deletion reads it, so
// the Pod keeps it with its rare fields rather than in every ObjectMeta.
func (p *Pod) GetDeletionGracePeriodSeconds() *int64 {
	if p.Status.rare == nil {
		return nil
	}
	return p.Status.rare.deletionGracePeriodSeconds
}

// SetDeletionGracePeriodSeconds sets what GetDeletionGracePeriodSeconds
// reads (metav1.Object), for a Pod being built: a Pod handed to the Fleet
// is not modified.
func (p *Pod) SetDeletionGracePeriodSeconds(s *int64) {
	if s == nil && p.Status.rare == nil {
		return
	}
	p.Status.rareFields().deletionGracePeriodSeconds = s
}

// TerminationGracePeriodSeconds is spec.terminationGracePeriodSeconds; ok
// is false when the Pod does not set it.
func (p *Pod) TerminationGracePeriodSeconds() (seconds int64, ok bool) {
	switch {
	case p.Spec.graceSet:
		return int64(p.Spec.grace), true
	case p.Status.rare != nil && p.Status.rare.terminationGrace != nil:
		return *p.Status.rare.terminationGrace, true
	}
	return 0, false
}

// SetTerminationGracePeriodSeconds sets what TerminationGracePeriodSeconds
// reads (nil: unset), for a Pod being built.
func (p *Pod) SetTerminationGracePeriodSeconds(s *int64) {
	p.Spec.graceSet, p.Spec.grace = false, 0
	if p.Status.rare != nil {
		p.Status.rare.terminationGrace = nil
	}
	switch {
	case s == nil:
	case *s == int64(int32(*s)):
		p.Spec.graceSet, p.Spec.grace = true, int32(*s)
	default:
		v := *s
		p.Status.rareFields().terminationGrace = &v
	}
}

// Bounds of the times PodStatus.startTime and condAt hold: UnixNano is
// defined strictly between them (time.Time.UnixNano).
var (
	minStartTime = time.Unix(0, math.MinInt64)
	maxStartTime = time.Unix(0, math.MaxInt64)
)

// StartTime is status.startTime; ok is false when the Pod has none. A time
// kept as Unix nanoseconds is read back in the Local location, as the API's
// decoders give it (metav1.Time).
func (s *PodStatus) StartTime() (t time.Time, ok bool) {
	switch {
	case s.startTime != 0:
		return time.Unix(0, s.startTime), true
	case s.rare != nil && s.rare.startTime != nil:
		return s.rare.startTime.Time, true
	}
	return time.Time{}, false
}

// SetStartTime sets what StartTime reads (nil: unset), for a Pod being built.
func (s *PodStatus) SetStartTime(t *metav1.Time) {
	s.startTime = 0
	if s.rare != nil {
		s.rare.startTime = nil
	}
	switch {
	case t == nil:
	case t.Time.After(minStartTime) && t.Time.Before(maxStartTime) && t.UnixNano() != 0:
		s.startTime = t.UnixNano()
	default:
		v := *t
		s.rareFields().startTime = &v
	}
}

// Conditions are the conditions the Pod keeps (see KeepsPodCondition), nil
// when none. Read only. A condition kept compactly is returned in a new
// slice: to look one up, Condition does not allocate.
func (s *PodStatus) Conditions() []PodCondition {
	if c, ok := s.cond.condition(s.condAt); ok {
		return []PodCondition{c}
	}
	if s.rare == nil {
		return nil
	}
	return s.rare.conditions
}

// Condition returns the kept condition of type typ (the first, if several).
func (s *PodStatus) Condition(typ corev1.PodConditionType) (PodCondition, bool) {
	if c, ok := s.cond.condition(s.condAt); ok {
		if c.Type == typ {
			return c, true
		}
		return PodCondition{}, false
	}
	if s.rare != nil {
		for _, c := range s.rare.conditions {
			if c.Type == typ {
				return c, true
			}
		}
	}
	return PodCondition{}, false
}

// SetConditions sets what Conditions reads, for a Pod being built. A single
// condition without reason or message is kept in the Pod's own fields;
// otherwise the Pod keeps cs, which it then owns.
func (s *PodStatus) SetConditions(cs []PodCondition) {
	s.cond, s.condAt = 0, 0
	if s.rare != nil {
		s.rare.conditions = nil
	}
	if len(cs) == 0 {
		return
	}
	if len(cs) == 1 {
		if code, at, ok := compactCondition(&cs[0]); ok {
			s.cond, s.condAt = code, at
			return
		}
	}
	s.rareFields().conditions = cs
}

// SetCondition sets one condition, as SetConditions of a list of it does,
// without making the list when the Pod's own fields hold the condition: a
// decoder's list would be garbage left between the Pod's long-lived parts.
func (s *PodStatus) SetCondition(c PodCondition) {
	if code, at, ok := compactCondition(&c); ok {
		s.SetConditions(nil)
		s.cond, s.condAt = code, at
		return
	}
	s.SetConditions([]PodCondition{c})
}

// condCode is a kept condition's type and status: 1 + 3·type + status, in
// the order of condTypes and condStatuses; 0 for none.
type condCode uint8

// The types and statuses a condCode names: those KeepsPodCondition keeps
// and the API's three statuses.
var (
	condTypes    = [...]corev1.PodConditionType{corev1.PodReady, corev1.DisruptionTarget, corev1.PodScheduled}
	condStatuses = [...]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}
)

// compactCondition returns the code and time PodStatus keeps c as, ok false
// when they cannot hold it: a reason or message, a type or status without a
// code, or a time Unix nanoseconds cannot hold (0 stands for unset, so the
// Unix epoch itself is not one of them).
func compactCondition(c *PodCondition) (condCode, int64, bool) {
	if c.Reason != "" || c.Message != "" {
		return 0, 0, false
	}
	t, st := slices.Index(condTypes[:], c.Type), slices.Index(condStatuses[:], c.Status)
	if t < 0 || st < 0 {
		return 0, 0, false
	}
	var at int64
	if lt := c.LastTransitionTime.Time; !lt.IsZero() {
		if !lt.After(minStartTime) || !lt.Before(maxStartTime) || lt.UnixNano() == 0 {
			return 0, 0, false
		}
		at = lt.UnixNano()
	}
	return condCode(1 + 3*t + st), at, true
}

// condition reads back what compactCondition kept, the time in the Local
// location as the API's decoders give it (metav1.Time); ok is false for none.
func (c condCode) condition(at int64) (PodCondition, bool) {
	if c == 0 {
		return PodCondition{}, false
	}
	i := int(c - 1)
	pc := PodCondition{Type: condTypes[i/3], Status: condStatuses[i%3]}
	if at != 0 {
		pc.LastTransitionTime = metav1.NewTime(time.Unix(0, at))
	}
	return pc, true
}

// Reason is status.reason ("Evicted", ...), "" when the Pod has none.
func (s *PodStatus) Reason() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.reason
}

// Message is status.message, "" when the Pod has none.
func (s *PodStatus) Message() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.message
}

// PodIPs is status.podIPs when the Pod has more than its podIP (dual
// stack), else nil.
func (s *PodStatus) PodIPs() []corev1.PodIP {
	if s.rare == nil {
		return nil
	}
	return s.rare.podIPs
}

// InitContainerStatuses are the init containers' statuses until all of them
// completed, then nil.
func (s *PodStatus) InitContainerStatuses() []ContainerStatus {
	if s.rare == nil {
		return nil
	}
	return s.rare.initContainerStatuses
}

// SetReason sets what Reason reads, for a Pod being built.
func (s *PodStatus) SetReason(reason string) {
	if reason != "" || s.rare != nil {
		s.rareFields().reason = reason
	}
}

// SetMessage sets what Message reads, for a Pod being built.
func (s *PodStatus) SetMessage(message string) {
	if message != "" || s.rare != nil {
		s.rareFields().message = message
	}
}

// SetPodIPs sets what PodIPs reads, for a Pod being built: nil unless the
// Pod has more addresses than its podIP.
func (s *PodStatus) SetPodIPs(ips []corev1.PodIP) {
	if ips != nil || s.rare != nil {
		s.rareFields().podIPs = ips
	}
}

// SetInitContainerStatuses sets what InitContainerStatuses reads, for a Pod
// being built: nil once every init container completed.
func (s *PodStatus) SetInitContainerStatuses(statuses []ContainerStatus) {
	if statuses != nil || s.rare != nil {
		s.rareFields().initContainerStatuses = statuses
	}
}

// PodCondition is one of the Ready and DisruptionTarget conditions, and PodScheduled
// when it is not True.
type PodCondition struct {
	Type               corev1.PodConditionType
	Status             corev1.ConditionStatus
	Reason             string
	Message            string
	LastTransitionTime metav1.Time
}

// ContainerStatus holds the state of one container now and at its last end.
type ContainerStatus struct {
	Name                 string
	Image                string
	ImageID              string
	State                corev1.ContainerState
	LastTerminationState TerminationState
	Ready                bool
	RestartCount         int32
}

// TerminationState is a container's last termination state: the
// corev1.ContainerState the kubelet records there, of which sandscope reads
// only Terminated (how the previous run ended), so it keeps only that
// pointer.
type TerminationState struct {
	Terminated *corev1.ContainerStateTerminated
}

// GetObjectKind returns an empty kind: a slim Pod carries no type information.
func (p *Pod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies everything, so a copy shares nothing mutable (the
// Labels excepted: they are read only and shared by design).
func (p *Pod) DeepCopyObject() runtime.Object {
	if p == nil {
		return nil
	}
	out := *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if p.Spec.Containers != nil {
		out.Spec.Containers = make([]Container, len(p.Spec.Containers))
		for i, c := range p.Spec.Containers {
			c.Command, c.Args = slices.Clone(c.Command), slices.Clone(c.Args)
			c.LivenessProbe = c.LivenessProbe.DeepCopy()
			if c.MemoryLimit != nil {
				q := c.MemoryLimit.DeepCopy()
				c.MemoryLimit = &q
			}
			out.Spec.Containers[i] = c
		}
	}
	out.Status.ContainerStatuses = copyContainerStatuses(p.Status.ContainerStatuses)
	if r := p.Status.rare; r != nil {
		out.Status.rare = &rarePodStatus{reason: r.reason, message: r.message, podIPs: slices.Clone(r.podIPs),
			initContainerStatuses: copyContainerStatuses(r.initContainerStatuses), conditions: slices.Clone(r.conditions)}
		if g := r.deletionGracePeriodSeconds; g != nil {
			v := *g
			out.Status.rare.deletionGracePeriodSeconds = &v
		}
		if g := r.terminationGrace; g != nil {
			v := *g
			out.Status.rare.terminationGrace = &v
		}
		out.Status.rare.startTime = r.startTime.DeepCopy()
	}
	return &out
}

func copyContainerStatuses(in []ContainerStatus) []ContainerStatus {
	if in == nil {
		return nil
	}
	out := make([]ContainerStatus, len(in))
	for i := range in {
		out[i] = in[i]
		in[i].State.DeepCopyInto(&out[i].State)
		out[i].LastTerminationState.Terminated = in[i].LastTerminationState.Terminated.DeepCopy()
	}
	return out
}

// Restarts is the sum of the containers' restart counts, as kubectl's
// RESTARTS column counts them.
func (p *Pod) Restarts() int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// HasIP reports whether ip is the Pod's podIP or one of its podIPs.
func (p *Pod) HasIP(ip string) bool {
	if p.Status.PodIP == ip {
		return true
	}
	for _, a := range p.Status.PodIPs() {
		if a.IP == ip {
			return true
		}
	}
	return false
}

// Main returns the main container's spec and status: OpenSandbox's
// "sandbox" when present, else the first container. Either may be nil, and
// both are for a nil Pod.
func (p *Pod) Main() (*Container, *ContainerStatus) { return mainContainer(p) }

// mainContainer returns the main container's spec and status ("sandbox" for
// OpenSandbox, else the first container). Either may be nil.
func mainContainer(p *Pod) (*Container, *ContainerStatus) {
	if p == nil || len(p.Spec.Containers) == 0 && len(p.Status.ContainerStatuses) == 0 {
		return nil, nil
	}
	name := ""
	var spec *Container
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == osv1.ContainerSandbox {
			spec = &p.Spec.Containers[i]
			break
		}
	}
	if spec == nil && len(p.Spec.Containers) > 0 {
		spec = &p.Spec.Containers[0]
	}
	if spec != nil {
		name = spec.Name
	} else {
		name = osv1.ContainerSandbox
	}
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return spec, &p.Status.ContainerStatuses[i]
		}
	}
	if spec == nil && len(p.Status.ContainerStatuses) > 0 {
		return nil, &p.Status.ContainerStatuses[0]
	}
	return spec, nil
}

// SlimPod returns the Pod sandscope keeps of p: metadata (name, namespace,
// uid, resourceVersion, labels, owner references, timestamps, deletion
// grace, finalizers); spec (nodeName, hostNetwork, termination grace; per
// container name, image, command, args, liveness probe, and the memory limit
// of a container that restarted or terminated); status (phase, reason,
// message, IPs, startTime, the Ready and DisruptionTarget conditions and
// PodScheduled when not True, every container status, the init container
// statuses until they all completed). Everything else goes: managedFields,
// every annotation, restartPolicy (nothing reads it), env, volumes, other
// resources, init container specs.
// Strings and slices of p are shared, not copied (informer objects are read
// only); strings that repeat across Pods are interned. Nil in, nil out.
//
// This is the one corev1.Pod → Pod conversion. kube/ does not call it: it
// reads every Pod it hands the fleet from the server's protobuf
// (kube/codec/podwire.go), which asks the rules below (KeepsMemoryLimit,
// KeepsPodCondition, InitContainerCompleted, KeepsPodIPs) what to keep, and
// whose tests hold it to what SlimPodSharing makes of the same bytes, field
// by field, on random Pods and in a fuzz target. SlimPod serves code that
// has read a whole corev1.Pod for reasons of its own (a create's probe, an
// exec's check; restart forensics use SlimPodWithLimits).
func SlimPod(p *corev1.Pod) *Pod { return slimPod(p, nil, false) }

// SlimPodSharing is SlimPod taking the containers' commands and args, and
// the finalizers, from lists, so that Pods of one template share them. A
// nil lists copies them, as SlimPod does. It is the reference the Pod
// decoder of kube/ is tested and fuzzed against.
func SlimPodSharing(p *corev1.Pod, lists *mem.StringLists) *Pod { return slimPod(p, lists, false) }

// SlimPodWithLimits is SlimPod keeping every container's memory limit, not
// only those of containers that ended: restart forensics compare a Pod
// with its siblings, and a sibling serves as a control only when its
// memory limit is known (forensics.SameControl).
func SlimPodWithLimits(p *corev1.Pod) *Pod { return slimPod(p, nil, true) }

// slimPod is SlimPodSharing, keeping every memory limit when everyLimit.
func slimPod(p *corev1.Pod, lists *mem.StringLists, everyLimit bool) *Pod {
	if p == nil {
		return nil
	}
	// The statuses first: which memory limits are kept depends on them.
	statuses := slimStatuses(p.Status.ContainerStatuses)
	owners := ownerRefsOf(p.OwnerReferences)
	var ownerNames []string
	for _, o := range owners {
		ownerNames = append(ownerNames, o.Name)
	}
	out := &Pod{
		ObjectMeta: ObjectMeta{
			Name:              p.Name,
			Namespace:         mem.Intern(p.Namespace),
			UID:               p.UID,
			OwnerReferences:   owners,
			DeletionTimestamp: p.DeletionTimestamp,
			Labels:            LabelsFrom(p.Labels, ownerNames...),
		},
		Spec: PodSpec{
			NodeName:    mem.Intern(p.Spec.NodeName),
			HostNetwork: p.Spec.HostNetwork,
			Containers:  slimContainers(p.Spec.Containers, statuses, lists, everyLimit),
			// Init container specs are dropped: their statuses already carry
			// name, image and state.
		},
		Status: PodStatus{
			Phase:             p.Status.Phase,
			PodIP:             p.Status.PodIP,
			ContainerStatuses: statuses,
		},
	}
	out.SetCreated(p.CreationTimestamp.Time)
	out.SetSharedFinalizers(lists.ShareRef(p.Finalizers))
	out.Status.SetStartTime(p.Status.StartTime)
	var podIPs []corev1.PodIP
	if ips := p.Status.PodIPs; len(ips) > 0 && KeepsPodIPs(len(ips), ips[0].IP, p.Status.PodIP) {
		podIPs = ips
	}
	out.SetTerminationGracePeriodSeconds(p.Spec.TerminationGracePeriodSeconds)
	setSlimConditions(&out.Status, p.Status.Conditions)
	out.Status.SetReason(p.Status.Reason)
	out.Status.SetMessage(p.Status.Message)
	out.Status.SetPodIPs(podIPs)
	out.Status.SetInitContainerStatuses(slimInitStatuses(p.Status.InitContainerStatuses))
	out.SetDeletionGracePeriodSeconds(p.DeletionGracePeriodSeconds)
	return out
}

func slimContainers(cs []corev1.Container, statuses []ContainerStatus, lists *mem.StringLists, everyLimit bool) []Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Container, len(cs))
	for i, c := range cs {
		out[i] = Container{Name: mem.Intern(c.Name), Image: mem.Intern(c.Image), Command: lists.Share(c.Command), Args: lists.Share(c.Args), LivenessProbe: c.LivenessProbe}
		if everyLimit || KeepsMemoryLimit(statuses, c.Name) {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				out[i].MemoryLimit = &q
			}
		}
	}
	return out
}

// What a Pod keeps is decided by the rules below, which SlimPodSharing and
// the protobuf decoder of kube/codec both ask, so that the two cannot
// disagree on a rule; they differ only in where the values come from.

// KeepsMemoryLimit reports whether the container named name keeps its
// memory limit: only once it restarted or terminated (statuses are the
// Pod's container statuses), when restart forensics will want it to tell
// an OOM kill apart. Most containers never end, and the limit costs a
// Quantity each.
func KeepsMemoryLimit(statuses []ContainerStatus, name string) bool {
	for i := range statuses {
		if s := &statuses[i]; s.Name == name {
			return s.RestartCount > 0 || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil
		}
	}
	return false
}

// InitContainerCompleted reports whether an init container status says it
// completed at its first run: terminated, exit code 0, never restarted.
// Once every init container did (the usual running Pod), a Pod keeps no
// init container status: they then say nothing the main container's
// status does not.
func InitContainerCompleted(terminated bool, exitCode, restartCount int32) bool {
	return terminated && exitCode == 0 && restartCount == 0
}

// KeepsPodIPs reports whether a Pod keeps its n status.podIPs (first is
// the first one's ip): only when they say more than podIP (dual stack);
// the single-stack case would repeat it.
func KeepsPodIPs(n int, first, podIP string) bool {
	return n > 1 || n == 1 && first != podIP
}

// slimInitStatuses drops the init container statuses once every init
// container completed (InitContainerCompleted).
func slimInitStatuses(ss []corev1.ContainerStatus) []ContainerStatus {
	for i := range ss {
		t := ss[i].State.Terminated
		var exitCode int32
		if t != nil {
			exitCode = t.ExitCode
		}
		if !InitContainerCompleted(t != nil, exitCode, ss[i].RestartCount) {
			return slimStatuses(ss)
		}
	}
	return nil
}

// setSlimConditions sets on s the conditions of cs a Pod keeps.
func setSlimConditions(s *PodStatus, cs []corev1.PodCondition) {
	n := 0
	for _, c := range cs {
		if KeepsPodCondition(c.Type, c.Status) {
			n++
		}
	}
	if n == 0 {
		s.SetConditions(nil)
		return
	}
	out := make([]PodCondition, 0, n)
	if n == 1 {
		out = nil // SetCondition makes a list only if it must
	}
	for _, c := range cs {
		if KeepsPodCondition(c.Type, c.Status) {
			pc := PodCondition{Type: corev1.PodConditionType(mem.Intern(string(c.Type))), Status: corev1.ConditionStatus(mem.Intern(string(c.Status))),
				Reason: mem.Intern(c.Reason), Message: c.Message, LastTransitionTime: c.LastTransitionTime}
			if n == 1 {
				s.SetCondition(pc)
				return
			}
			out = append(out, pc)
		}
	}
	s.SetConditions(out)
}

// KeepsPodCondition reports whether a Pod keeps a condition of type typ
// and status status: Ready and DisruptionTarget always; PodScheduled only
// when it says something (not True: Unschedulable and the like), since a
// nodeName already says the Pod is scheduled; no other.
func KeepsPodCondition(typ corev1.PodConditionType, status corev1.ConditionStatus) bool {
	switch typ {
	case corev1.PodReady, corev1.DisruptionTarget:
		return true
	case corev1.PodScheduled:
		return status != corev1.ConditionTrue
	}
	return false
}

func slimStatuses(ss []corev1.ContainerStatus) []ContainerStatus {
	if len(ss) == 0 {
		return nil
	}
	out := make([]ContainerStatus, len(ss))
	for i, s := range ss {
		out[i] = ContainerStatus{
			Name: mem.Intern(s.Name), Image: mem.Intern(s.Image), ImageID: mem.Intern(s.ImageID), Ready: s.Ready,
			RestartCount: s.RestartCount, State: s.State, LastTerminationState: TerminationState{Terminated: s.LastTerminationState.Terminated},
		}
	}
	return out
}

// DeletionTimes reads a deleting Pod's deletion: the API server sets
// deletionTimestamp to the time of the request plus the grace period it
// granted (deletionGracePeriodSeconds), so deletionTimestamp is when the
// grace period ends — in the future when the delete is made — and the
// request was made that many seconds before it. exact is false when the
// Pod does not carry deletionGracePeriodSeconds: requested is then
// deletionTimestamp itself, an upper bound. ok is false while the Pod is
// not being deleted.
func (p *Pod) DeletionTimes() (requested, graceEnds time.Time, exact, ok bool) {
	if p == nil || p.DeletionTimestamp == nil {
		return time.Time{}, time.Time{}, false, false
	}
	graceEnds = p.DeletionTimestamp.Time
	if g := p.GetDeletionGracePeriodSeconds(); g != nil {
		return graceEnds.Add(-time.Duration(*g) * time.Second), graceEnds, true, true
	}
	return graceEnds, graceEnds, false, true
}

// DeletionSummary says what a deleting Pod's times are, in layout (UTC):
// "deletion requested ~15:04:05 (grace ends 15:04:35)", or, without
// deletionGracePeriodSeconds, "deleting, grace ends 15:04:35". "" while the
// Pod is not being deleted.
func (p *Pod) DeletionSummary(layout string) string {
	requested, graceEnds, exact, ok := p.DeletionTimes()
	switch {
	case !ok:
		return ""
	case !exact:
		return "deleting, grace ends " + graceEnds.UTC().Format(layout)
	case requested.Equal(graceEnds):
		return "deletion requested " + requested.UTC().Format(layout) + " (no grace period)"
	}
	return "deletion requested ~" + requested.UTC().Format(layout) + " (grace ends " + graceEnds.UTC().Format(layout) + ")"
}
