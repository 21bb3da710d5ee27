package create

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Stage is where a sandbox being created is.
type Stage string

// The stages of a create, in the order a sandbox passes them.
const (
	StageQueued       Stage = "Queued"       // the object is accepted, no Pod yet
	StageBound        Stage = "Bound"        // a SandboxClaim names its Sandbox (agent-sandbox --warm-pool)
	StageScheduled    Stage = "Scheduled"    // a Pod is bound to a node
	StagePullingImage Stage = "PullingImage" // containers are being created (image pulls, init container)
	StageStarting     Stage = "Starting"     // the main container runs; the exec daemon is being asked
	StageReady        Stage = "Ready"        // a command ran through the exec path and returned 0
	StageFailed       Stage = "Failed"
)

// stageRank orders the forward stages; stages never move back.
var stageRank = map[Stage]int{StageQueued: 1, StageBound: 2, StageScheduled: 3, StagePullingImage: 4, StageStarting: 5, StageReady: 6}

// Failure codes after the object was created.
const (
	CodeUnschedulable    = "UNSCHEDULABLE"
	CodeImagePull        = "IMAGE_PULL_FAILED"
	CodeContainerConfig  = "CONTAINER_CONFIG_ERROR"
	CodeCrashLoop        = "CRASH_LOOP"
	CodeInitFailed       = "INIT_CONTAINER_FAILED"
	CodeMainExited       = "MAIN_CONTAINER_EXITED"
	CodePodFailed        = "POD_FAILED"
	CodePodDeleted       = "POD_DELETED"
	CodeEngineFailed     = "ENGINE_FAILED"
	CodeSandboxDeleted   = "SANDBOX_DELETED"
	CodeExecdUnreachable = "EXECD_UNREACHABLE"
	CodeTimeout          = "TIMEOUT"
	CodeCanceled         = "CANCELED"
)

// failure is a certain failure seen in the objects.
type failure struct {
	code      string
	message   string
	retryable bool
	executed  refusal.Executed
}

// observation is what the objects say right now.
type observation struct {
	stage   Stage
	detail  string
	pod     *corev1.Pod // the Pod backing the sandbox, when there is one
	fail    *failure
	running bool // main container running: time to ask the exec daemon
}

var (
	imagePullReasons  = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true, "RegistryUnavailable": true}
	configReasons     = map[string]bool{"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true}
	creatingReasons   = map[string]bool{"ContainerCreating": true, "PodInitializing": true}
	mainContainerName = osv1.ContainerSandbox
)

// observe derives the stage (or a certain failure) from the sandbox object,
// its Pods and their Events. seenObject says the object was seen before (so
// its absence now means someone deleted it).
func observe(engine engineKind, obj *unstructured.Unstructured, pods []*corev1.Pod, events []*corev1.Event, seenObject bool) observation {
	o := observation{stage: StageQueued, detail: "object accepted, no Pod yet"}
	if obj == nil {
		if seenObject {
			o.fail = &failure{code: CodeSandboxDeleted, message: "the sandbox object was deleted by someone else", executed: refusal.ExecutedUnknown}
		}
		return o
	}
	if obj.GetDeletionTimestamp() != nil {
		o.fail = &failure{code: CodeSandboxDeleted, message: "the sandbox object is being deleted by someone else", executed: refusal.ExecutedUnknown}
		return o
	}
	if engine == engineBatchSandbox || engine == enginePool {
		if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == "Failed" {
			o.fail = &failure{code: CodeEngineFailed, message: "BatchSandbox phase Failed" + conditionMessage(obj, "PodFailed"), executed: refusal.ExecutedUnknown}
		}
	}
	pod := pickPod(pods)
	if pod == nil {
		if engine == enginePool {
			o.detail = "waiting for the pool to allocate a Pod"
		}
		if o.fail != nil && o.fail.executed == refusal.ExecutedUnknown {
			o.fail.executed = refusal.ExecutedNo
		}
		return o
	}
	o.pod = pod
	podFail, executed := podFailure(pod)
	if o.fail == nil {
		o.fail = podFail
	} else {
		o.fail.executed = executed
	}
	if pod.Spec.NodeName != "" {
		o.stage, o.detail = StageScheduled, "on node "+pod.Spec.NodeName
	}
	if pod.Spec.NodeName != "" || pod.Status.Phase != "" {
		if d, ok := pulling(pod, events); ok {
			o.stage, o.detail = StagePullingImage, d
		}
	}
	if s := mainStatus(pod); s != nil && s.State.Running != nil && pod.DeletionTimestamp == nil {
		o.stage, o.detail = StageStarting, "main container running on "+pod.Spec.NodeName+"; asking the exec daemon"
		o.running = o.fail == nil
	}
	if o.fail != nil && containerRan(o.fail.code) && stageRank[o.stage] < stageRank[StageStarting] {
		// The main container ran and ended: the create got that far,
		// whatever Pulling event is still about.
		o.stage, o.detail = StageStarting, "main container started"
	}
	return o
}

// containerRan reports whether a failure code means the main container
// started (and ended): a stage before Starting is impossible then.
func containerRan(code string) bool { return code == CodeMainExited || code == CodeCrashLoop }

