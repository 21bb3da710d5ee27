package execute

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
)

// Target is the Pod a command is meant for, as the fleet model knows it.
type Target struct {
	Namespace string `json:"namespace"`
	Sandbox   string `json:"sandbox,omitempty"` // sandbox key; "" for a bare pod/NAME
	Pod       string `json:"pod"`
	// UID is the UID of the Pod the sandbox was bound to. Empty only for a
	// bare Pod the model does not know; exec then binds it to the UID read
	// live before dispatch, so the check after the command still means something.
	UID string `json:"uid"`
	// IP is the address the model knows: the engine's recorded address, else
	// the cached Pod's podIP. Empty when it knows none.
	IP        string `json:"ip,omitempty"`
	Container string `json:"container,omitempty"`

	// What the fleet model derived for the sandbox's slot (sandbox targets
	// only): the exec is refused unless it is OK.
	Identity         model.IdentityState `json:"-"`
	identityEvidence []model.Evidence
	// state is the sandbox's effective state (sandbox targets only): it
	// says whether a sandbox with no running Pod may still get one.
	state model.EffectiveState
	// Pooled: a BatchSandbox whose Pod a Pool allocated; its allocation is
	// re-read live before dispatch.
	Pooled bool `json:"-"`
	// hints are evidence about the target that refuses nothing but that
	// the caller should see (a likely same-name re-creation).
	hints []model.Evidence
	// byPod: the caller named the Pod (pod/NAME), not the sandbox: the
	// sandbox's slot state does not gate it, and an unknown UID is bound
	// to the one read live.
	byPod bool
	// ExpectIP is the Pod IP the caller recorded (--expect-ip): the live Pod
	// must still have it.
	ExpectIP string `json:"-"`
}

// sandboxName is the sandbox's own name (the last part of its key).
func (t Target) sandboxName() string {
	_, _, name, _ := model.ParseSandboxKey(t.Sandbox)
	return name
}

func (t Target) engine() model.Engine {
	e, _, _, _ := model.ParseSandboxKey(t.Sandbox)
	return e
}

func (t Target) podRef() string { return t.Namespace + "/" + t.Pod }

// Holder is a Pod seen holding an address, from the model's IP index or a
// live list by field selector status.podIP.
type Holder struct {
	Namespace, Pod, UID string
	Phase               corev1.PodPhase
	Deleting            bool
	HostNetwork         bool
	Source              string // "model" or "live"
}

// HoldersFromPods turns Pods holding ip into Holders (other IPs are skipped).
func HoldersFromPods(ip, source string, pods ...*corev1.Pod) []Holder {
	var hs []Holder
	for _, p := range pods {
		if p == nil || ip == "" || !podHasIP(p, ip) {
			continue
		}
		hs = append(hs, Holder{Namespace: p.Namespace, Pod: p.Name, UID: string(p.UID), Phase: p.Status.Phase,
			Deleting: p.DeletionTimestamp != nil, HostNetwork: p.Spec.HostNetwork, Source: source})
	}
	return hs
}

func podHasIP(p *corev1.Pod, ip string) bool {
	if p.Status.PodIP == ip {
		return true
	}
	for _, a := range p.Status.PodIPs {
		if a.IP == ip {
			return true
		}
	}
	return false
}

// Moment says when a check runs.
type Moment int

const (
	// Before dispatch: every requirement holds or nothing is sent.
	Before Moment = iota
	// After the command ended: did the command reach the Pod we meant? A
	// failure turns the outcome into executed "unknown".
	After
)

// CheckInput is everything the check looks at.
type CheckInput struct {
	Target Target
	Via    Via
	// Address is the IP about to be dialled (execd-direct); "" for transports
	// routed by Pod name.
	Address string
	// Live is the Pod read from the API server just now; nil when not found.
	Live *corev1.Pod
	// Holders are Pods known to hold the address (or Target.IP): the model's
	// IP index, refreshed, plus a live list for execd-direct. The target
	// itself may appear; it is skipped.
	Holders []Holder
	Moment  Moment
	// Allocation is the pooled sandbox's allocation read live just now
	// (Target.Pooled only); nil when the sandbox object is gone.
	Allocation *Allocation
}

// Allocation is what a pooled BatchSandbox says, live, about its Pods.
type Allocation struct {
	Pods []string // alloc-status minus alloc-released
}

// Violation is one unmet requirement.
type Violation struct {
	Code    string
	Message string
}

// Verdict is the check's answer.
type Verdict struct {
	Violations []Violation
	Evidence   []model.Evidence
}

// OK reports whether the command may be sent (Before) or whether it reached
// the Pod meant (After).
func (v Verdict) OK() bool { return len(v.Violations) == 0 }

// Code is the most dangerous violation's code ("" when OK).
func (v Verdict) Code() string {
	if v.OK() {
		return ""
	}
	return v.Violations[0].Code
}

// Message joins the violations' messages.
func (v Verdict) Message() string {
	msgs := make([]string, len(v.Violations))
	for i, vi := range v.Violations {
		msgs[i] = vi.Message
	}
	return strings.Join(msgs, "; ")
}

