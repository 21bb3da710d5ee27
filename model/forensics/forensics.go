// Package forensics explains what happened to a Pod from what the API still
// records of it: its status, its Events, its node and its siblings. Why a
// container restarted or was killed (Classify: OOM, liveness probe,
// eviction, or unexplained), when a liveness kill lands after the process
// blocked (ExplainRestart, for `sandscope explain restart`), and whether a
// sandbox's Pod was re-created under the same name (RecreatedNotice,
// RecreatedFromEvents).
//
// One symptom, "the container restarted", has three explanations with their
// own traces. A liveness kill happens at a moment computable from the Pod's
// own probe config; an OOM kill is SIGKILL from the kernel with no fixed
// offset; eviction and node trouble show on the Pod's status and on the
// node. Every Evidence says whether it was read from a status or spec
// (observed), computed (inferred) or said by an Event (claimed: whoever may
// create Events writes them, so they corroborate and never decide; see
// claims.go), and a restart nothing explains says what was checked and
// which kubectl command confirms it.
package forensics

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// Kubernetes defaults applied when a field is unset.
const (
	DefaultFailureThreshold = 3
	DefaultPeriodSeconds    = 10
	DefaultGraceSeconds     = 30
)

// How far around a termination an Event or a node condition change still
// counts as "around the termination". Events carry second resolution and the
// kubelet records Killing before the container actually stops.
const (
	eventSlack      = 2 * time.Second
	nodeTroubleNear = 5 * time.Minute
	// nodeFirstReady: a node's Ready transition this soon after it was
	// created is its registration, not a recovery from NotReady.
	nodeFirstReady = 2 * time.Minute
	// nodeOOMNear: a kernel OOM kill and the container's end are
	// recorded by different components, seconds apart at most.
	nodeOOMNear = 10 * time.Second
)

// Exit codes of the two signals that end a container from outside.
const (
	exitSIGKILL = 137 // 128 + 9: killed (OOM, or the end of the grace period)
	exitSIGTERM = 143 // 128 + 15: SIGTERM honoured
)

// Needed reports whether a Pod has something to explain: a container
// that restarted or has a last termination, a main container killed by a
// signal, or an eviction. The sweep fetches Events only for such Pods.
func Needed(pod *model.Pod) bool {
	if pod == nil {
		return false
	}
	if podEvicted(pod) || disruptionTarget(pod) != nil {
		return true
	}
	for i := range pod.Status.ContainerStatuses {
		if _, ok := terminationOf(&pod.Status.ContainerStatuses[i]); ok {
			return true
		}
	}
	return false
}

// terminationOf picks the termination a container status asks to explain: its
// last termination (a restart), or, for a container that is not restarted
// (restartPolicy Never, the engine's default), its current termination when a
// signal or the OOM killer ended it. A clean exit of a dead Pod is not a
// restart question; POD_DEAD already reports it.
func terminationOf(cs *model.ContainerStatus) (term *corev1.ContainerStateTerminated, ok bool) {
	if t := cs.LastTerminationState.Terminated; t != nil {
		return t, true
	}
	if cs.RestartCount > 0 {
		return nil, true // restarted, but the kubelet kept no last state
	}
	if t := cs.State.Terminated; t != nil && (t.Reason == "OOMKilled" || t.ExitCode == exitSIGKILL || t.ExitCode == exitSIGTERM) {
		return t, true
	}
	return nil, false
}

// Classify explains every restart (or signal death) of pod's containers from
// the Pod's status, its Events (Pod Events and, when fetched, Events of its
// node: pass both in events), its node (may be nil) and its siblings (other
// Pods of the same engine/pool; those that differ in image or liveness probe
// are not used as a control). It returns one RESTART_* notice per container
// with something to explain, plus one RESTART_EVICTED for an evicted Pod
// whose containers left no termination to explain.
func Classify(pod *model.Pod, events []corev1.Event, node *corev1.Node, siblings []*model.Pod) []model.Notice {
	if pod == nil {
		return nil
	}
	podEvents, nodeEvents := splitEvents(pod, events)
	var out []model.Notice
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		term, ok := terminationOf(cs)
		if !ok {
			continue
		}
		r := &restartCase{pod: pod, cs: cs, term: term, spec: containerSpec(pod, cs.Name),
			podEvents: podEvents, nodeEvents: nodeEvents, node: node, hadEvents: len(events) > 0}
		n := r.classify()
		n.Evidence = append(n.Evidence, siblingEvidence(pod, cs.Name, r.spec, siblings)...)
		out = append(out, n)
	}
	if len(out) == 0 && (podEvicted(pod) || disruptionTarget(pod) != nil) {
		r := &restartCase{pod: pod, podEvents: podEvents, nodeEvents: nodeEvents, node: node, hadEvents: len(events) > 0}
		out = append(out, r.evictedWithoutTermination())
	}
	return out
}

// restartCase is one container termination being explained.
type restartCase struct {
	pod        *model.Pod
	cs         *model.ContainerStatus // nil for a Pod-level eviction
	term       *corev1.ContainerStateTerminated
	spec       *model.Container
	podEvents  []corev1.Event
	nodeEvents []corev1.Event
	node       *corev1.Node
	hadEvents  bool
}

func (r *restartCase) classify() model.Notice {
	live := r.liveness()
	ev := r.evictionEvidence()
	// OOM is concluded only from what reports one: the kubelet writes
	// OOMKilled when the kernel's cgroup OOM killer ends the main process,
	// and the node reports kernel OOM kills. A SIGKILL with reason Error is
	// not an OOM kill the kubelet saw; it is what a liveness kill of a
	// process that ignored SIGTERM looks like once its Events expired.
	nodeOOM, oomAside := r.nodeOOMEvidence()
	n := r.decide(live, ev, nodeOOM)
	// The Events the spec or the status contradict are shown, never used.
	n.Evidence = append(n.Evidence, live.setAside...)
	n.Evidence = append(n.Evidence, oomAside...)
	n.Evidence = append(n.Evidence, ev.aside...)
	return n
}