// pickPod prefers a live Pod; a Pod that is deleting is reported as such.
func pickPod(pods []*corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	for _, p := range pods {
		if best == nil || (best.DeletionTimestamp != nil && p.DeletionTimestamp == nil) ||
			(p.DeletionTimestamp == nil && p.CreationTimestamp.After(best.CreationTimestamp.Time)) {
			best = p
		}
	}
	return best
}

func mainStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == mainContainerName {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	if len(pod.Status.ContainerStatuses) == 1 {
		return &pod.Status.ContainerStatuses[0]
	}
	return nil
}

// podFailure finds a certain failure of the Pod, and says whether the
// user's command may have run.
func podFailure(pod *corev1.Pod) (*failure, refusal.Executed) {
	executed := refusal.ExecutedNo
	if s := mainStatus(pod); s != nil {
		switch {
		case s.State.Terminated != nil || s.LastTerminationState.Terminated != nil || s.RestartCount > 0:
			executed = refusal.ExecutedYes
		case s.State.Running != nil:
			executed = refusal.ExecutedUnknown
		}
	}
	fail := func(code, msg string, retryable bool) (*failure, refusal.Executed) {
		return &failure{code: code, message: msg, retryable: retryable, executed: executed}, executed
	}
	if pod.DeletionTimestamp != nil {
		return fail(CodePodDeleted, fmt.Sprintf("pod %s is being deleted by someone else", pod.Name), true)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fail(CodeUnschedulable, "Unschedulable: "+oneLine(c.Message), true)
		}
	}
	for _, s := range pod.Status.InitContainerStatuses {
		if f := waitingFailure(s, "init container "+s.Name, executed); f != nil {
			return f, executed
		}
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return fail(CodeInitFailed, fmt.Sprintf("init container %s failed: exit code %d%s", s.Name, t.ExitCode, reasonText(t.Reason, t.Message)), false)
		}
	}
	for _, s := range pod.Status.ContainerStatuses {
		label := "container " + s.Name
		if s.Name == mainContainerName || len(pod.Status.ContainerStatuses) == 1 {
			label = "main container " + s.Name
		}
		if f := waitingFailure(s, label, executed); f != nil {
			return f, executed
		}
		if s.Name != mainContainerName && len(pod.Status.ContainerStatuses) > 1 {
			continue // a sidecar ending is not the sandbox ending
		}
		if t := s.State.Terminated; t != nil {
			return fail(CodeMainExited, fmt.Sprintf("main container exited: exit code %d%s", t.ExitCode, reasonText(t.Reason, t.Message)), false)
		}
		if t := s.LastTerminationState.Terminated; t != nil {
			return fail(CodeMainExited, fmt.Sprintf("main container exited and was restarted (%d restarts): last exit code %d%s", s.RestartCount, t.ExitCode, reasonText(t.Reason, t.Message)), false)
		}
	}
	switch pod.Status.Phase {
	case corev1.PodFailed:
		return fail(CodePodFailed, "pod failed"+reasonText(pod.Status.Reason, pod.Status.Message), false)
	case corev1.PodSucceeded:
		return fail(CodeMainExited, "pod ended (Succeeded): the start command finished", false)
	}
	return nil, executed
}

func waitingFailure(s corev1.ContainerStatus, label string, executed refusal.Executed) *failure {
	w := s.State.Waiting
	if w == nil {
		return nil
	}
	msg := label + " " + w.Reason + reasonText("", w.Message)
	switch {
	case imagePullReasons[w.Reason]:
		return &failure{code: CodeImagePull, message: "image pull failed: " + msg, retryable: true, executed: executed}
	case configReasons[w.Reason]:
		return &failure{code: CodeContainerConfig, message: msg, executed: executed}
	case w.Reason == "CrashLoopBackOff":
		return &failure{code: CodeCrashLoop, message: msg, executed: refusal.ExecutedYes}
	}
	return nil
}

// pulling reports the PullingImage stage: a container waiting to be
// created, an init container running, or a Pulling event.
func pulling(pod *corev1.Pod, events []*corev1.Event) (string, bool) {
	for _, e := range events {
		if e.InvolvedObject.Name == pod.Name && (e.InvolvedObject.UID == "" || e.InvolvedObject.UID == pod.UID) && e.Reason == "Pulling" {
			return oneLine(e.Message), true
		}
	}
	for _, s := range pod.Status.InitContainerStatuses {
		if s.State.Running != nil {
			return "init container " + s.Name + " running", true
		}
		if w := s.State.Waiting; w != nil && creatingReasons[w.Reason] {
			return "init container " + s.Name + " " + w.Reason, true
		}
	}
	for _, s := range pod.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil && creatingReasons[w.Reason] {
			return "container " + s.Name + " " + w.Reason, true
		}
	}
	return "", false
}

func conditionMessage(obj *unstructured.Unstructured, condType string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conds {
		c, _ := raw.(map[string]any)
		if t, _ := c["type"].(string); t == condType {
			reason, _ := c["reason"].(string)
			msg, _ := c["message"].(string)
			return reasonText(reason, msg)
		}
	}
	return ""
}

func reasonText(reason, message string) string {
	var parts []string
	if reason != "" {
		parts = append(parts, reason)
	}
	if message != "" {
		parts = append(parts, oneLine(message))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
