package forensics

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// Restart timing forward from a block start (a liveness kill told from an OOM kill): an operator
// knows from business logs when the process blocked; the liveness probe's
// config says when the kubelet kills it after that. Compute forward, then
// compare with what the Pod recorded: fitting parameters to observed times
// proves nothing.

// DefaultTimeoutSeconds is the Kubernetes default of a probe's timeoutSeconds.
const DefaultTimeoutSeconds = 1

// restartAgreement is how close a prediction must be to count as agreeing,
// as the incident's three restarts did.
const restartAgreement = time.Second

// LivenessTiming is a container's liveness probe config as the prediction
// uses it, Kubernetes defaults applied.
type LivenessTiming struct {
	FailureThreshold int64    `json:"failureThreshold"`
	PeriodSeconds    int64    `json:"periodSeconds"`
	TimeoutSeconds   int64    `json:"timeoutSeconds"`
	GraceSeconds     int64    `json:"terminationGracePeriodSeconds"`
	GraceFromProbe   bool     `json:"graceFromProbe"`      // the probe's own grace, which wins over the Pod's
	Defaulted        []string `json:"defaulted,omitempty"` // fields left unset, read as their defaults
}

// interval is the time between two probe attempts of a blocked process.
// The kubelet's prober starts one attempt per periodSeconds tick and an
// attempt that gets no answer fails after timeoutSeconds; when that is
// longer than the period, the ticks that passed meanwhile are dropped but
// one, so the next attempt starts as soon as the previous one failed.
func (l LivenessTiming) interval() time.Duration {
	return time.Duration(max(l.PeriodSeconds, l.TimeoutSeconds)) * time.Second
}

// RestartCheck compares one block start with the termination the Pod
// recorded after it.
type RestartCheck struct {
	BlockStart time.Time `json:"blockStart"`
	// Predicted is the incident's formula: block start + failureThreshold ×
	// periodSeconds + terminationGracePeriodSeconds (SIGKILL of a process
	// that ignores SIGTERM).
	Predicted time.Time `json:"predicted"`
	// Earliest and Latest bound the kill given the probe's phase (the first
	// attempt after the block starts within one interval of it) and
	// timeoutSeconds (each attempt fails timeoutSeconds after it starts).
	// For exit 143 (SIGTERM honoured) Earliest is the earliest SIGTERM.
	Earliest time.Time `json:"earliest"`
	Latest   time.Time `json:"latest"`
	// The recorded termination this block start falls in, nil when the Pod
	// no longer records it.
	Recorded *RecordedTermination `json:"recorded,omitempty"`
	// Diff is observed − predicted, when observed; DiffSeconds the same in seconds.
	Diff        *time.Duration   `json:"-"`
	DiffSeconds *float64         `json:"diffSeconds,omitempty"`
	Agrees      bool             `json:"agreesWithin1s"`
	Fits        bool             `json:"fitsWindow"`
	Verdict     string           `json:"verdict"`
	Evidence    []model.Evidence `json:"evidence"`
}