// decide picks the verdict. Every branch stands on the Pod's spec and
// status (or the Node's status); Events only add to one that does.
func (r *restartCase) decide(live *livenessFacts, ev evictionFacts, nodeOOM []model.Evidence) model.Notice {
	eviction := ev.evidence()
	sigkill := r.term != nil && r.term.ExitCode == exitSIGKILL
	switch {
	case r.term != nil && r.term.Reason == "OOMKilled":
		return r.oom(nil, live, eviction)
	case live.killing != nil || live.fitsWithoutKilling():
		return r.livenessNotice(live, eviction)
	case sigkill && len(nodeOOM) > 0:
		return r.oom(nodeOOM, live, eviction)
	case ev.grounded():
		return r.evicted(eviction, live)
	case sigkill && r.spec != nil && r.spec.LivenessProbe != nil && !r.livenessRuledOut(live):
		return r.livenessInferred(live)
	case sigkill:
		return r.sigkillUnexplained(live)
	}
	return r.unexplained(r.checkedLines(live))
}

// livenessRuledOut: the Pod's Events still cover the terminated run (an
// Event of this Pod from before the termination is still there, so the
// newer Unhealthy/Killing ones would be too) and none of them is a failed
// liveness probe.
func (r *restartCase) livenessRuledOut(l *livenessFacts) bool {
	if len(l.unhealthy) > 0 || l.killing != nil {
		return false
	}
	return r.eventsCoverRun()
}

// eventsCoverRun reports whether Events of this Pod reach back to before
// its termination. Events expire (--event-ttl, 1h by default) oldest
// first, so one older than the termination still being there means the
// termination's own Events have not expired.
func (r *restartCase) eventsCoverRun() bool {
	at := r.finishedAt()
	if at == nil {
		return false
	}
	for i := range r.podEvents {
		if reportedFromOtherNode(&r.podEvents[i], r.pod.Spec.NodeName) {
			continue // not the Pod's kubelet's: says nothing of what it recorded
		}
		if first, _ := EventSpan(&r.podEvents[i]); !first.IsZero() && !first.After(*at) {
			return true
		}
	}
	return false
}

// nodeOOMEvidence: the node reported a kernel OOM kill around the
// termination (the kubelet's SystemOOM Event, node-problem-detector's
// OOMKilling). They corroborate a SIGKILL the status records; those
// recorded outside the namespace node components write to, or naming
// another host as their reporter, are set aside.
func (r *restartCase) nodeOOMEvidence() (claims, aside []model.Evidence) {
	at := r.finishedAt()
	if at == nil {
		return nil, nil
	}
	node := r.pod.Spec.NodeName
	for i := range r.nodeEvents {
		e := &r.nodeEvents[i]
		if e.Reason != "SystemOOM" && e.Reason != "OOMKilling" {
			continue
		}
		first, last := EventSpan(e)
		if !overlaps(first, last, at.Add(-nodeOOMNear), at.Add(nodeOOMNear)) {
			continue
		}
		if why := nodeEventSetAside(e, node); why != "" {
			aside = append(aside, setAside(e, node, why))
			continue
		}
		claims = append(claims, claim(e, node, fmt.Sprintf("node Event %s at %s (%s from the termination): %s", e.Reason, clock(last), signedSeconds(last.Sub(*at)), oneLineMsg(e.Message))))
	}
	return claims, aside
}

// nodeEventSetAside says why an Event about the Pod's node cannot be the
// node's own: recorded where node components do not write, or naming
// another host as its reporter. "" when nothing contradicts it.
func nodeEventSetAside(e *corev1.Event, node string) string {
	if e.Namespace != nodeEventNamespace {
		return fmt.Sprintf("recorded in namespace %q; the kubelet and the node controllers record Events about a Node in %q", e.Namespace, nodeEventNamespace)
	}
	if reportedFromOtherNode(e, node) {
		_, host := reporter(e)
		return fmt.Sprintf("it names host %q as its reporter, not node %s", host, node)
	}
	return ""
}

// ---- liveness --------------------------------------------------------------

// probeParams are the liveness parameters the prediction uses, with where each
// came from (the Pod's spec or a Kubernetes default).
type probeParams struct {
	failureThreshold, period, grace int64
	graceFromProbe                  bool
	defaulted                       []string
}

func livenessParams(pod *model.Pod, c *model.Container) probeParams {
	p := probeParams{failureThreshold: DefaultFailureThreshold, period: DefaultPeriodSeconds, grace: DefaultGraceSeconds}
	var probe *corev1.Probe
	if c != nil {
		probe = c.LivenessProbe
	}
	if probe != nil && probe.FailureThreshold > 0 {
		p.failureThreshold = int64(probe.FailureThreshold)
	} else {
		p.defaulted = append(p.defaulted, "failureThreshold")
	}
	if probe != nil && probe.PeriodSeconds > 0 {
		p.period = int64(probe.PeriodSeconds)
	} else {
		p.defaulted = append(p.defaulted, "periodSeconds")
	}
	switch {
	case probe != nil && probe.TerminationGracePeriodSeconds != nil:
		// A probe-level grace overrides the Pod's for liveness kills.
		p.grace, p.graceFromProbe = *probe.TerminationGracePeriodSeconds, true
	default:
		if g, ok := pod.TerminationGracePeriodSeconds(); ok {
			p.grace = g
		} else {
			p.defaulted = append(p.defaulted, "terminationGracePeriodSeconds")
		}
	}
	return p
}

type livenessFacts struct {
	unhealthy     []corev1.Event // "Liveness probe failed" Events of this run
	killing       *corev1.Event  // "failed liveness probe, will be restarted"
	firstFailure  time.Time      // earliest Unhealthy of the run
	firstExact    bool           // false when an aggregated Event spans runs
	seenFirst     time.Time      // earliest time on the Unhealthy Events as written
	lastFailure   time.Time
	failures      int32
	params        probeParams
	predictedTerm time.Time // SIGTERM: first failure + (threshold-1) x period
	predictedKill time.Time // end of grace: + grace
	fit           bool      // actual termination within tolerance of the prediction
	diff          time.Duration
	computed      bool
	// setAside: liveness Events the spec or the status contradict (no
	// probe, another node, a kill the termination cannot follow).
	setAside []model.Evidence
}

