package fleet

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/model"
)

// slotFacts is everything the identity of one slot depends on. The Fleet
// fills it from its indexes; identity derivation itself is a pure function.
type slotFacts struct {
	RecordedIP string     // what the engine forwards to; "" = unassigned
	PodName    string     // the Pod name the slot links to ("" when no Pod is linked)
	BoundUID   types.UID  // first UID seen for PodName by this sandbox
	Pod        *model.Pod // the Pod with PodName now; nil when none exists
	// ForeignSandbox is set when the linked Pod belongs to another sandbox now
	// (a pooled Pod released, or listed by two sandboxes, and handed to the other).
	ForeignSandbox string
	// Holders are the live Pods whose podIP is RecordedIP (usually zero or one).
	Holders []model.Holder
}

// deriveIdentity answers "if a request were sent to RecordedIP, which Pod
// would receive it?" and names the Pod when it is not the linked one. Rules,
// first match wins:
//
//  1. no recorded IP                                   → UNASSIGNED
//  2. a live Pod other than ours holds the IP          → IP_TAKEN (holder named),
//     except that a same-name re-creation holding it   → UID_CHANGED
//     ("ours" = the linked Pod with the bound UID, not handed to another sandbox;
//     when two live Pods claim one IP, each sandbox sees the other as taker)
//  3. no Pod with the linked name, or it belongs to another sandbox → POD_GONE
//  4. the Pod is not the first one bound to the slot   → UID_CHANGED
//  5. the Pod is Failed/Succeeded, its main container terminated, or it is
//     being deleted                                    → POD_DEAD
//  6. the Pod has another IP than recorded             → IP_STALE
//  7. the Pod is not Running yet (e.g. initializing)   → UNASSIGNED: the address
//     is right but nothing serves it yet; the effective state says Starting
//  8. otherwise                                        → OK
func deriveIdentity(f slotFacts) (model.IdentityState, *model.Holder) {
	if f.RecordedIP == "" {
		return model.IdentityUnassigned, nil
	}
	var ourUID types.UID
	if f.Pod != nil {
		ourUID = f.Pod.UID
	}
	ours := f.Pod != nil && (f.BoundUID == "" || f.BoundUID == ourUID) && f.ForeignSandbox == ""
	taker := -1 // an index: a pointer to a loop variable put every holder on the heap
	for i := range f.Holders {
		h := &f.Holders[i]
		if ours && types.UID(h.UID) == ourUID {
			continue
		}
		if f.Pod != nil && types.UID(h.UID) == ourUID && f.ForeignSandbox == "" {
			// The Pod with our name holds the address but is a re-creation.
			return model.IdentityUIDChanged, nil
		}
		if taker < 0 || h.Since.Before(f.Holders[taker].Since) {
			taker = i
		}
	}
	if taker >= 0 {
		h := f.Holders[taker] // a copy: the row keeps it, not the facts' slice
		return model.IdentityIPTaken, &h
	}
	switch {
	case f.Pod == nil || f.ForeignSandbox != "":
		return model.IdentityPodGone, nil
	case f.BoundUID != "" && f.BoundUID != ourUID:
		return model.IdentityUIDChanged, nil
	case podDead(f.Pod) || f.Pod.DeletionTimestamp != nil:
		return model.IdentityPodDead, nil
	case !f.Pod.HasIP(f.RecordedIP):
		return model.IdentityIPStale, nil
	case !podRunning(f.Pod):
		return model.IdentityUnassigned, nil
	}
	return model.IdentityOK, nil
}

// identityNotice turns a slot's identity into a notice (ok false for
// harmless states). A slot checked in its own namespace only says so. The
// notice is returned by value: the caller copies it into the row's list,
// and a pointer made it a heap object per derivation.
func identityNotice(sl *model.Slot, sandboxKey string) (n model.Notice, ok bool) {
	n, ok = slotNotice(sl, sandboxKey)
	if ok && sl.NamespaceOnly {
		n.Message += "; other namespaces were not checked for a Pod holding " + sl.RecordedIP
		n.Evidence = append(n.Evidence, model.Evidence{Kind: model.Inferred,
			Text: "no Pod in this namespace holds " + sl.RecordedIP + "; other namespaces could not be read or were not answered for, so one may hold it there (IP_TAKEN)"})
	}
	return n, ok
}

