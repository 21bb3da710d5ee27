package fleet

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// engineFailureReasons are the waiting reasons OpenSandbox turns into a sticky Failed.
var engineFailureReasons = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true, "CreateContainerConfigError": true,
}

// podDead: the Pod is Failed or Succeeded, or its main container has terminated.
func podDead(p *model.Pod) bool {
	if p == nil {
		return false
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	_, st := p.Main()
	return st != nil && st.State.Terminated != nil
}

// podRunning: phase Running and the main container running.
func podRunning(p *model.Pod) bool {
	if p == nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	_, st := p.Main()
	return st == nil || st.State.Running != nil
}

// podLive: the Pod still holds its IP on the network (not terminal).
func podLive(p *model.Pod) bool {
	return p != nil && p.Status.PodIP != "" && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded
}

func podReadyCondition(p *model.Pod) (corev1.ConditionStatus, bool) {
	c, ok := p.Status.Condition(corev1.PodReady)
	return c.Status, ok
}

// podEngineFailure returns the waiting reason that makes OpenSandbox set Failed, if any.
func podEngineFailure(p *model.Pod) string {
	_, st := p.Main()
	if st != nil && st.State.Waiting != nil && engineFailureReasons[st.State.Waiting.Reason] {
		return st.State.Waiting.Reason
	}
	return ""
}

// podSummary is a short human description of a Pod's condition.
func podSummary(p *model.Pod) string {
	if p == nil {
		return "gone"
	}
	s := string(p.Status.Phase)
	if s == "" {
		s = "Pending"
	}
	if _, st := p.Main(); st != nil {
		switch {
		case st.State.Terminated != nil:
			t := st.State.Terminated
			s += ", main container terminated (" + textsafe.OrDash(t.Reason) + ", exit " + strconv.Itoa(int(t.ExitCode)) + ")"
		case st.State.Waiting != nil && st.State.Waiting.Reason != "":
			s += ", main container waiting (" + st.State.Waiting.Reason + ")"
		}
	}
	if d := p.DeletionSummary(time.TimeOnly); d != "" {
		s += ", " + d
	}
	return s
}

// podState is the effective state of one linked Pod.
func podState(p *model.Pod) model.EffectiveState {
	switch {
	case p == nil:
		return model.StateGone
	case p.DeletionTimestamp != nil:
		return model.StateTerminating
	case podDead(p):
		return model.StateDead
	case podRunning(p):
		return model.StateRunning
	case podEngineFailure(p) != "":
		return model.StateFailed
	case p.Spec.NodeName != "":
		return model.StateStarting
	}
	return model.StatePending
}

// effectiveState derives what is true of a sandbox from its primary slot
// (the one the engine forwards to) and the engine's own phase:
//   - the sandbox object being deleted → Terminating
//   - no Pod linked and none ever seen → Pending (Failed when the engine says so)
//   - a linked Pod that vanished, or was handed to another sandbox → Gone
//   - else the Pod's own state; an engine Failed with no running Pod → Failed
func effectiveState(deleting bool, enginePhase string, primary *model.Slot, foreign bool) model.EffectiveState {
	if deleting {
		return model.StateTerminating
	}
	if primary == nil {
		if enginePhase == model.PhaseFailed {
			return model.StateFailed
		}
		return model.StatePending
	}
	if primary.Pod == nil || foreign {
		if primary.BoundUID != "" || primary.RecordedIP != "" {
			return model.StateGone
		}
		if enginePhase == model.PhaseFailed {
			return model.StateFailed
		}
		return model.StatePending
	}
	st := podState(primary.Pod)
	if enginePhase == model.PhaseFailed && (st == model.StatePending || st == model.StateStarting) {
		return model.StateFailed
	}
	return st
}

// appendStateNotices appends to out what comparing the engine's phase with
// the effective state finds (appended, not returned as a list of their
// own: the derivation gathers its notices in scratch).
//   - STATE_MISMATCH (warning): the engine says running (Succeed, Allocated, an
//     agent Sandbox Ready=True) but the effective state is not Running; or it says
//     Pending while recording an address whose Pod is Dead/Gone (the BatchSandbox
//     controller drops back to Pending when the main container exits).
//   - FAILED_STICKY (warning): the engine says Failed while the Pod is Running and Ready again.
func appendStateNotices(out []model.Notice, engine model.Engine, enginePhase string, engineReady bool, st model.EffectiveState, primary *model.Slot) []model.Notice {
	if st == model.StateUnknown || st == model.StateTerminating {
		return out
	}
	runningClaim := false
	switch engine {
	case model.EngineBatchSandbox:
		runningClaim = enginePhase == model.PhaseSucceed || enginePhase == model.PhaseAllocated ||
			(enginePhase == model.PhasePending || enginePhase == "") && primary != nil && primary.RecordedIP != "" && (st == model.StateDead || st == model.StateGone)
	case model.EngineAgent:
		runningClaim = engineReady
	}
	if runningClaim && st != model.StateRunning && !(st == model.StateStarting && enginePhase == model.PhaseAllocated) {
		phase := enginePhase
		if engine == model.EngineAgent {
			phase = "Ready=True"
		}
		out = append(out, model.Notice{Code: model.CodeStateMismatch, Severity: model.SeverityWarning, Pod: slotPod(primary),
			Message: "engine says " + textsafe.OrDash(phase) + " but the sandbox is " + st.String(),
			Evidence: []model.Evidence{{Kind: model.Observed, Text: "engine phase " + textsafe.OrDash(phase)},
				{Kind: model.Inferred, Text: "effective state " + st.String() + " from Pod " + slotPodSummary(primary)}}})
	}
	if enginePhase == model.PhaseFailed && primary != nil && primary.Pod != nil && podRunning(primary.Pod) {
		if rs, ok := podReadyCondition(primary.Pod); ok && rs == corev1.ConditionTrue {
			out = append(out, model.Notice{Code: model.CodeFailedSticky, Severity: model.SeverityWarning, Pod: primary.PodName,
				Message: "engine says Failed while Pod " + primary.PodName + " is Running and Ready again (Failed is sticky)",
				Evidence: []model.Evidence{{Kind: model.Observed, Text: "status.phase Failed"},
					{Kind: model.Observed, Text: "Pod " + primary.PodName + " Running, Ready=True"}}})
		}
	}
	return out
}

func slotPod(s *model.Slot) string {
	if s == nil {
		return ""
	}
	return s.PodName
}

func slotPodSummary(s *model.Slot) string {
	if s == nil || s.PodName == "" {
		return "(none linked)"
	}
	return s.PodName + ": " + podSummary(s.Pod)
}

// graceSeconds is how long a deleting Pod may take: deletionGracePeriodSeconds,
// else spec.terminationGracePeriodSeconds, else the Kubernetes default 30.
func graceSeconds(p *model.Pod) int64 {
	if g := p.GetDeletionGracePeriodSeconds(); g != nil {
		return *g
	}
	if g, ok := p.TerminationGracePeriodSeconds(); ok {
		return g
	}
	return 30
}

// stuckInfo reports a Pod stuck Terminating at now: its deletionTimestamp is
// older than grace + stuckAfter. (The API server sets deletionTimestamp to the
// request time plus grace, so this errs on the late side: never a false alarm.)
// next is when the Pod will become stuck, zero when it already is or never will.
func stuckInfo(p *model.Pod, now time.Time, stuckAfter time.Duration) (info *model.StuckInfo, next time.Time) {
	if p == nil || p.DeletionTimestamp == nil {
		return nil, time.Time{}
	}
	grace := graceSeconds(p)
	at := p.DeletionTimestamp.Add(time.Duration(grace)*time.Second + stuckAfter)
	if now.Before(at) {
		return nil, at
	}
	_, st := p.Main()
	initializing := st != nil && st.State.Waiting != nil && st.State.Waiting.Reason == "PodInitializing"
	return &model.StuckInfo{DeletingSince: p.DeletionTimestamp.Time, GraceSeconds: grace, PodInitializing: initializing}, time.Time{}
}

func stuckNotice(sl *model.Slot) model.Notice {
	s := sl.Stuck
	// deletionTimestamp is the request time plus the grace period: the
	// end of the grace period, not when the deletion was asked for.
	grace := strconv.FormatInt(s.GraceSeconds, 10) + "s"
	requested := s.DeletingSince.Add(-time.Duration(s.GraceSeconds) * time.Second)
	msg := "Pod " + sl.PodName + " stuck Terminating: deletion requested ~" + requested.UTC().Format(time.DateTime) +
		", its grace period (" + grace + ") ended " + s.DeletingSince.UTC().Format(time.DateTime)
	ev := []model.Evidence{{Kind: model.Observed, Text: "metadata.deletionTimestamp " + s.DeletingSince.UTC().Format(time.RFC3339) +
		": the end of the grace period (the API server sets it to the time of the request + " + grace + ")", At: timePtr(s.DeletingSince)}}
	if s.PodInitializing {
		msg += "; main container still waiting in PodInitializing"
		ev = append(ev, model.Evidence{Kind: model.Observed, Text: "main container state waiting, reason PodInitializing"})
	} else {
		ev = append(ev, model.Evidence{Kind: model.Observed, Text: "main container is not waiting in PodInitializing"})
	}
	if sl.Pod != nil && len(sl.Pod.Finalizers()) > 0 {
		ev = append(ev, model.Evidence{Kind: model.Observed, Text: "finalizers " + joinComma(sl.Pod.Finalizers())})
	}
	return model.Notice{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning, Pod: sl.PodName, Message: msg, Evidence: ev}
}

// objectStuck reports a sandbox object deleting for longer than stuckAfter while finalizers hold it.
func objectStuck(deleting *time.Time, finalizers []string, now time.Time, stuckAfter time.Duration) (*model.Notice, time.Time) {
	if deleting == nil || len(finalizers) == 0 {
		return nil, time.Time{}
	}
	at := deleting.Add(stuckAfter)
	if now.Before(at) {
		return nil, at
	}
	return &model.Notice{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning,
		Message: "sandbox object stuck Terminating since " + deleting.UTC().Format(time.DateTime) + " on finalizers " + joinComma(finalizers),
		Evidence: []model.Evidence{{Kind: model.Observed, Text: "metadata.deletionTimestamp " + deleting.UTC().Format(time.RFC3339), At: deleting},
			{Kind: model.Observed, Text: "metadata.finalizers " + joinComma(finalizers)}}}, time.Time{}
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