// fitsWithoutKilling: Unhealthy Events and a signal exit whose time matches
// the prediction, though the Killing Event itself is gone (expired, or lost).
func (l *livenessFacts) fitsWithoutKilling() bool {
	return len(l.unhealthy) > 0 && l.computed && l.fit
}

func (r *restartCase) liveness() *livenessFacts {
	l := &livenessFacts{params: livenessParams(r.pod, r.spec)}
	if r.cs == nil {
		return l
	}
	from, to := r.runWindow()
	node := r.pod.Spec.NodeName
	hasProbe := r.spec != nil && r.spec.LivenessProbe != nil
	for i := range r.podEvents {
		e := &r.podEvents[i]
		if !eventForContainer(e, r.cs.Name, len(r.pod.Spec.Containers) == 1) {
			continue
		}
		first, last := EventSpan(e)
		if !overlaps(first, last, from, to) {
			continue
		}
		unhealthy := e.Reason == "Unhealthy" && strings.Contains(e.Message, "Liveness probe failed")
		killing := e.Reason == "Killing" && strings.Contains(e.Message, "failed liveness probe")
		switch {
		case !unhealthy && !killing:
			continue
		case !hasProbe:
			l.setAside = append(l.setAside, setAside(e, node, fmt.Sprintf("container %s has no liveness probe in the Pod's spec, so its kubelet runs none and kills it for none", r.cs.Name)))
			continue
		case reportedFromOtherNode(e, node):
			_, host := reporter(e)
			l.setAside = append(l.setAside, setAside(e, node, fmt.Sprintf("the Pod runs on node %s and its kubelet records its Events from there, not from %q", textsafe.OrDash(node), host)))
			continue
		case killing:
			if why := r.killingContradicted(e, l.params); why != "" {
				l.setAside = append(l.setAside, setAside(e, node, why))
				continue
			}
		}
		switch {
		case unhealthy:
			l.unhealthy = append(l.unhealthy, *e)
		case l.killing == nil || last.After(EventLast(l.killing)):
			ev := *e
			l.killing = &ev
		}
	}
	if len(l.unhealthy) == 0 && l.killing == nil {
		return l
	}
	l.firstExact = len(l.unhealthy) > 0
	if l.killing != nil && len(l.unhealthy) == 0 {
		// The kubelet kills at the threshold failure: the Killing time is
		// the last failure.
		l.lastFailure = EventLast(l.killing)
	}
	for i := range l.unhealthy {
		first, last := EventSpan(&l.unhealthy[i])
		l.failures += eventCount(&l.unhealthy[i])
		if l.seenFirst.IsZero() || first.Before(l.seenFirst) {
			l.seenFirst = first
		}
		if !from.IsZero() && first.Before(from.Add(-eventSlack)) {
			// The kubelet aggregated this run's failures into an Event that
			// began in an earlier run: its first time is not this run's.
			l.firstExact = false
			first = time.Time{}
		}
		if !first.IsZero() && (l.firstFailure.IsZero() || first.Before(l.firstFailure)) {
			l.firstFailure = first
		}
		if last.After(l.lastFailure) {
			l.lastFailure = last
		}
	}
	p := l.params
	thresholdAfter := time.Duration(p.failureThreshold-1) * time.Duration(p.period) * time.Second
	if l.firstFailure.IsZero() {
		// Only the last failure of the run is known; it is the threshold one
		// when the kubelet killed at it, so count back to the first.
		l.firstFailure = l.lastFailure.Add(-thresholdAfter)
	}
	l.predictedTerm = l.firstFailure.Add(thresholdAfter)
	l.predictedKill = l.predictedTerm.Add(time.Duration(p.grace) * time.Second)
	if r.term != nil && !r.term.FinishedAt.IsZero() {
		l.computed = true
		actual := r.term.FinishedAt.Time
		tol := time.Duration(p.period) * time.Second
		l.diff = actual.Sub(l.predictedKill)
		if r.term.ExitCode == exitSIGTERM {
			// SIGTERM honoured: it stops anywhere between the signal and the
			// end of the grace period.
			l.fit = !actual.Before(l.predictedTerm.Add(-tol)) && !actual.After(l.predictedKill.Add(tol))
		} else {
			l.fit = absDuration(l.diff) <= tol
		}
	}
	return l
}

// killGraceSlack: how late after the end of the grace period a killed
// container may still be recorded as finished (second-resolution times,
// the runtime's stop).
const killGraceSlack = 10 * time.Second

// killingContradicted says why a liveness Killing Event cannot be the
// kubelet's kill of the run the status records: the kubelet sends SIGTERM
// when it records Killing and SIGKILL when the grace period ends, so the
// container finishes in between. "" when the status allows it.
func (r *restartCase) killingContradicted(e *corev1.Event, p probeParams) string {
	at := r.finishedAt()
	if at == nil {
		return ""
	}
	k := EventLast(e)
	latest := k.Add(time.Duration(p.grace)*time.Second + killGraceSlack)
	switch {
	case at.Before(k.Add(-eventSlack)):
		return fmt.Sprintf("the status records the container finished at %s, %s before this kill", clock(*at), duration(k.Sub(*at)))
	case at.After(latest):
		return fmt.Sprintf("the status records the container finished at %s, %s after this kill, later than its %ds grace period allows", clock(*at), duration(at.Sub(k)), p.grace)
	}
	return ""
}