func slotNotice(sl *model.Slot, sandboxKey string) (model.Notice, bool) {
	ev := func(text string) model.Evidence { return model.Evidence{Kind: model.Observed, Text: text} }
	switch sl.Identity {
	case model.IdentityIPTaken:
		h := sl.Holder
		n := model.Notice{Code: model.CodeIPTaken, Severity: model.SeverityError, Pod: sl.PodName}
		n.Message = "recorded IP " + sl.RecordedIP + " is held by Pod " + h.Pod
		if h.Sandbox != "" {
			n.Message += " (sandbox " + h.Sandbox + ")"
		}
		if since := h.SinceText(time.TimeOnly); since != "" {
			n.Message += ", " + since
		}
		n.Message += ": requests for this sandbox run there"
		n.Evidence = []model.Evidence{
			ev("engine records " + sl.RecordedIP + " for slot " + itoa(int(sl.Index))),
			{Kind: model.Observed, Text: "Pod " + h.Namespace + "/" + h.Pod + " (uid " + h.UID + ") has podIP " + sl.RecordedIP, At: timePtr(h.Since)},
		}
		if sl.PodName != "" && sl.PodName != h.Pod {
			if sl.Pod == nil {
				n.Evidence = append(n.Evidence, ev("linked Pod "+sl.PodName+" no longer exists"))
			} else {
				n.Evidence = append(n.Evidence, ev("linked Pod "+sl.PodName+" is "+podSummary(sl.Pod)))
			}
		}
		return n, true
	case model.IdentityPodDead:
		msg := "linked Pod " + sl.PodName + " is " + podSummary(sl.Pod) + " while the engine still records " + sl.RecordedIP
		return model.Notice{Code: model.CodePodDead, Severity: model.SeverityError, Pod: sl.PodName, Message: msg,
			Evidence: []model.Evidence{ev("Pod " + sl.PodName + ": " + podSummary(sl.Pod)), ev("engine records " + sl.RecordedIP)}}, true
	case model.IdentityPodGone:
		msg := "linked Pod " + sl.PodName + " no longer exists while the engine still records " + sl.RecordedIP
		if sl.PodName == "" {
			msg = "no Pod is linked to slot " + itoa(int(sl.Index)) + " while the engine still records " + sl.RecordedIP
		}
		return model.Notice{Code: model.CodePodGone, Severity: model.SeverityError, Pod: sl.PodName, Message: msg,
			Evidence: []model.Evidence{ev("engine records " + sl.RecordedIP + " for slot " + itoa(int(sl.Index)))}}, true
	case model.IdentityUIDChanged:
		uid := ""
		if sl.Pod != nil {
			uid = string(sl.Pod.UID)
		}
		return model.Notice{Code: model.CodeUIDChanged, Severity: model.SeverityWarning, Pod: sl.PodName,
			Message:  "Pod " + sl.PodName + " was re-created (uid " + sl.BoundUID + " → " + uid + "): it is not the Pod first bound to this sandbox",
			Evidence: []model.Evidence{ev("first bound uid " + sl.BoundUID), ev("current uid " + uid)}}, true
	case model.IdentityIPStale:
		cur := ""
		if sl.Pod != nil {
			cur = sl.Pod.Status.PodIP
		}
		return model.Notice{Code: model.CodeIPStale, Severity: model.SeverityWarning, Pod: sl.PodName,
			Message:  "engine records " + sl.RecordedIP + " but Pod " + sl.PodName + " is at " + orNone(cur),
			Evidence: []model.Evidence{ev("engine records " + sl.RecordedIP), ev("Pod " + sl.PodName + " podIP " + orNone(cur))}}, true
	}
	return model.Notice{}, false
}

func orNone(s string) string {
	if s == "" {
		return "no IP"
	}
	return s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