// RecordedTermination is one termination a container status still records.
type RecordedTermination struct {
	Field      string    `json:"field"` // lastState.terminated or state.terminated
	Reason     string    `json:"reason"`
	ExitCode   int32     `json:"exitCode"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
}

// RestartExplanation is the answer of `sandscope explain restart`.
type RestartExplanation struct {
	Namespace    string                `json:"namespace"`
	Pod          string                `json:"pod"`
	UID          string                `json:"uid"`
	Container    string                `json:"container"`
	RestartCount int32                 `json:"restartCount"`
	Liveness     *LivenessTiming       `json:"liveness,omitempty"` // nil: no liveness probe
	Recorded     []RecordedTermination `json:"recorded"`
	Checks       []RestartCheck        `json:"checks"`
	Notes        []string              `json:"notes,omitempty"`
	Confirm      []string              `json:"confirm"`
}

// ErrNoContainer is returned when the Pod has no container of the name asked.
var ErrNoContainer = errors.New("no such container")

// LivenessTimingOf reads c's liveness probe with the Kubernetes defaults
// applied; ok is false when c has no liveness probe.
func LivenessTimingOf(pod *model.Pod, c *model.Container) (LivenessTiming, bool) {
	if c == nil || c.LivenessProbe == nil {
		return LivenessTiming{}, false
	}
	p := livenessParams(pod, c)
	t := LivenessTiming{FailureThreshold: p.failureThreshold, PeriodSeconds: p.period, GraceSeconds: p.grace,
		GraceFromProbe: p.graceFromProbe, Defaulted: p.defaulted, TimeoutSeconds: DefaultTimeoutSeconds}
	if c.LivenessProbe.TimeoutSeconds > 0 {
		t.TimeoutSeconds = int64(c.LivenessProbe.TimeoutSeconds)
	} else {
		t.Defaulted = append(t.Defaulted, "timeoutSeconds")
	}
	return t, true
}

// ExplainRestart predicts, for each block start, when a liveness kill would
// have ended the container, and compares it with the termination the Pod
// records for that run (lastState.terminated, or state.terminated for a
// container that is not restarted). events are the Pod's Events (may be
// empty: they expire); the first Unhealthy and the Killing of a run are
// shown beside the prediction as observed evidence. container "" picks the
// container with a recorded termination (OpenSandbox's main container
// first).
func ExplainRestart(pod *model.Pod, events []corev1.Event, container string, blockStarts []time.Time) (*RestartExplanation, error) {
	if pod == nil {
		return nil, errors.New("no Pod")
	}
	cs, err := restartContainer(pod, container)
	if err != nil {
		return nil, err
	}
	spec := containerSpec(pod, cs.Name)
	x := &RestartExplanation{Namespace: pod.Namespace, Pod: pod.Name, UID: string(pod.UID), Container: cs.Name,
		RestartCount: cs.RestartCount, Recorded: []RecordedTermination{}, Checks: []RestartCheck{}}
	r := &restartCase{pod: pod, cs: cs}
	x.Confirm = []string{
		fmt.Sprintf("kubectl describe pod -n %s %s", pod.Namespace, pod.Name),
		fmt.Sprintf("kubectl get events -n %s --field-selector involvedObject.name=%s", pod.Namespace, pod.Name),
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		x.Recorded = append(x.Recorded, recorded("lastState.terminated", t))
	}
	if t := cs.State.Terminated; t != nil {
		x.Recorded = append(x.Recorded, recorded("state.terminated", t))
	}
	switch {
	case cs.RestartCount > 1:
		x.Notes = append(x.Notes, fmt.Sprintf("restartCount %d: the Pod records only the last termination of the container (lastState.terminated); the %d before it are not recorded (their Killing Events, while they last, are)",
			cs.RestartCount, cs.RestartCount-1))
	case len(x.Recorded) == 0:
		x.Notes = append(x.Notes, "the container has no recorded termination (lastState.terminated and state.terminated are empty)")
	}
	podEvents, _ := splitEvents(pod, events)
	lt, hasProbe := LivenessTimingOf(pod, spec)
	if !hasProbe {
		x.Notes = append(x.Notes, "container "+cs.Name+" has no liveness probe: no liveness kill to predict")
		// An Event that says otherwise is contradicted by the spec: shown
		// as the claim it is, never used.
		for i := range podEvents {
			e := &podEvents[i]
			if livenessEvent(e) && eventForContainer(e, cs.Name, len(pod.Spec.Containers) == 1) {
				x.Notes = append(x.Notes, setAside(e, pod.Spec.NodeName, "the Pod's spec has no liveness probe on container "+cs.Name+", so its kubelet runs none and kills it for none").Text)
			}
		}
		return x, nil
	}
	x.Liveness = &lt
	r.podEvents = podEvents
	if len(podEvents) == 0 {
		x.Notes = append(x.Notes, "no Events recorded for the Pod (they expire after the API server's --event-ttl, 1h by default): the comparison rests on the recorded termination alone")
	}
	for _, b := range blockStarts {
		x.Checks = append(x.Checks, checkBlockStart(r, lt, b, x.Recorded))
	}
	// Every recorded termination is compared, or the report says why not.
	for i := range x.Recorded {
		t := &x.Recorded[i]
		if !slices.ContainsFunc(x.Checks, func(c RestartCheck) bool { return c.Recorded != nil && *c.Recorded == *t }) {
			x.Notes = append(x.Notes, fmt.Sprintf("%s (finished %s) was not compared: no --block-start falls inside its run (started %s)",
				t.Field, clockOrDash(t.FinishedAt), clockOrDash(t.StartedAt)))
		}
	}
	// The Killing Events, while they last, date the earlier liveness kills
	// the status no longer records.
	for i := range podEvents {
		e := &podEvents[i]
		if e.Reason == "Killing" && strings.Contains(e.Message, "failed liveness probe") && eventForContainer(e, cs.Name, len(pod.Spec.Containers) == 1) {
			first, last := EventSpan(e)
			if reportedFromOtherNode(e, pod.Spec.NodeName) {
				x.Notes = append(x.Notes, setAside(e, pod.Spec.NodeName, "the Pod runs on node "+textsafe.OrDash(pod.Spec.NodeName)+" and its kubelet records its Events from there").Text)
				continue
			}
			x.Notes = append(x.Notes, fmt.Sprintf("Killing Event \"failed liveness probe\" ×%d, first at %s, last at %s: the SIGTERMs of that many liveness kills, if the Event is the kubelet's — %s",
				eventCount(e), clock(first), clock(last), claimSource(e, pod.Spec.NodeName)))
		}
	}
	return x, nil
}

func recorded(field string, t *corev1.ContainerStateTerminated) RecordedTermination {
	return RecordedTermination{Field: field, Reason: t.Reason, ExitCode: t.ExitCode, StartedAt: t.StartedAt.Time, FinishedAt: t.FinishedAt.Time}
}

// restartContainer picks the container status to explain.
func restartContainer(pod *model.Pod, name string) (*model.ContainerStatus, error) {
	sts := pod.Status.ContainerStatuses
	if name != "" {
		for i := range sts {
			if sts[i].Name == name {
				return &sts[i], nil
			}
		}
		names := make([]string, 0, len(pod.Spec.Containers))
		for _, c := range pod.Spec.Containers {
			names = append(names, c.Name)
		}
		return nil, fmt.Errorf("%w %q in Pod %s/%s (containers: %s)", ErrNoContainer, name, pod.Namespace, pod.Name, strings.Join(names, ", "))
	}
	ended := func(s *model.ContainerStatus) bool {
		return s.RestartCount > 0 || s.LastTerminationState.Terminated != nil || s.State.Terminated != nil
	}
	for i := range sts {
		if sts[i].Name == osv1.ContainerSandbox && ended(&sts[i]) {
			return &sts[i], nil
		}
	}
	for i := range sts {
		if ended(&sts[i]) {
			return &sts[i], nil
		}
	}
	for i := range sts {
		if sts[i].Name == osv1.ContainerSandbox {
			return &sts[i], nil
		}
	}
	if len(sts) > 0 {
		return &sts[0], nil
	}
	return nil, fmt.Errorf("Pod %s/%s has no container status yet", pod.Namespace, pod.Name)
}

// checkBlockStart computes the prediction for one block start B:
//
//	first failed attempt recorded in [B + timeout, B + interval + timeout)
//	SIGTERM at the failureThreshold-th failure: + (failureThreshold − 1) × interval
//	SIGKILL when the grace period ends:         + terminationGracePeriodSeconds
//
// so a kill of a process that ignores SIGTERM lands in
// [B + timeout + (T−1)·interval + grace, B + timeout + T·interval + grace).
// The incident's formula B + T × period + grace is the point prediction; it
// lies in that window whenever timeoutSeconds ≤ periodSeconds.
func checkBlockStart(r *restartCase, lt LivenessTiming, b time.Time, rec []RecordedTermination) RestartCheck {
	sec := func(n int64) time.Duration { return time.Duration(n) * time.Second }
	iv := lt.interval()
	to, grace, thr := sec(lt.TimeoutSeconds), sec(lt.GraceSeconds), time.Duration(lt.FailureThreshold)
	termFrom := b.Add(to + (thr-1)*iv) // earliest SIGTERM
	termTo := b.Add(to + thr*iv)       // latest SIGTERM
	c := RestartCheck{BlockStart: b, Predicted: b.Add(thr*sec(lt.PeriodSeconds) + grace),
		Earliest: termFrom.Add(grace), Latest: termTo.Add(grace)}
	c.Evidence = append(c.Evidence, model.Evidence{Kind: model.Inferred, At: timePtr(c.Predicted),
		Text: fmt.Sprintf("predicted kill = block start + failureThreshold × periodSeconds + terminationGracePeriodSeconds = %s + %d × %ds + %ds = %s",
			clock(b), lt.FailureThreshold, lt.PeriodSeconds, lt.GraceSeconds, clock(c.Predicted))},
		model.Evidence{Kind: model.Inferred,
			Text: fmt.Sprintf("window: the first attempt after the block starts within %s of it and fails %ds later (timeoutSeconds), the kubelet sends SIGTERM at failure number %d and SIGKILL %ds after: SIGTERM %s–%s, SIGKILL %s–%s",
				iv, lt.TimeoutSeconds, lt.FailureThreshold, lt.GraceSeconds, clock(termFrom), clock(termTo), clock(c.Earliest), clock(c.Latest))})

	// The recorded run the block start falls in.
	for i := range rec {
		t := &rec[i]
		if (t.StartedAt.IsZero() || !b.Before(t.StartedAt)) && (t.FinishedAt.IsZero() || b.Before(t.FinishedAt)) {
			c.Recorded = t
			break
		}
	}
	r.term = nil
	if c.Recorded != nil {
		r.term = &corev1.ContainerStateTerminated{Reason: c.Recorded.Reason, ExitCode: c.Recorded.ExitCode}
		r.term.StartedAt.Time, r.term.FinishedAt.Time = c.Recorded.StartedAt, c.Recorded.FinishedAt
	}
	evs, killing := restartEventEvidence(r, b, termFrom, termTo)
	c.Evidence = append(c.Evidence, evs...)

	switch {
	case c.Recorded == nil && killing != nil:
		c.Verdict = fmt.Sprintf("not recorded in the status (the Pod keeps only the last termination), but a liveness Killing Event (an Event's claim) at %s lies inside the predicted SIGTERM window: consistent with a liveness kill after this block start (inferred)", clock(*killing))
		return c
	case c.Recorded == nil:
		c.Verdict = "not recorded: no recorded run contains the block start (the Pod keeps only the last termination); compare with the Killing Events while they last"
		return c
	case c.Recorded.FinishedAt.IsZero():
		c.Verdict = "the recorded termination has no finishedAt: nothing to compare"
		return c
	}
	obs := c.Recorded.FinishedAt
	d := obs.Sub(c.Predicted)
	c.Diff = &d
	ds := d.Seconds()
	c.DiffSeconds = &ds
	c.Evidence = append(c.Evidence, model.Evidence{Kind: model.Observed, At: &obs,
		Text: fmt.Sprintf("%s: reason %s, exit %d, started %s, finished %s", c.Recorded.Field, textsafe.OrDash(c.Recorded.Reason), c.Recorded.ExitCode,
			clockOrDash(c.Recorded.StartedAt), clock(obs))})
	slack := restartAgreement
	c.Agrees = absDuration(d) <= slack
	switch c.Recorded.ExitCode {
	case exitSIGTERM:
		// SIGTERM honoured: it stops anywhere between the signal and the end of the grace period.
		c.Fits = !obs.Before(termFrom.Add(-slack)) && !obs.After(c.Latest.Add(slack))
	default:
		c.Fits = !obs.Before(c.Earliest.Add(-slack)) && !obs.After(c.Latest.Add(slack))
	}
	what := "a liveness kill after this block start"
	switch {
	case c.Recorded.Reason == "OOMKilled":
		c.Verdict = "recorded OOMKilled (observed): the kernel's OOM killer ended it, not the liveness probe, whatever the timing"
		c.Agrees, c.Fits = false, false
	case c.Agrees:
		c.Verdict = fmt.Sprintf("agrees within 1 s (%s): consistent with %s (inferred)", signedSeconds(d), what)
	case c.Fits:
		c.Verdict = fmt.Sprintf("%s from the formula, inside the window the probe's phase and timeoutSeconds allow: consistent with %s (inferred)", signedSeconds(d), what)
	default:
		c.Verdict = fmt.Sprintf("does not fit (%s): not %s, or the block start is wrong (inferred)", signedSeconds(d), what)
	}
	switch c.Recorded.ExitCode {
	case exitSIGKILL:
		c.Evidence = append(c.Evidence, model.Evidence{Kind: model.Inferred, Text: "exit 137: SIGKILL; a liveness kill ends so when the process ignores SIGTERM until the grace period ends (a blocked process)"})
	case exitSIGTERM:
		c.Evidence = append(c.Evidence, model.Evidence{Kind: model.Inferred, Text: "exit 143: SIGTERM honoured; the process may stop anywhere between the SIGTERM and the end of the grace period, and shutdown logs are expected"})
	}
	return c
}

// restartEventEvidence: the Unhealthy and Killing Events around a block
// start, observed, beside the predicted first failure and SIGTERM.
func restartEventEvidence(r *restartCase, b, termFrom, termTo time.Time) (out []model.Evidence, killingInWindow *time.Time) {
	var firstUnhealthy, killing []time.Time
	var unhealthyEv, killingEv *corev1.Event
	node := r.pod.Spec.NodeName
	for i := range r.podEvents {
		e := &r.podEvents[i]
		if !livenessEvent(e) || !eventForContainer(e, r.cs.Name, len(r.pod.Spec.Containers) == 1) {
			continue
		}
		if reportedFromOtherNode(e, node) {
			out = append(out, setAside(e, node, "the Pod runs on node "+textsafe.OrDash(node)+" and its kubelet records its Events from there"))
			continue
		}
		first, last := EventSpan(e)
		switch e.Reason {
		case "Unhealthy":
			if !last.Before(b) {
				firstUnhealthy = append(firstUnhealthy, first)
				unhealthyEv = e
			}
		case "Killing":
			killing = append(killing, first, last)
			killingEv = e
		}
	}
	if len(firstUnhealthy) > 0 {
		f := slices.MinFunc(firstUnhealthy, func(a, b time.Time) int { return a.Compare(b) })
		ev := claim(unhealthyEv, node, fmt.Sprintf("first Unhealthy Event \"Liveness probe failed\" at or after the block start: %s (%s after it)", clock(f), signedSeconds(f.Sub(b))))
		ev.At = &f
		out = append(out, ev)
		if f.Before(b) {
			out = append(out, model.Evidence{Kind: model.Inferred, Text: "the Unhealthy Event began before the block start: the kubelet aggregated failures of an earlier run into it, so its first time is not this block's"})
		}
	}
	var near []time.Time
	for _, k := range killing {
		if !k.Before(termFrom.Add(-restartAgreement)) && !k.After(termTo.Add(restartAgreement)) {
			near = append(near, k)
		}
	}
	if len(near) > 0 {
		killingInWindow = &near[0]
		ev := claim(killingEv, node, fmt.Sprintf("Killing Event \"failed liveness probe\" at %s", clock(near[0])))
		ev.At = &near[0]
		out = append(out, ev, model.Evidence{Kind: model.Inferred, Text: "the Killing Event lies inside the predicted SIGTERM window"})
	} else if len(killing) > 0 {
		times := make([]string, 0, len(killing))
		for _, k := range killing {
			times = append(times, clock(k))
		}
		slices.Sort(times)
		times = slices.Compact(times)
		out = append(out, claim(killingEv, node, "Killing Event(s) \"failed liveness probe\" at "+strings.Join(times, ", ")),
			model.Evidence{Kind: model.Inferred, Text: "none of them lies inside the predicted SIGTERM window"})
	}
	return out, killingInWindow
}

// livenessEvent: an Event a kubelet records for a failed liveness probe
// (Unhealthy) or the kill it leads to (Killing).
func livenessEvent(e *corev1.Event) bool {
	return e.Reason == "Unhealthy" && strings.Contains(e.Message, "Liveness probe failed") ||
		e.Reason == "Killing" && strings.Contains(e.Message, "failed liveness probe")
}