func (r *restartCase) livenessNotice(l *livenessFacts, eviction []model.Evidence) model.Notice {
	n := r.notice(model.CodeRestartLiveness)
	p := l.params
	at := r.finishedAt()
	n.Message = fmt.Sprintf("%s: killed by its liveness probe%s", r.subject(), r.exitSuffix())
	switch {
	case l.computed && r.term.ExitCode == exitSIGTERM:
		n.Message += fmt.Sprintf(" at %s (SIGTERM predicted %s, %s; grace ends %s)", clock(*at), clock(l.predictedTerm), signedSeconds((*at).Sub(l.predictedTerm)), clock(l.predictedKill))
	case l.computed:
		n.Message += fmt.Sprintf(" at %s (predicted %s, %s)", clock(*at), clock(l.predictedKill), signedSeconds(l.diff))
	}
	if len(l.unhealthy) == 0 {
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred, At: timePtr(l.firstFailure),
			Text: fmt.Sprintf("no Unhealthy Event for this run (expired?): the Killing time is taken as the threshold failure, so the first failure = Killing − (failureThreshold−1) × periodSeconds = %s", clock(l.firstFailure))})
	} else {
		ev := claim(&l.unhealthy[0], r.pod.Spec.NodeName, fmt.Sprintf("%d Unhealthy Event(s) \"Liveness probe failed\" overlapping this run (%d failed probe(s) counted), first at %s, last at %s: %s",
			len(l.unhealthy), l.failures, clock(l.seenFirst), clock(l.lastFailure), oneLineMsg(l.unhealthy[0].Message)))
		ev.At = timePtr(l.seenFirst)
		n.Evidence = append(n.Evidence, ev)
		if !l.firstExact {
			n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred, At: timePtr(l.firstFailure),
				Text: fmt.Sprintf("the Unhealthy Event was aggregated across runs (it began before this run started), so this run's first failure is taken as last failure − (failureThreshold−1) × periodSeconds = %s", clock(l.firstFailure))})
		}
	}
	if l.killing != nil {
		n.Evidence = append(n.Evidence, claim(l.killing, r.pod.Spec.NodeName,
			fmt.Sprintf("Killing Event at %s: %s", clock(EventLast(l.killing)), oneLineMsg(l.killing.Message))))
	} else {
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
			Text: "no Killing Event for this run (expired or not recorded); the kill is inferred from the failed probes and the timing"})
	}
	if r.term != nil {
		n.Evidence = append(n.Evidence, r.lastStateEvidence())
	}
	n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Observed, Text: probeConfigText(p)},
		model.Evidence{Kind: model.Inferred, Text: fmt.Sprintf("the verdict stands on the Pod's spec (a liveness probe on container %s) and status (its termination); the Events only corroborate it: anyone allowed to create Events in namespace %s writes them, reporting fields included",
			r.cs.Name, r.pod.Namespace)})
	if l.computed {
		ft, per, gr := p.failureThreshold, p.period, p.grace
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred, At: timePtr(l.predictedKill),
			Text: fmt.Sprintf("predicted restart = first failure + (failureThreshold − 1) × periodSeconds + terminationGracePeriodSeconds = %s + (%d − 1) × %ds + %ds = %s; actual termination %s; difference %s (tolerance ±%ds)",
				clock(l.firstFailure), ft, per, gr, clock(l.predictedKill), clock(*at), signedSeconds(l.diff), per)})
		verdict := "fits"
		if !l.fit {
			verdict = "does NOT fit"
		}
		switch r.term.ExitCode {
		case exitSIGTERM:
			n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
				Text: fmt.Sprintf("exit 143: SIGTERM honoured, so it may stop anywhere between the signal at first failure + (failureThreshold − 1) × periodSeconds = %s and the end of the grace period (%s); actual − signal = %s: the timing %s; shutdown logs are expected",
					clock(l.predictedTerm), clock(l.predictedKill), signedSeconds((*at).Sub(l.predictedTerm)), verdict)})
		case exitSIGKILL:
			n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
				Text: fmt.Sprintf("exit 137: SIGTERM ignored (a blocked process), killed when the grace period ended: the timing %s", verdict)})
		default:
			n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
				Text: fmt.Sprintf("exit %d: the timing %s the liveness formula", r.term.ExitCode, verdict)})
		}
	}
	n.Evidence = append(n.Evidence, eviction...)
	if l.killing == nil {
		n.Message += " (inferred: no Killing Event)"
		r.inferredVerdict(&n, "liveness kill")
	}
	return n
}

func probeConfigText(p probeParams) string {
	grace := fmt.Sprintf("terminationGracePeriodSeconds %d", p.grace)
	if p.graceFromProbe {
		grace += " (the probe's own, overriding the Pod's)"
	}
	s := fmt.Sprintf("liveness probe: failureThreshold %d, periodSeconds %d; %s", p.failureThreshold, p.period, grace)
	if len(p.defaulted) > 0 {
		s += " (Kubernetes defaults for unset " + strings.Join(p.defaulted, ", ") + ")"
	}
	return s
}

// ---- OOM ---------------------------------------------------------------------

// oom explains an OOM kill: observed when the kubelet recorded OOMKilled
// (nodeOOM nil), inferred from the node's kernel OOM report otherwise (the
// victim it names may be another process of the Pod).
func (r *restartCase) oom(nodeOOM []model.Evidence, l *livenessFacts, eviction []model.Evidence) model.Notice {
	n := r.notice(model.CodeRestartOOM)
	observed := nodeOOM == nil
	limit := ""
	if r.spec != nil && r.spec.MemoryLimit != nil {
		limit = r.spec.MemoryLimit.String()
	}
	if observed {
		n.Message = fmt.Sprintf("%s: OOMKilled%s", r.subject(), r.exitSuffix())
	} else {
		n.Message = fmt.Sprintf("%s: SIGKILL%s", r.subject(), r.exitSuffix())
	}
	if at := r.finishedAt(); at != nil {
		n.Message += " at " + clock(*at)
	}
	if !observed {
		n.Message += ", the node reported a kernel OOM kill at that moment (inferred)"
	}
	if limit != "" {
		n.Message += ", memory limit " + limit
	}
	n.Evidence = append(n.Evidence, r.lastStateEvidence())
	if limit != "" {
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Observed, Text: "memory limit " + limit})
	} else {
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Observed, Text: "no memory limit set"},
			model.Evidence{Kind: model.Inferred, Text: "without a container memory limit, the kill came from node memory pressure or a cgroup above the container"})
	}
	if !observed {
		n.Evidence = append(n.Evidence, nodeOOM...)
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
			Text: fmt.Sprintf("exit 137 = SIGKILL; reason %q is not OOMKilled, so the kubelet did not see the container's main process OOM-killed: the node's OOM kill at the same moment is the explanation, but its victim may be another process", r.term.Reason)})
	}
	n.Evidence = append(n.Evidence, r.noLivenessKillEvidence(l)...)
	n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
		Text: "an OOM kill is SIGKILL from the kernel: no shutdown logs are expected and there is no fixed offset to predict its time"})
	n.Evidence = append(n.Evidence, eviction...)
	if !observed {
		r.inferredVerdict(&n, "OOM kill (node-level evidence)")
	}
	return n
}