// Retryable reports whether a later attempt can succeed without anyone repairing the
// sandbox (it is still starting, or the model lags).
func (v Verdict) Retryable() bool {
	for _, vi := range v.Violations {
		switch vi.Code {
		case CodeIPStale, CodeNotExecReady:
		case CodePodNotRunning, CodeContainerNotRunning:
			if !strings.Contains(vi.Message, "waiting") && !strings.Contains(vi.Message, "Pending") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// severity orders codes from most to least dangerous: the first one is what
// a refusal is reported as.
var severity = []string{CodeIPTaken, CodePodGone, CodeUIDChanged, CodePodDead, CodeHostNetwork, CodePodDeleting, CodePodNotRunning,
	CodeIPStale, CodeContainerNotRunning, CodeNotExecReady}

// Check is the one identity check every exec surface shares (CLI, TUI
// shell and one-shots, every transport). It requires, of the Pod read live:
// same name (it was read by name) and the UID the sandbox was bound to;
// phase Running and no deletionTimestamp; status.podIP equal to the address
// about to be dialled (execd-direct) or to the one the model knows; no
// other live Pod holding that address; the target container running. Any
// two of name, UID and IP can be fooled (a dead sandbox's IP reused by a new Pod); together they
// cannot. It leans strict: a wrong refusal costs a retry, a wrong pass runs
// a command in a stranger's container.
//
// After the command, only what proves where the command went counts: the
// Pod still exists with the same UID (pods/exec and pods/portforward are
// routed by name only) and, for execd-direct, still owns the address it was
// sent to, Running, with no other holder.
func Check(in CheckInput) Verdict {
	var v Verdict
	add := func(code, format string, args ...any) {
		v.Violations = append(v.Violations, Violation{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	t, live := in.Target, in.Live
	direct := in.Via == ViaExecdDirect
	addr := in.Address
	if addr == "" {
		addr = t.IP
	}

	if live == nil {
		add(CodePodGone, "pod %s no longer exists", t.podRef())
		v.Evidence = append(v.Evidence, observed("API server: pod %s not found", t.podRef()))
	} else {
		v.Evidence = append(v.Evidence, observed("API server: pod %s uid=%s phase=%s podIP=%s node=%s%s",
			t.podRef(), live.UID, live.Status.Phase, orNone(live.Status.PodIP), orNone(live.Spec.NodeName), deletingNote(live)))
		switch {
		case t.UID != "" && string(live.UID) != t.UID:
			add(CodeUIDChanged, "pod %s was re-created: uid %s now, the sandbox was bound to %s", t.podRef(), live.UID, t.UID)
		case in.Moment == Before && !belongs(in, live, add):
		case in.Moment == After && !direct:
			// Routed by name and the same UID still holds the name: the command
			// reached the Pod we meant (a deleted UID never comes back).
		default:
			checkState(in, live, addr, add)
		}
	}
	if in.Moment == After && !direct {
		return sortViolations(v)
	}

	// Another live Pod holding the address is what runs a stranger's command.
	if addr != "" {
		// The live Pod itself is no stranger: if it is a re-creation, that
		// is reported as UID_CHANGED above.
		var liveUID string
		if live != nil {
			liveUID = string(live.UID)
		}
		seen := map[string]bool{}
		for _, h := range in.Holders {
			if h.UID == t.UID || h.UID == liveUID || seen[h.UID] || h.HostNetwork || h.Phase == corev1.PodSucceeded || h.Phase == corev1.PodFailed {
				continue
			}
			seen[h.UID] = true
			add(CodeIPTaken, "address %s is held by another pod, %s/%s (uid %s, %s)", addr, h.Namespace, h.Pod, h.UID, h.Phase)
			v.Evidence = append(v.Evidence, observed("%s: pod %s/%s uid=%s phase=%s holds %s", sourceName(h.Source), h.Namespace, h.Pod, h.UID, h.Phase, addr))
		}
	}
	return sortViolations(v)
}

// belongs checks, before dispatch, that the live Pod still belongs to the
// sandbox meant: a BatchSandbox's own Pod is owned or labelled by it, a
// pooled one is still in its live allocation and labelled by no other
// sandbox. The same Pod (name and UID) can pass every other check while the
// Pool has handed it to another sandbox.
func belongs(in CheckInput, live *corev1.Pod, add func(code, format string, args ...any)) bool {
	t := in.Target
	if t.engine() != model.EngineBatchSandbox {
		return true
	}
	name := t.sandboxName()
	label := live.Labels[osv1.LabelBatchSandboxName]
	if label != "" && label != name {
		add(CodePodGone, "pod %s now belongs to sandbox %s, not %s", t.podRef(), label, name)
		return false
	}
	if !t.Pooled {
		owned := label == name
		for _, r := range live.OwnerReferences {
			if r.Kind == "BatchSandbox" {
				if r.Name != name {
					add(CodePodGone, "pod %s is owned by BatchSandbox %s, not %s", t.podRef(), r.Name, name)
					return false
				}
				owned = true
			}
		}
		if !owned {
			add(CodePodGone, "pod %s is neither owned nor labelled by BatchSandbox %s", t.podRef(), name)
			return false
		}
		return true
	}
	switch {
	case in.Allocation == nil:
		add(CodePodGone, "sandbox %s no longer exists", t.Sandbox)
		return false
	case !slices.Contains(in.Allocation.Pods, t.Pod):
		add(CodePodGone, "pooled pod %s is no longer allocated to sandbox %s (alloc-status minus alloc-released: %s)",
			t.podRef(), name, orNone(strings.Join(in.Allocation.Pods, ",")))
		return false
	}
	return true
}

// checkState checks the live Pod that has the bound UID.
func checkState(in CheckInput, live *corev1.Pod, addr string, add func(code, format string, args ...any)) {
	t := in.Target
	if live.DeletionTimestamp != nil {
		// deletionTimestamp is when the grace period ends, not when the
		// delete was asked for: say which time is which.
		add(CodePodDeleting, "pod %s is being deleted (%s)", t.podRef(), model.SlimPod(live).DeletionSummary("15:04:05"))
	}
	if live.Status.Phase != corev1.PodRunning {
		add(CodePodNotRunning, "pod %s is %s, not Running", t.podRef(), orNone(string(live.Status.Phase)))
	}
	if in.Moment == After {
		// execd-direct after the command: the Pod must still own the address.
		if addr != "" && !podHasIP(live, addr) {
			add(CodeIPStale, "pod %s no longer has address %s (podIP %s)", t.podRef(), addr, orNone(live.Status.PodIP))
		}
		return
	}
	if in.Via != ViaKube && live.Spec.HostNetwork {
		// The "Pod IP" is the node's: any process on the node may own the port.
		add(CodeHostNetwork, "pod %s uses the node's network (hostNetwork): whatever listens on its execd port may be another process; use --via kube", t.podRef())
	}
	if t.ExpectIP != "" && !podHasIP(live, t.ExpectIP) {
		add(CodeIPStale, "pod %s has IP %s, not the %s the caller recorded", t.podRef(), orNone(live.Status.PodIP), t.ExpectIP)
	}
	switch {
	case in.Via == ViaKube && live.Spec.NodeName == "":
		add(CodeNotExecReady, "pod %s is not scheduled to a node yet", t.podRef())
	case in.Via != ViaKube && live.Status.PodIP == "":
		add(CodeNotExecReady, "pod %s has no IP yet", t.podRef())
	}
	if addr != "" && live.Status.PodIP != "" && !podHasIP(live, addr) {
		what := "the model records"
		if in.Address != "" {
			what = "exec would dial"
		}
		add(CodeIPStale, "pod %s has IP %s but %s %s", t.podRef(), live.Status.PodIP, what, addr)
	}
	checkContainer(t, live, add)
}

func checkContainer(t Target, live *corev1.Pod, add func(code, format string, args ...any)) {
	name := t.Container
	if name == "" {
		name = MainContainer(live)
	}
	if !slices.ContainsFunc(live.Spec.Containers, func(c corev1.Container) bool { return c.Name == name }) {
		add(CodeContainerNotRunning, "pod %s has no container %q", t.podRef(), name)
		return
	}
	for _, cs := range live.Status.ContainerStatuses {
		if cs.Name != name {
			continue
		}
		switch {
		case cs.State.Running != nil:
			return
		case cs.State.Waiting != nil:
			add(CodeContainerNotRunning, "container %s is waiting (%s)", name, orNone(cs.State.Waiting.Reason))
		case cs.State.Terminated != nil:
			add(CodeContainerNotRunning, "container %s terminated (%s, exit code %d)", name,
				orNone(cs.State.Terminated.Reason), cs.State.Terminated.ExitCode)
		default:
			add(CodeContainerNotRunning, "container %s has no state yet", name)
		}
		return
	}
	add(CodeContainerNotRunning, "container %s has no status yet", name)
}

// MainContainer is the container a shell opens in: "sandbox" (OpenSandbox's
// main container) when there is one, else the first.
func MainContainer(p *corev1.Pod) string {
	if p == nil || len(p.Spec.Containers) == 0 {
		return ""
	}
	for _, c := range p.Spec.Containers {
		if c.Name == "sandbox" {
			return c.Name
		}
	}
	return p.Spec.Containers[0].Name
}

func sortViolations(v Verdict) Verdict {
	slices.SortStableFunc(v.Violations, func(a, b Violation) int {
		return slices.Index(severity, a.Code) - slices.Index(severity, b.Code)
	})
	return v
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func deletingNote(p *corev1.Pod) string {
	if p.DeletionTimestamp == nil {
		return ""
	}
	return " deletionTimestamp=" + p.DeletionTimestamp.UTC().Format("2006-01-02T15:04:05Z")
}

func sourceName(s string) string {
	if s == "live" {
		return "API server (field selector status.podIP)"
	}
	return "fleet model IP index"
}
