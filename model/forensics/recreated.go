package forensics

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/model"
)

// Same-name re-creation. When a sandbox's Pod is deleted, the engine's
// controller re-creates it at once under the same name with a new UID: the
// sandbox lives on, its in-container state (files, processes) does not. A
// watcher that saw the first UID reports UID_CHANGED; a one-shot reader
// never saw it and has only traces: the Pod is much younger than its
// sandbox (the controller creates a sandbox's Pod as soon as the sandbox
// exists), the sandbox was Ready before the Pod existed, and the
// controller's SuccessfulCreate Event names the Pod twice.

// PodRecreatedAfter is how late a Pod may come: a sandbox's Pod created this long after the sandbox
// is taken as a re-creation (the controller creates the first one within
// seconds, even when its image then takes minutes to pull).
const PodRecreatedAfter = 2 * time.Minute

// ReasonSuccessfulCreate is the reason of the Event a controller records
// when it creates a Pod ("Created pod: <name>").
const ReasonSuccessfulCreate = "SuccessfulCreate"

// RecreatedNotice is POD_RECREATED for one slot from the timestamps: the
// sandbox's creation, its engine's Ready=True transition (nil when unknown)
// and the linked Pod's creation. ok is false when there is no notice.
// The notice is returned by value: the caller copies it into the row's
// list, and a pointer made it a heap object per slot per derivation.
func RecreatedNotice(sandboxCreated time.Time, readySince *time.Time, sl *model.Slot) (n model.Notice, ok bool) {
	p := sl.Pod
	if p == nil || sandboxCreated.IsZero() || p.Created().IsZero() || sl.Identity == model.IdentityUIDChanged {
		return model.Notice{}, false
	}
	created := p.Created()
	gap := created.Sub(sandboxCreated)
	readyBefore := readySince != nil && created.Sub(*readySince) >= time.Second
	if gap <= PodRecreatedAfter && !readyBefore {
		return model.Notice{}, false
	}
	// The evidence points at copies made here, past the checks: the
	// parameter's or created's address would move them to the heap on
	// every call, notice or not.
	at := &[2]time.Time{sandboxCreated, created}
	n = model.Notice{Code: model.CodePodRecreated, Severity: model.SeverityWarning, Pod: p.Name,
		Evidence: []model.Evidence{
			{Kind: model.Observed, At: &at[0], Text: "sandbox created at " + clock(sandboxCreated)},
			{Kind: model.Observed, At: &at[1], Text: fmt.Sprintf("Pod %s (uid %s) created at %s, %s after the sandbox", p.Name, p.UID, clock(created), duration(gap))},
		}}
	if readySince != nil {
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Observed, At: readySince,
			Text: fmt.Sprintf("the engine's Ready=True condition last transitioned at %s, %s after the sandbox was created", clock(*readySince), duration(readySince.Sub(sandboxCreated)))})
		if readyBefore {
			n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
				Text: "the sandbox was Ready before this Pod existed: an earlier Pod served it"})
		}
	}
	n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
		Text: "the controller creates a sandbox's Pod as soon as the sandbox exists and re-creates it under the same name with a new UID when it is deleted: this Pod replaced an earlier one, whose in-container state (files, processes) is gone"})
	n.Message = fmt.Sprintf("Pod %s was created %s after its sandbox: re-created under the same name (inferred), in-container state lost", p.Name, duration(gap))
	if readyBefore && gap <= PodRecreatedAfter {
		n.Message = fmt.Sprintf("Pod %s was created after its sandbox was already Ready: re-created under the same name (inferred), in-container state lost", p.Name)
	}
	return n, true
}