// livenessInferred: exit 137 with reason Error, a liveness probe configured,
// and no Event left that would say more. A liveness kill of a process that
// ignores SIGTERM (a blocked one, as in the incident) ends exactly so; OOM
// is not concluded, since the kubelet reports a cgroup OOM kill as OOMKilled.
func (r *restartCase) livenessInferred(l *livenessFacts) model.Notice {
	n := r.notice(model.CodeRestartLiveness)
	p := l.params
	n.Message = fmt.Sprintf("%s: SIGKILL", r.subject()) + r.exitSuffix()
	if at := r.finishedAt(); at != nil {
		n.Message += " at " + clock(*at)
	}
	n.Message += ", most likely its liveness probe (inferred; not OOM: the kubelet would have recorded OOMKilled)"
	n.Evidence = append(n.Evidence, r.lastStateEvidence(), model.Evidence{Kind: model.Observed, Text: probeConfigText(p)})
	n.Evidence = append(n.Evidence, r.noLivenessKillEvidence(l)...)
	n.Evidence = append(n.Evidence,
		model.Evidence{Kind: model.Inferred, Text: fmt.Sprintf("exit 137 = SIGKILL with reason %q, not OOMKilled: the kubelet reports a cgroup OOM kill of the main process as OOMKilled, so OOM is not concluded", r.term.Reason)},
		model.Evidence{Kind: model.Inferred, Text: fmt.Sprintf("a liveness kill sends SIGTERM, then SIGKILL when the grace period (%ds) ends: exit 137 means the process did not stop on SIGTERM, as a blocked process does", p.grace)},
		model.Evidence{Kind: model.Inferred, Text: fmt.Sprintf("with the time the process blocked (business logs), sandscope explain restart -n %s %s --block-start TIME predicts the kill: block start + failureThreshold × periodSeconds + terminationGracePeriodSeconds = block start + %ds",
			r.pod.Namespace, r.pod.Name, p.failureThreshold*p.period+p.grace)})
	r.inferredVerdict(&n, "liveness kill")
	return n
}

// sigkillUnexplained: exit 137 that neither the kubelet (OOMKilled), the
// node (kernel OOM, eviction, trouble) nor a liveness probe explains.
func (r *restartCase) sigkillUnexplained(l *livenessFacts) model.Notice {
	n := r.notice(model.CodeRestartUnexplained)
	n.Message = fmt.Sprintf("%s: SIGKILL%s", r.subject(), r.exitSuffix())
	if at := r.finishedAt(); at != nil {
		n.Message += " at " + clock(*at)
	}
	n.Message += " not recorded as OOMKilled, no liveness kill, no eviction or node trouble (inferred: unexplained)"
	n.Evidence = append(n.Evidence, r.lastStateEvidence())
	if r.spec == nil || r.spec.LivenessProbe == nil {
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Observed, Text: "no liveness probe configured on container " + r.cs.Name})
	}
	n.Evidence = append(n.Evidence, r.noLivenessKillEvidence(l)...)
	n.Evidence = append(n.Evidence,
		model.Evidence{Kind: model.Inferred, Text: fmt.Sprintf("exit 137 = SIGKILL with reason %q, not OOMKilled: the kubelet did not see an OOM kill of the main process, so OOM is not concluded; a kill from inside the container, a runtime stop or an OOM kill of a child process remain", r.term.Reason)},
		model.Evidence{Kind: model.Observed, Text: "checked: " + strings.Join(r.checkedLines(l), "; ")})
	r.inferredVerdict(&n, "unexplained SIGKILL")
	return n
}

// inferredVerdict labels a notice's verdict as inferred: one evidence line
// that says so and the commands that would confirm it, also in the message.
func (r *restartCase) inferredVerdict(n *model.Notice, verdict string) {
	n.Message += "; confirm: " + r.confirmCommands()
	n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
		Text: "verdict " + verdict + " is inferred, not observed; confirm (Last State reason and exit code, Unhealthy/Killing/OOM Events while they last): " + r.confirmCommands()})
}

func (r *restartCase) noLivenessKillEvidence(l *livenessFacts) []model.Evidence {
	switch {
	case l.killing != nil:
		return []model.Evidence{claim(l.killing, r.pod.Spec.NodeName, "a liveness Killing Event exists too: "+oneLineMsg(l.killing.Message))}
	case len(l.unhealthy) > 0:
		return []model.Evidence{{Kind: model.Observed, Text: fmt.Sprintf("%d failed liveness probe(s) in the run but no Killing Event", l.failures)},
			{Kind: model.Inferred, Text: "the timing does not fit the probe config"}}
	case len(r.podEvents) == 0:
		return []model.Evidence{{Kind: model.Observed, Text: "no Events recorded for the Pod"},
			{Kind: model.Inferred, Text: "Events expire after the API server's --event-ttl (1h by default), so a liveness kill cannot be ruled out by Events"}}
	case !r.eventsCoverRun():
		return []model.Evidence{{Kind: model.Observed, Text: "no Event of the Pod from before the termination is left"},
			{Kind: model.Inferred, Text: "the termination's Events have expired (--event-ttl, 1h by default), so a liveness kill cannot be ruled out by Events"}}
	}
	return []model.Evidence{{Kind: model.Observed, Text: "no Unhealthy/Killing liveness Event in this run"}}
}

// ---- eviction / node trouble -------------------------------------------------

func podEvicted(pod *model.Pod) bool { return pod.Status.Reason() == "Evicted" }

