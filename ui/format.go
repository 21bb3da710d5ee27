package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/model"
)

// age renders a duration the way kubectl does: 42s, 5m, 3h, 2d.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t), 0)
	unit, suffix := ageUnit(d)
	return strconv.FormatInt(int64(d/unit), 10) + suffix
}

// ageUnit is the unit age counts d in.
func ageUnit(d time.Duration) (time.Duration, string) {
	switch {
	case d < 2*time.Minute:
		return time.Second, "s"
	case d < 2*time.Hour:
		return time.Minute, "m"
	case d < 48*time.Hour:
		return time.Hour, "h"
	}
	return 24 * time.Hour, "d"
}

// ageChanges is when age(now, t) next reads differently (zero: never).
func ageChanges(now, t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	d := max(now.Sub(t), 0)
	unit, _ := ageUnit(d)
	return t.Add((d/unit + 1) * unit)
}

// identityCell says who holds the IP when it was taken.
func identityCell(sb *model.Sandbox, disconnected bool) string {
	if disconnected {
		return string(model.IdentityUnknown)
	}
	id := sb.Identity()
	if id == model.IdentityIPTaken {
		for i := range sb.Slots {
			sl := &sb.Slots[i]
			if sl.Identity == model.IdentityIPTaken && sl.Holder != nil {
				return "IP_TAKEN→" + sl.Holder.Pod
			}
		}
	}
	for i := range sb.Slots {
		if sl := &sb.Slots[i]; sl.Identity == id && sl.NamespaceOnly {
			return string(id) + " (unchecked)" // other namespaces could not be searched for a holder
		}
	}
	return string(id)
}

// sandboxSeverity decides the row highlight.
func sandboxSeverity(sb *model.Sandbox) rowSev {
	switch sb.Identity() {
	case model.IdentityIPTaken, model.IdentityPodDead, model.IdentityPodGone:
		return sevErr
	case model.IdentityUIDChanged, model.IdentityIPStale:
		return sevWarn
	}
	sev := sevNone
	for i := range sb.Slots {
		if sb.Slots[i].Stuck != nil {
			sev = sevWarn
		}
	}
	for _, n := range sb.Notices {
		switch n.Severity {
		case model.SeverityError:
			return sevErr
		case model.SeverityWarning:
			sev = sevWarn
		}
	}
	return sev
}

func noticeCodes(ns []model.Notice) string {
	if len(ns) == 0 {
		return ""
	}
	codes := make([]string, len(ns))
	for i, n := range ns {
		codes[i] = n.Code
	}
	return strings.Join(codes, ",")
}

// containerState is a one-word state with its reason: Running,
// Waiting(PodInitializing), Terminated(OOMKilled:137).
func containerState(st corev1.ContainerState) string {
	switch {
	case st.Running != nil:
		return "Running"
	case st.Waiting != nil:
		return "Waiting(" + st.Waiting.Reason + ")"
	case st.Terminated != nil:
		return fmt.Sprintf("Terminated(%s:%d)", st.Terminated.Reason, st.Terminated.ExitCode)
	}
	return "-"
}

func clock(t time.Time) string { return t.Format("15:04:05") }
