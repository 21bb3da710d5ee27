package forensics

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
)

// Events are claims. Whoever may create Events in a namespace — a tenant
// included — writes them whole: reason, message, times, and the fields that
// name their reporter (source.component/host, reportingController/Instance).
// What the kubelet writes to the Pod's status, what the Pod's spec says and
// the Node's own status are the ground; an Event may corroborate them, is
// shown as a claim with its reporting fields, and a verdict the spec or the
// status contradicts is never reached on an Event's word.

// reporter returns the component and the host an Event names as its
// writer, from whichever fields were filled.
func reporter(e *corev1.Event) (component, host string) {
	component, host = e.ReportingController, e.ReportingInstance
	if component == "" {
		component = e.Source.Component
	}
	if e.Source.Host != "" {
		host = e.Source.Host
	}
	return component, host
}

// reportedFromOtherNode reports whether e names a reporting host that is
// not node: a kubelet Event about a Pod comes from the Pod's node, so one
// naming another host is not its kubelet's. An Event naming no host is not
// told apart (its label says so).
func reportedFromOtherNode(e *corev1.Event, node string) bool {
	_, host := reporter(e)
	return host != "" && host != node
}

// claimSource labels an Event as a claim: who it says wrote it, and
// whether the host it names is node (the Pod's node, or the Node the Event
// is about).
func claimSource(e *corev1.Event, node string) string {
	component, host := reporter(e)
	s := "an Event's claim (reported by " + quoteOrNone(component)
	switch {
	case host == "":
		s += ", no reporting host"
	case node == "":
		s += " on " + quoteOrNone(host)
	case host == node:
		s += " on " + quoteOrNone(host) + ", the Pod's node"
	default:
		s += " on " + quoteOrNone(host) + ", NOT node " + node
	}
	if e.Namespace != "" {
		s += "; recorded in namespace " + e.Namespace
	}
	return s + ")"
}

func quoteOrNone(s string) string {
	if s == "" {
		return "nobody named"
	}
	return fmt.Sprintf("%q", oneLineMsg(s))
}

// claim is an Evidence line for what an Event says.
func claim(e *corev1.Event, node, text string) model.Evidence {
	return model.Evidence{Kind: model.Claimed, At: timePtr(EventLast(e)), Text: text + " — " + claimSource(e, node)}
}

// setAside is the Evidence line for an Event that says something the spec
// or the status contradicts: shown, never used.
func setAside(e *corev1.Event, node, why string) model.Evidence {
	first, last := EventSpan(e)
	when := clock(last)
	if !first.Equal(last) {
		when = clock(first) + "–" + clock(last)
	}
	return claim(e, node, fmt.Sprintf("set aside: %s Event at %s %q: %s", e.Reason, when, oneLineMsg(e.Message), why))
}

// nodeEventNamespace is where the kubelet, the node lifecycle controller
// and node-problem-detector record Events about a Node (a cluster-scoped
// object's Events go to "default"). An Event about a Node in any other
// namespace was written by someone allowed to create Events there.
const nodeEventNamespace = metav1.NamespaceDefault