func disruptionTarget(pod *model.Pod) *model.PodCondition {
	conds := pod.Status.Conditions()
	for i := range conds {
		c := &conds[i]
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// evictionFacts is what points at eviction or node trouble around the
// termination, kept by what it rests on.
type evictionFacts struct {
	ground []model.Evidence // the Pod's status, the Node's status
	claims []model.Evidence // Events that corroborate them
	aside  []model.Evidence // Events the spec or the status contradict
}

func (f evictionFacts) evidence() []model.Evidence {
	return append(append([]model.Evidence{}, f.ground...), f.claims...)
}

// grounded: the Pod's or the Node's status shows eviction or node trouble.
func (f evictionFacts) grounded() bool { return len(f.ground) > 0 }

// evictionEvidence collects what points at eviction or node trouble around
// the termination. The kubelet writes status.reason Evicted when it evicts,
// the scheduler and the eviction API a DisruptionTarget condition, and a
// Node's conditions are its kubelet's: those are the ground. Evicted or
// Preempted Events on the Pod and trouble Events of the node are claims:
// used when that ground, or the container's own termination (the kubelet
// lost it: what a node or kubelet restart leaves), agrees.
func (r *restartCase) evictionEvidence() evictionFacts {
	var f evictionFacts
	pod := r.pod
	node := pod.Spec.NodeName
	if podEvicted(pod) {
		f.ground = append(f.ground, model.Evidence{Kind: model.Observed, Text: "Pod status.reason Evicted: " + oneLineMsg(pod.Status.Message())})
	}
	if c := disruptionTarget(pod); c != nil {
		f.ground = append(f.ground, model.Evidence{Kind: model.Observed, At: timePtr(c.LastTransitionTime.Time),
			Text: fmt.Sprintf("condition DisruptionTarget=True reason %s: %s", c.Reason, oneLineMsg(c.Message))})
	}
	statusEvicted := len(f.ground) > 0
	at := r.finishedAt()
	for i := range r.podEvents {
		e := &r.podEvents[i]
		if e.Reason != "Evicted" && e.Reason != "Preempted" && e.Reason != "Preempting" {
			continue
		}
		if !statusEvicted {
			f.aside = append(f.aside, setAside(e, node, "the Pod's status records no eviction (no status.reason Evicted, no DisruptionTarget condition), which the kubelet and the scheduler write when they evict or preempt a Pod"))
			continue
		}
		f.claims = append(f.claims, claim(e, node, fmt.Sprintf("%s Event: %s", e.Reason, oneLineMsg(e.Message))))
	}
	if r.node != nil {
		for _, c := range r.node.Status.Conditions {
			if !nodeConditionBad(c) {
				continue
			}
			since := c.LastTransitionTime.Time
			if at == nil || since.IsZero() || !since.After(at.Add(nodeTroubleNear)) {
				f.ground = append(f.ground, model.Evidence{Kind: model.Observed, At: timePtr(since),
					Text: fmt.Sprintf("node %s condition %s=%s since %s (%s)", r.node.Name, c.Type, c.Status, clock(since), oneLineMsg(c.Message))})
			}
		}
		if at != nil {
			for _, c := range r.node.Status.Conditions {
				// A Ready transition right after the node registered is its
				// first Ready, not a recovery.
				firstReady := !r.node.CreationTimestamp.IsZero() && c.LastTransitionTime.Sub(r.node.CreationTimestamp.Time) < nodeFirstReady
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && !firstReady && near(c.LastTransitionTime.Time, *at, nodeTroubleNear) {
					f.ground = append(f.ground, model.Evidence{Kind: model.Observed, At: timePtr(c.LastTransitionTime.Time),
						Text: fmt.Sprintf("node %s became Ready at %s, %s from the termination (it was not Ready before)", r.node.Name, clock(c.LastTransitionTime.Time), signedSeconds(c.LastTransitionTime.Sub(*at)))})
				}
			}
		}
	}
	restartTrace := r.kubeletLostTermination()
	for i := range r.nodeEvents {
		e := &r.nodeEvents[i]
		first, last := EventSpan(e)
		if at != nil && !overlaps(first, last, at.Add(-nodeTroubleNear), at.Add(nodeTroubleNear)) {
			continue
		}
		if !nodeTroubleReason(e.Reason) {
			continue
		}
		text := fmt.Sprintf("node Event %s at %s: %s", e.Reason, clock(last), oneLineMsg(e.Message))
		switch why := nodeEventSetAside(e, node); {
		case why != "":
			f.aside = append(f.aside, setAside(e, node, why))
		case len(f.ground) == 0 && !restartTrace:
			f.aside = append(f.aside, setAside(e, node, "neither the node's conditions nor the Pod's status show node trouble, and the container's termination is not one its kubelet lost"))
		default:
			f.claims = append(f.claims, claim(e, node, text))
		}
	}
	if len(f.ground) == 0 && len(f.claims) > 0 {
		// Node Events agreeing with a termination the kubelet lost.
		f.ground = append(f.ground, r.lostTerminationEvidence())
	}
	return f
}

// kubeletLostTermination: the status shows a termination the kubelet did
// not see happen, as after a node or kubelet restart (restartCount without
// a last state, or the runtime's Unknown reason).
func (r *restartCase) kubeletLostTermination() bool {
	if r.cs == nil {
		return false
	}
	if r.term == nil {
		return r.cs.RestartCount > 0
	}
	return r.term.Reason == "Unknown" || r.term.Reason == "ContainerStatusUnknown"
}

func (r *restartCase) lostTerminationEvidence() model.Evidence {
	if r.term == nil {
		return model.Evidence{Kind: model.Observed, Text: fmt.Sprintf("container %s restarted %d× with no lastState.terminated recorded: its kubelet lost the termination, as a node or kubelet restart leaves it", r.cs.Name, r.cs.RestartCount)}
	}
	return model.Evidence{Kind: model.Observed, At: r.finishedAt(),
		Text: fmt.Sprintf("container %s terminated with reason %s: the kubelet did not see it end, as after a node or kubelet restart", r.cs.Name, r.term.Reason)}
}

func nodeConditionBad(c corev1.NodeCondition) bool {
	switch c.Type {
	case corev1.NodeReady:
		return c.Status != corev1.ConditionTrue
	case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeNetworkUnavailable:
		return c.Status == corev1.ConditionTrue
	}
	return false
}

// nodeTroubleReason: Events a kubelet or the node lifecycle controller
// records about a node that can take its Pods down.
func nodeTroubleReason(reason string) bool {
	switch reason {
	case "NodeNotReady", "Rebooted", "NodeHasInsufficientMemory", "NodeHasDiskPressure", "NodeHasInsufficientPID",
		"EvictionThresholdMet", "Starting", "KubeletHasInsufficientMemory", "NodeShutdown",
		"TerminatingEvictedPod", "DeletingNode", "RemovingNode":
		return true
	}
	return false
}

func (r *restartCase) evicted(eviction []model.Evidence, l *livenessFacts) model.Notice {
	n := r.notice(model.CodeRestartEvicted)
	n.Message = fmt.Sprintf("%s: evicted or hit by node trouble%s", r.subject(), r.exitSuffix())
	if at := r.finishedAt(); at != nil {
		n.Message += " at " + clock(*at)
	}
	n.Message += ": " + eviction[0].Text
	if r.term != nil {
		n.Evidence = append(n.Evidence, r.lastStateEvidence())
	}
	n.Evidence = append(n.Evidence, eviction...)
	if r.cs != nil {
		n.Evidence = append(n.Evidence, r.noLivenessKillEvidence(l)...)
	}
	n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
		Text: "node-level causes hit co-located Pods too: check the other Pods on node " + textsafe.OrDash(r.pod.Spec.NodeName)})
	return n
}