// RecreatedFromEvents adds what the controller's SuccessfulCreate Events
// say about the sandbox's Pods to its POD_RECREATED notices: a Pod name
// created twice or more is a re-creation even when the timestamps are
// close. Events are claims (anyone allowed to create Events in the
// namespace writes them), so the notice says it rests on them, and those
// the objects contradict are set aside: an Event about another object of
// the sandbox's name (another UID), or a creation claimed before the
// sandbox existed or after the Pod there now was created. events are
// SuccessfulCreate Events of the sandbox's namespace (any involved object:
// the controller records them on the sandbox, naming the Pod in the
// message). It returns the sandbox's POD_RECREATED notices after the
// merge, one per Pod, and whether they differ from sb's.
func RecreatedFromEvents(sb *model.Sandbox, events []corev1.Event) ([]model.Notice, bool) {
	var out []model.Notice
	byPod := map[string]int{}
	for _, n := range sb.Notices {
		if n.Code == model.CodePodRecreated {
			byPod[n.Pod] = len(out)
			out = append(out, n)
		}
	}
	if !RecreationApplies(sb) {
		return out, false
	}
	changed := false
	for i := range sb.Slots {
		sl := &sb.Slots[i]
		if sl.Pod == nil || sl.Identity == model.IdentityUIDChanged {
			continue
		}
		c := createdCount(events, sb, sl.Pod)
		if c.count < 2 {
			continue
		}
		ev := model.Evidence{Kind: model.Claimed, At: &c.last,
			Text: fmt.Sprintf("%d %s Event(s) for Pod %s say the controller created a Pod of that name %d times, first at %s, last at %s — Events' claims (reported by %s)",
				c.count, ReasonSuccessfulCreate, sl.Pod.Name, c.count, clock(c.first), clock(c.last), strings.Join(c.reporters, ", "))}
		changed = true
		if j, ok := byPod[sl.Pod.Name]; ok {
			n := &out[j]
			n.Evidence = append(append(append([]model.Evidence{}, n.Evidence...), ev), c.aside...)
			n.Message = strings.Replace(n.Message, "(inferred)", "(inferred; "+fmt.Sprint(c.count)+" SuccessfulCreate Events say it was created "+fmt.Sprint(c.count)+" times)", 1)
			continue
		}
		byPod[sl.Pod.Name] = len(out)
		evidence := []model.Evidence{ev, {Kind: model.Observed, At: timePtr(sl.Pod.Created()),
			Text: fmt.Sprintf("the Pod now is uid %s, created at %s", sl.Pod.UID, clock(sl.Pod.Created()))},
			{Kind: model.Inferred, Text: "each re-creation is a new Pod (new UID): the earlier one's in-container state (files, processes) is gone"},
			{Kind: model.Inferred, Text: "the Pod's and the sandbox's timestamps neither show nor rule out a re-creation this quick: the verdict rests on the Events, which agree with both objects' creation times"}}
		out = append(out, model.Notice{Code: model.CodePodRecreated, Severity: model.SeverityWarning, Pod: sl.Pod.Name,
			Message:  fmt.Sprintf("Pod %s was created %d times under the same name (claimed by %s Events): re-created, in-container state lost", sl.Pod.Name, c.count, ReasonSuccessfulCreate),
			Evidence: append(evidence, c.aside...)})
	}
	return out, changed
}

// RecreationApplies reports whether the sandbox's controller creates its Pods itself
// (a non-pooled BatchSandbox, an agent Sandbox). A pooled sandbox's Pods
// come from its Pool, created before or after it independently; a plain
// Pod is its own sandbox.
func RecreationApplies(sb *model.Sandbox) bool {
	switch sb.Engine() {
	case model.EngineBatchSandbox:
		return sb.Pool == ""
	case model.EngineAgent:
		return true
	}
	return false
}

// creations is what the SuccessfulCreate Events naming one Pod claim.
type creations struct {
	count       int32
	first, last time.Time
	reporters   []string
	aside       []model.Evidence
}

// createdCount counts the SuccessfulCreate Events that name pod: recorded on
// the sandbox object (its name, "Created pod: <pod>") or on the Pod itself.
// Those the objects contradict are set aside.
func createdCount(events []corev1.Event, sb *model.Sandbox, pod *model.Pod) creations {
	var c creations
	sandboxCreated, podCreated := sb.CreatedAt(), pod.Created()
	for i := range events {
		e := &events[i]
		if e.Reason != ReasonSuccessfulCreate || e.InvolvedObject.Namespace != "" && e.InvolvedObject.Namespace != sb.Namespace() {
			continue
		}
		onPod := e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Name == pod.Name
		names := onPod
		if !names && e.InvolvedObject.Name == sb.Name() {
			for _, w := range strings.Fields(e.Message) {
				if strings.Trim(w, `"'.,:;`) == pod.Name {
					names = true
					break
				}
			}
		}
		if !names {
			continue
		}
		f, l := EventSpan(e)
		switch {
		case !onPod && e.InvolvedObject.UID != "" && sb.UID() != "" && e.InvolvedObject.UID != sb.UID():
			c.aside = append(c.aside, setAside(e, "", fmt.Sprintf("it is about another object named %s (uid %s, the sandbox's is %s)", sb.Name(), e.InvolvedObject.UID, sb.UID())))
			continue
		case !sandboxCreated.IsZero() && f.Before(sandboxCreated.Add(-eventSlack)):
			c.aside = append(c.aside, setAside(e, "", "it claims a creation before the sandbox was created ("+clock(sandboxCreated)+")"))
			continue
		case !podCreated.IsZero() && l.After(podCreated.Add(eventSlack)):
			c.aside = append(c.aside, setAside(e, "", "it claims a creation after the Pod there now was created ("+clock(podCreated)+")"))
			continue
		}
		c.count += eventCount(e)
		if c.first.IsZero() || f.Before(c.first) {
			c.first = f
		}
		if l.After(c.last) {
			c.last = l
		}
		component, _ := reporter(e)
		if r := quoteOrNone(component); !slices.Contains(c.reporters, r) {
			c.reporters = append(c.reporters, r)
		}
	}
	return c
}

func duration(d time.Duration) string {
	return d.Round(time.Second).String()
}
