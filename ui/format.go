package ui

import (
	"fmt"
	"slices"
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
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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

func podRestarts(p *model.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

func clock(t time.Time) string { return t.Format("15:04:05") }

func sortStrings(s []string) { slices.Sort(s) }