func (r *restartCase) evictedWithoutTermination() model.Notice {
	f := r.evictionEvidence()
	ev := append(f.evidence(), f.aside...)
	n := r.notice(model.CodeRestartEvicted)
	n.Message = fmt.Sprintf("Pod %s evicted: %s", r.pod.Name, ev[0].Text)
	n.Evidence = ev
	return n
}

// ---- unexplained -------------------------------------------------------------

func (r *restartCase) checkedLines(l *livenessFacts) []string {
	var c []string
	if r.term != nil {
		c = append(c, fmt.Sprintf("last termination: reason %s, exit %d (not OOMKilled, not a SIGKILL)", textsafe.OrDash(r.term.Reason), r.term.ExitCode))
	} else {
		c = append(c, fmt.Sprintf("restartCount %d but no lastState.terminated recorded (the kubelet lost it, e.g. after a node restart)", r.cs.RestartCount))
	}
	switch {
	case !r.hadEvents:
		c = append(c, "no Events recorded for the Pod (they expire after the API server's --event-ttl, 1h by default)")
	case len(l.unhealthy) > 0:
		c = append(c, fmt.Sprintf("%d failed liveness probe(s) but no Killing Event and the timing does not fit", l.failures))
	case len(l.setAside) > 0:
		c = append(c, "no liveness Event in the run that the Pod's spec and status allow (those set aside are listed)")
	default:
		c = append(c, "no Unhealthy/Killing liveness Event in the run")
	}
	c = append(c, "not evicted, no DisruptionTarget condition")
	if r.node == nil {
		c = append(c, "node conditions not available")
	} else {
		c = append(c, fmt.Sprintf("node %s showed no NotReady/pressure condition near the termination", r.node.Name))
	}
	return c
}

func (r *restartCase) unexplained(checked []string) model.Notice {
	n := r.notice(model.CodeRestartUnexplained)
	n.Message = fmt.Sprintf("%s%s: not explained by OOM, liveness probe or eviction; confirm: %s", r.subject(), r.exitSuffix(), r.confirmCommands())
	if r.term != nil {
		n.Evidence = append(n.Evidence, r.lastStateEvidence())
		if r.term.ExitCode != 0 && r.term.ExitCode < 128 {
			n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
				Text: fmt.Sprintf("exit %d is not a signal: the process exited on its own; its log says why: kubectl logs -n %s %s -c %s --previous",
					r.term.ExitCode, r.pod.Namespace, r.pod.Name, r.cs.Name)})
		}
	}
	n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Observed, Text: "checked: " + strings.Join(checked, "; ")})
	return n
}

func (r *restartCase) confirmCommands() string {
	return fmt.Sprintf("kubectl describe pod -n %s %s; kubectl get events -n %s --field-selector involvedObject.name=%s",
		r.pod.Namespace, r.pod.Name, r.pod.Namespace, r.pod.Name)
}

// ---- siblings ----------------------------------------------------------------

// siblingEvidence compares a restart with the siblings that differ from the
// Pod in nothing that matters: same container image, same liveness probe and
// same memory limit. A control is only valid if it differs in one variable.
// Siblings must carry their memory limits (model.SlimPodWithLimits): nil
// reads as "no limit".
func siblingEvidence(pod *model.Pod, container string, spec *model.Container, siblings []*model.Pod) []model.Evidence {
	if spec == nil || len(siblings) == 0 {
		return nil
	}
	var control, restarted, differ int
	var names []string
	for _, s := range siblings {
		if s == nil || s.UID == pod.UID && s.Name == pod.Name && s.Namespace == pod.Namespace {
			continue
		}
		sc := containerSpec(s, container)
		if !SameControl(sc, spec) {
			differ++
			continue
		}
		control++
		for _, cs := range s.Status.ContainerStatuses {
			if cs.Name == container && (cs.RestartCount > 0 || cs.LastTerminationState.Terminated != nil) {
				restarted++
				if len(names) < 3 {
					names = append(names, s.Name)
				}
			}
		}
	}
	var ev []model.Evidence
	if control > 0 {
		text := fmt.Sprintf("%d of %d siblings (same image, liveness probe and memory limit) restarted", restarted, control)
		if restarted > 0 {
			text += " (" + strings.Join(names, ", ") + ")"
		}
		ev = append(ev, model.Evidence{Kind: model.Observed, Text: text})
		if restarted == 0 {
			ev = append(ev, model.Evidence{Kind: model.Inferred, Text: "the cause is specific to this Pod's workload, not its image, probe config or limits"})
		} else {
			ev = append(ev, model.Evidence{Kind: model.Inferred, Text: "a shared cause (image, probe config, limits, node or load) is likely"})
		}
	}
	if differ > 0 {
		ev = append(ev, model.Evidence{Kind: model.Observed,
			Text: fmt.Sprintf("%d sibling(s) differ in image, liveness probe or memory limit: not used as a control", differ)})
	}
	return ev
}

// SameControl reports whether container a may serve as a control for b:
// same image, same liveness probe and same memory limit.
func SameControl(a, b *model.Container) bool {
	if a == nil || b == nil || a.Image != b.Image || !equality.Semantic.DeepEqual(a.LivenessProbe, b.LivenessProbe) {
		return false
	}
	if (a.MemoryLimit == nil) != (b.MemoryLimit == nil) {
		return false
	}
	return a.MemoryLimit == nil || a.MemoryLimit.Cmp(*b.MemoryLimit) == 0
}

// ---- helpers -----------------------------------------------------------------

func (r *restartCase) notice(code string) model.Notice {
	return model.Notice{Code: code, Severity: model.SeverityWarning, Pod: r.pod.Name}
}

// subject names what is being explained: "container sandbox restarted 3×".
func (r *restartCase) subject() string {
	if r.cs == nil {
		return "Pod " + r.pod.Name
	}
	if r.cs.RestartCount > 0 {
		return fmt.Sprintf("container %s restarted %d×", r.cs.Name, r.cs.RestartCount)
	}
	return fmt.Sprintf("container %s terminated", r.cs.Name)
}

func (r *restartCase) exitSuffix() string {
	if r.term == nil {
		return ""
	}
	return fmt.Sprintf(" (exit %d)", r.term.ExitCode)
}

func (r *restartCase) finishedAt() *time.Time {
	if r.term == nil || r.term.FinishedAt.IsZero() {
		return nil
	}
	t := r.term.FinishedAt.Time
	return &t
}

func (r *restartCase) lastStateEvidence() model.Evidence {
	t := r.term
	which := "lastState.terminated"
	if r.cs.LastTerminationState.Terminated == nil {
		which = "state.terminated"
	}
	text := fmt.Sprintf("%s of container %s: reason %s, exit %d, started %s, finished %s",
		which, r.cs.Name, textsafe.OrDash(t.Reason), t.ExitCode, clockOrDash(t.StartedAt.Time), clockOrDash(t.FinishedAt.Time))
	if t.Signal != 0 {
		text += fmt.Sprintf(", signal %d", t.Signal)
	}
	if t.Message != "" {
		text += ": " + oneLineMsg(t.Message)
	}
	return model.Evidence{Kind: model.Observed, Text: text, At: r.finishedAt()}
}

// runWindow is the time the terminated run lasted; zero bounds are open.
func (r *restartCase) runWindow() (from, to time.Time) {
	if r.term == nil {
		return time.Time{}, time.Time{}
	}
	if !r.term.StartedAt.IsZero() {
		from = r.term.StartedAt.Time.Add(-eventSlack)
	}
	if !r.term.FinishedAt.IsZero() {
		to = r.term.FinishedAt.Time.Add(eventSlack)
	}
	return from, to
}

func containerSpec(pod *model.Pod, name string) *model.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// splitEvents keeps the Events about this Pod (same UID when the Event names
// one: a same-name predecessor's Events are not this Pod's) and about its node.
func splitEvents(pod *model.Pod, events []corev1.Event) (podEvents, nodeEvents []corev1.Event) {
	for _, e := range events {
		switch {
		case e.InvolvedObject.Kind == "Node":
			if pod.Spec.NodeName == "" || e.InvolvedObject.Name == pod.Spec.NodeName {
				nodeEvents = append(nodeEvents, e)
			}
		case (e.InvolvedObject.Kind == "Pod" || e.InvolvedObject.Kind == "") && e.InvolvedObject.Name == pod.Name &&
			(e.InvolvedObject.UID == "" || e.InvolvedObject.UID == pod.UID):
			podEvents = append(podEvents, e)
		}
	}
	sort.SliceStable(podEvents, func(i, j int) bool { return EventLast(&podEvents[i]).Before(EventLast(&podEvents[j])) })
	return podEvents, nodeEvents
}

// eventForContainer: the kubelet names the container in fieldPath
// ("spec.containers{sandbox}") and in the message ("Container sandbox ...").
func eventForContainer(e *corev1.Event, container string, only bool) bool {
	if fp := e.InvolvedObject.FieldPath; fp != "" {
		return fp == "spec.containers{"+container+"}"
	}
	return only || strings.Contains(e.Message, "Container "+container+" ")
}

// EventSpan returns when an Event was first and last observed, from whichever
// fields its writer filled: core/v1 first/last timestamps, or the events.k8s.io
// eventTime and series.
func EventSpan(e *corev1.Event) (first, last time.Time) {
	first = e.FirstTimestamp.Time
	if first.IsZero() {
		first = e.EventTime.Time
	}
	if first.IsZero() {
		first = e.CreationTimestamp.Time
	}
	last = e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(last) {
		last = e.Series.LastObservedTime.Time
	}
	if last.IsZero() || last.Before(first) {
		last = first
	}
	return first, last
}

// EventLast is when an Event was last observed (see EventSpan).
func EventLast(e *corev1.Event) time.Time {
	_, last := EventSpan(e)
	return last
}

func eventCount(e *corev1.Event) int32 {
	if e.Series != nil && e.Series.Count > 0 {
		return e.Series.Count
	}
	if e.Count > 0 {
		return e.Count
	}
	return 1
}

// overlaps: [first,last] meets [from,to]; zero bounds of the window are open.
func overlaps(first, last, from, to time.Time) bool {
	if !from.IsZero() && last.Before(from) {
		return false
	}
	if !to.IsZero() && first.After(to) {
		return false
	}
	return true
}

func near(a, b time.Time, d time.Duration) bool {
	return !a.IsZero() && absDuration(a.Sub(b)) <= d
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func clock(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

func clockOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return clock(t)
}

func signedSeconds(d time.Duration) string {
	s := d.Round(100 * time.Millisecond).Seconds()
	return fmt.Sprintf("%+gs", s)
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func oneLineMsg(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
