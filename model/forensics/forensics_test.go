package forensics

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sandscope/sandscope/model"
)

var t0 = time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)

func at(sec float64) metav1.Time {
	return metav1.NewTime(t0.Add(time.Duration(sec * float64(time.Second))))
}

type podOpt func(*corev1.Pod)

func testPod(opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sbx-0", Namespace: "ns", UID: "uid-1"},
		Spec: corev1.PodSpec{
			NodeName: "node-a",
			Containers: []corev1.Container{{
				Name:  "sandbox",
				Image: "registry.example/eval:1",
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withProbe(threshold, period int32, grace *int64) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].LivenessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}},
			FailureThreshold: threshold, PeriodSeconds: period,
		}
		p.Spec.TerminationGracePeriodSeconds = grace
	}
}

func withLast(restarts int32, reason string, exit int32, started, finished float64) podOpt {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "sandbox", RestartCount: restarts, Image: p.Spec.Containers[0].Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(finished + 1)}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: reason, ExitCode: exit, StartedAt: at(started), FinishedAt: at(finished)}},
		}}
	}
}

// killedPod is incident 003's Pod: a liveness probe of failureThreshold 3
// every 10 s and a 30 s grace period, its last run (started..finished
// seconds after t0) ended by exit 137, reason Error.
func killedPod(restarts int32, started, finished float64, opts ...podOpt) *corev1.Pod {
	return testPod(append([]podOpt{withProbe(3, 10, ptr.To[int64](30)), withLast(restarts, "Error", 137, started, finished)}, opts...)...)
}

func withMemLimit(q string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}
	}
}

func podEvent(uid types.UID, reason, msg string, first, last float64, count int32) corev1.Event {
	return corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "sbx-0", UID: uid, FieldPath: "spec.containers{sandbox}"},
		Reason:         reason, Message: msg, Type: corev1.EventTypeWarning,
		FirstTimestamp: at(first), LastTimestamp: at(last), Count: count,
		Source:              corev1.EventSource{Component: "kubelet", Host: "node-a"},
		ReportingController: "kubelet", ReportingInstance: "node-a",
	}
}

// nodeEvent is an Event about node-a as its kubelet records it (in the
// "default" namespace).
func nodeEvent(reason, msg string, first, last float64) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-a"},
		Reason:         reason, Message: msg, FirstTimestamp: at(first), LastTimestamp: at(last), Count: 1,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-a"},
	}
}

// forged is e as a tenant writes it: in its own namespace, the reporting
// fields copied from a real one.
func forged(e corev1.Event) corev1.Event {
	e.Namespace = "ns"
	return e
}

// livenessKill is what the kubelet records for a liveness kill of sbx-0:
// count failed probes from first to last, then the Killing at last.
func livenessKill(uid types.UID, first, last float64, count int32) []corev1.Event {
	return []corev1.Event{
		podEvent(uid, "Unhealthy", unhealthyMsg, first, last, count),
		podEvent(uid, "Killing", killingMsg, last, last, 1),
	}
}

// seriesEvent is an Event as written through events.k8s.io/v1 and read back
// as core/v1: eventTime and series, no first/last timestamps.
func seriesEvent(reason, msg string, first, last float64, count int32) corev1.Event {
	e := corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "sbx-0", UID: "uid-1", FieldPath: "spec.containers{sandbox}"},
		Reason:         reason, Message: msg, Type: corev1.EventTypeWarning,
		EventTime: metav1.NewMicroTime(t0.Add(time.Duration(first * float64(time.Second)))),
	}
	if count > 1 {
		e.Series = &corev1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(t0.Add(time.Duration(last * float64(time.Second))))}
	}
	return e
}

const (
	unhealthyMsg = "Liveness probe failed: Get \"http://10.0.0.5:8080/healthz\": context deadline exceeded"
	killingMsg   = "Container sandbox failed liveness probe, will be restarted"
)

type wantEvidence struct {
	kind model.EvidenceKind
	text string // substring
}

func TestClassify(t *testing.T) {
	healthyNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: at(-86400)},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastTransitionTime: at(-86400)},
	}}}
	notReadyNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: at(140), Message: "Kubelet stopped posting node status."},
	}}}

	tests := []struct {
		name     string
		pod      *corev1.Pod
		events   []corev1.Event
		node     *corev1.Node
		siblings []*corev1.Pod
		wantCode string // "" = no notice
		wantMsg  []string
		want     []wantEvidence
		notWant  []string
	}{
		{
			// Incident 003: blocked at ~100 s, probes fail at 100, 110, 120;
			// Killing at 120; SIGTERM ignored; SIGKILL at 150 (grace 30).
			name:     "liveness kill, SIGTERM ignored, predicted and actual within 1 s",
			pod:      killedPod(1, 0, 150.6),
			events:   livenessKill("uid-1", 100.2, 120.2, 3),
			node:     healthyNode,
			wantCode: model.CodeRestartLiveness,
			wantMsg:  []string{"killed by its liveness probe", "predicted 2026-11-29T17:02:30Z", "+0.4s"},
			want: []wantEvidence{
				{model.Claimed, "Unhealthy Event(s) \"Liveness probe failed\""},
				{model.Claimed, "3 failed probe(s)"},
				{model.Claimed, "Killing Event at 2026-11-29T17:02:00Z: Container sandbox failed liveness probe, will be restarted — an Event's claim (reported by \"kubelet\" on \"node-a\", the Pod's node)"},
				{model.Inferred, "the verdict stands on the Pod's spec (a liveness probe on container sandbox) and status"},
				{model.Observed, "lastState.terminated of container sandbox: reason Error, exit 137"},
				{model.Observed, "liveness probe: failureThreshold 3, periodSeconds 10; terminationGracePeriodSeconds 30"},
				{model.Inferred, "= 2026-11-29T17:01:40Z + (3 − 1) × 10s + 30s = 2026-11-29T17:02:30Z; actual termination 2026-11-29T17:02:30Z; difference +0.4s (tolerance ±10s)"},
				{model.Inferred, "exit 137: SIGTERM ignored"},
				{model.Inferred, "timing fits"},
			},
			notWant: []string{"NOT fit"},
		},
		{
			name:     "liveness kill, SIGTERM honoured (143) right after the Killing event",
			pod:      testPod(withProbe(5, 6, ptr.To[int64](60)), withLast(2, "Error", 143, 0, 226)),
			events:   livenessKill("uid-1", 200, 224, 5),
			wantCode: model.CodeRestartLiveness,
			want: []wantEvidence{
				{model.Inferred, "(5 − 1) × 6s + 60s"},
				{model.Inferred, "exit 143: SIGTERM honoured"},
				{model.Inferred, "actual − signal = +2s"},
				{model.Inferred, "the timing fits"},
				{model.Claimed, "Killing Event"},
			},
		},
		{
			name: "liveness with Kubernetes defaults, events written through events.k8s.io (eventTime + series)",
			pod:  testPod(withProbe(0, 0, nil), withLast(1, "Error", 137, 0, 50)),
			events: []corev1.Event{
				seriesEvent("Unhealthy", unhealthyMsg, 0, 20, 3),
				seriesEvent("Killing", killingMsg, 20, 20, 1),
			},
			wantCode: model.CodeRestartLiveness,
			want: []wantEvidence{
				{model.Observed, "failureThreshold 3, periodSeconds 10; terminationGracePeriodSeconds 30 (Kubernetes defaults for unset failureThreshold, periodSeconds, terminationGracePeriodSeconds)"},
				{model.Inferred, "= 2026-11-29T17:00:00Z + (3 − 1) × 10s + 30s = 2026-11-29T17:00:50Z"},
				{model.Inferred, "difference +0s"},
			},
		},
		{
			name: "liveness from failed probes and timing alone, Killing event gone",
			pod:  killedPod(1, 0, 151),
			events: []corev1.Event{
				podEvent("uid-1", "Unhealthy", unhealthyMsg, 100, 120, 3),
			},
			wantCode: model.CodeRestartLiveness,
			wantMsg:  []string{"(inferred: no Killing Event)", "confirm: kubectl describe pod -n ns sbx-0"},
			want: []wantEvidence{
				{model.Inferred, "no Killing Event for this run"},
				{model.Inferred, "difference +1s"},
				{model.Inferred, "verdict liveness kill is inferred"},
			},
		},
		{
			name: "liveness Event aggregated across runs: first failure counted back from the last",
			pod:  killedPod(2, 1000, 1150),
			events: []corev1.Event{
				podEvent("uid-1", "Unhealthy", unhealthyMsg, 100, 1120, 6),
				podEvent("uid-1", "Killing", killingMsg, 120, 1120, 2),
			},
			wantCode: model.CodeRestartLiveness,
			want: []wantEvidence{
				{model.Inferred, "aggregated across runs"},
				{model.Inferred, "2026-11-29T17:18:20Z + (3 − 1) × 10s + 30s = 2026-11-29T17:19:10Z"},
			},
		},
		{
			name: "probe-level terminationGracePeriodSeconds overrides the Pod's",
			pod: killedPod(1, 0, 125, func(p *corev1.Pod) {
				p.Spec.Containers[0].LivenessProbe.TerminationGracePeriodSeconds = ptr.To[int64](5)
			}),
			events:   livenessKill("uid-1", 100, 120, 3),
			wantCode: model.CodeRestartLiveness,
			want: []wantEvidence{
				{model.Observed, "terminationGracePeriodSeconds 5 (the probe's own"},
				{model.Inferred, "+ 5s = 2026-11-29T17:02:05Z"},
				{model.Inferred, "timing fits"},
			},
		},
		{
			// The kubelet sends SIGKILL when the grace period ends: a run that
			// ended 280 s after a Killing with 30 s of grace was not ended by it.
			name:     "liveness Killing the termination contradicts: set aside, the probe alone infers",
			pod:      killedPod(1, 0, 400),
			events:   livenessKill("uid-1", 100, 120, 3),
			wantCode: model.CodeRestartLiveness,
			wantMsg:  []string{"most likely its liveness probe (inferred"},
			want: []wantEvidence{
				{model.Claimed, "set aside: Killing Event at 2026-11-29T17:02:00Z"},
				{model.Claimed, "4m40s after this kill, later than its 30s grace period allows"},
			},
			notWant: []string{"killed by its liveness probe"},
		},
		{
			// Incident: a tenant-written Killing on a Pod with no liveness probe.
			name:     "forged liveness Events on a container without a liveness probe: never liveness",
			pod:      testPod(withLast(1, "Error", 137, 0, 150)),
			events:   []corev1.Event{forged(podEvent("uid-1", "Unhealthy", unhealthyMsg, 100, 120, 3)), forged(podEvent("uid-1", "Killing", killingMsg, 120, 120, 1))},
			node:     healthyNode,
			wantCode: model.CodeRestartUnexplained,
			want: []wantEvidence{
				{model.Observed, "no liveness probe configured on container sandbox"},
				{model.Claimed, "set aside: Killing Event at 2026-11-29T17:02:00Z \"Container sandbox failed liveness probe, will be restarted\": container sandbox has no liveness probe in the Pod's spec"},
				{model.Claimed, "set aside: Unhealthy Event at 2026-11-29T17:01:40Z–2026-11-29T17:02:00Z"},
				{model.Claimed, "reported by \"kubelet\" on \"node-a\", the Pod's node; recorded in namespace ns)"},
			},
			notWant: []string{"killed by its liveness probe", "liveness probe: failureThreshold", "most likely its liveness"},
		},
		{
			name: "liveness Events reported from another node are not the Pod's kubelet's",
			pod:  killedPod(1, 0, 150),
			events: func() []corev1.Event {
				evs := livenessKill("uid-1", 100, 120, 3)
				for i := range evs {
					evs[i].Source.Host, evs[i].ReportingInstance = "node-z", "node-z"
				}
				return evs
			}(),
			wantCode: model.CodeRestartLiveness,
			wantMsg:  []string{"most likely its liveness probe (inferred"},
			want:     []wantEvidence{{model.Claimed, "the Pod runs on node node-a and its kubelet records its Events from there, not from \"node-z\""}, {model.Claimed, "on \"node-z\", NOT node node-a"}},
			notWant:  []string{"killed by its liveness probe"},
		},
		{
			name:     "OOMKilled observed",
			pod:      testPod(withProbe(3, 10, nil), withMemLimit("256Mi"), withLast(3, "OOMKilled", 137, 0, 42)),
			events:   []corev1.Event{podEvent("uid-1", "Pulled", "Container image already present", 0, 0, 1)},
			node:     healthyNode,
			wantCode: model.CodeRestartOOM,
			wantMsg:  []string{"container sandbox restarted 3×: OOMKilled (exit 137) at 2026-11-29T17:00:42Z, memory limit 256Mi"},
			want: []wantEvidence{
				{model.Observed, "reason OOMKilled, exit 137"},
				{model.Observed, "memory limit 256Mi"},
				{model.Observed, "no Unhealthy/Killing liveness Event"},
				{model.Inferred, "no shutdown logs are expected"},
			},
			notWant: []string{"most likely"},
		},
		{
			// Incident 003 an hour later: the Events expired. The kubelet
			// reports a cgroup OOM kill as OOMKilled; reason Error with a
			// liveness probe is not OOM.
			name:     "exit 137 reason Error, liveness probe, Events expired: liveness inferred, never OOM",
			pod:      killedPod(3, 0, 150, withMemLimit("1Gi")),
			node:     healthyNode,
			wantCode: model.CodeRestartLiveness,
			wantMsg:  []string{"most likely its liveness probe (inferred", "not OOM", "kubectl describe pod -n ns sbx-0", "kubectl get events -n ns --field-selector involvedObject.name=sbx-0"},
			want: []wantEvidence{
				{model.Observed, "reason Error, exit 137"},
				{model.Observed, "no Events recorded for the Pod"},
				{model.Inferred, "so OOM is not concluded"},
				{model.Inferred, "did not stop on SIGTERM"},
				{model.Inferred, "block start + 60s"},
				{model.Inferred, "verdict liveness kill is inferred, not observed; confirm"},
			},
			notWant: []string{"out of memory", "OOM kill (node"},
		},
		{
			name:     "exit 137 without a liveness probe: unexplained, not OOM",
			pod:      testPod(withLast(1, "Error", 137, 0, 42)),
			node:     healthyNode,
			wantCode: model.CodeRestartUnexplained,
			wantMsg:  []string{"not recorded as OOMKilled", "inferred", "kubectl describe pod -n ns sbx-0"},
			want: []wantEvidence{
				{model.Observed, "reason Error, exit 137"},
				{model.Observed, "no liveness probe configured"},
				{model.Inferred, "OOM is not concluded"},
				{model.Inferred, "verdict unexplained SIGKILL is inferred"},
			},
			notWant: []string{"out of memory"},
		},
		{
			name: "exit 137 with a liveness probe, Events cover the run and show no failed probe: unexplained",
			pod:  killedPod(1, 0, 150),
			events: []corev1.Event{
				podEvent("uid-1", "Started", "Started container sandbox", 0, 0, 1),
			},
			wantCode: model.CodeRestartUnexplained,
			want:     []wantEvidence{{model.Observed, "no Unhealthy/Killing liveness Event in this run"}, {model.Inferred, "verdict unexplained SIGKILL"}},
		},
		{
			name:     "exit 137 with a kernel OOM reported by the node: OOM, inferred",
			pod:      killedPod(1, 0, 150),
			events:   []corev1.Event{nodeEvent("SystemOOM", "System OOM encountered, victim process: python, pid: 4242", 149, 149)},
			node:     healthyNode,
			wantCode: model.CodeRestartOOM,
			wantMsg:  []string{"kernel OOM kill", "inferred", "kubectl describe pod"},
			want: []wantEvidence{
				{model.Claimed, "node Event SystemOOM at 2026-11-29T17:02:29Z"},
				{model.Inferred, "verdict OOM kill (node-level evidence) is inferred"},
			},
		},
		{
			name:     "a node OOM Event written in a tenant's namespace is not the node's",
			pod:      testPod(withLast(1, "Error", 137, 0, 150)),
			events:   []corev1.Event{forged(nodeEvent("SystemOOM", "System OOM encountered, victim process: python, pid: 4242", 149, 149))},
			node:     healthyNode,
			wantCode: model.CodeRestartUnexplained,
			want:     []wantEvidence{{model.Claimed, "set aside: SystemOOM Event at 2026-11-29T17:02:29Z"}, {model.Claimed, "recorded in namespace \"ns\""}},
			notWant:  []string{"OOM kill (node"},
		},
		{
			name:     "an Evicted Event the Pod's status does not back is not an eviction",
			pod:      testPod(withLast(1, "Error", 137, 0, 150)),
			events:   []corev1.Event{forged(podEvent("uid-1", "Evicted", "The node was low on resource: memory.", 149, 149, 1))},
			node:     healthyNode,
			wantCode: model.CodeRestartUnexplained,
			want:     []wantEvidence{{model.Claimed, "set aside: Evicted Event at 2026-11-29T17:02:29Z"}, {model.Claimed, "the Pod's status records no eviction"}},
		},
		{
			name:     "a same-name predecessor's liveness Events are not this Pod's",
			pod:      killedPod(1, 0, 150),
			events:   livenessKill("uid-OLD", 100, 120, 3),
			wantCode: model.CodeRestartLiveness,
			want:     []wantEvidence{{model.Observed, "no Events recorded for the Pod"}, {model.Inferred, "verdict liveness kill is inferred"}},
			notWant:  []string{"Killing Event at"},
		},
		{
			name: "evicted Pod without container statuses",
			pod: testPod(func(p *corev1.Pod) {
				p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
				p.Status.Message = "The node was low on resource: memory."
			}),
			wantCode: model.CodeRestartEvicted,
			wantMsg:  []string{"Pod sbx-0 evicted"},
			want:     []wantEvidence{{model.Observed, "Pod status.reason Evicted: The node was low on resource: memory."}},
		},
		{
			name: "DisruptionTarget condition explains a SIGKILL",
			pod: testPod(withLast(1, "Error", 137, 0, 60), func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
					Reason: "TerminationByKubelet", Message: "node shutdown", LastTransitionTime: at(55)}}
			}),
			wantCode: model.CodeRestartEvicted,
			want: []wantEvidence{
				{model.Observed, "condition DisruptionTarget=True reason TerminationByKubelet"},
				{model.Inferred, "co-located Pods"},
			},
		},
		{
			name:     "node NotReady around the termination",
			pod:      testPod(withLast(1, "Error", 137, 0, 150)),
			node:     notReadyNode,
			wantCode: model.CodeRestartEvicted,
			want:     []wantEvidence{{model.Observed, "node node-a condition Ready=Unknown since 2026-11-29T17:02:20Z"}},
		},
		{
			name:     "node Event near a termination the kubelet lost",
			pod:      testPod(withLast(1, "Unknown", 255, 0, 150)),
			events:   []corev1.Event{nodeEvent("Rebooted", "Node node-a has been rebooted, boot id: 1234", 170, 170)},
			node:     healthyNode,
			wantCode: model.CodeRestartEvicted,
			want: []wantEvidence{
				{model.Observed, "container sandbox terminated with reason Unknown: the kubelet did not see it end"},
				{model.Claimed, "node Event Rebooted at 2026-11-29T17:02:50Z: Node node-a has been rebooted, boot id: 1234 — an Event's claim (reported by \"kubelet\" on \"node-a\", the Pod's node; recorded in namespace default)"},
			},
		},
		{
			name:     "node Event that neither the node's nor the Pod's status backs",
			pod:      testPod(withLast(1, "Error", 255, 0, 150)),
			events:   []corev1.Event{nodeEvent("Rebooted", "Node node-a has been rebooted, boot id: 1234", 170, 170)},
			node:     healthyNode,
			wantCode: model.CodeRestartUnexplained,
			want:     []wantEvidence{{model.Claimed, "set aside: Rebooted Event at 2026-11-29T17:02:50Z"}},
		},
		{
			name:     "node that recovered (became Ready) near the termination",
			pod:      testPod(withLast(1, "Error", 2, 0, 150)),
			node:     recoveredNode(metav1.NewTime(t0.Add(-48 * time.Hour))),
			wantCode: model.CodeRestartEvicted,
			want:     []wantEvidence{{model.Observed, "node node-a became Ready at 2026-11-29T17:02:40Z, +10s from the termination"}},
		},
		{
			name:     "a node's first Ready after registering is not a recovery",
			pod:      testPod(withLast(1, "Error", 2, 0, 150)),
			node:     recoveredNode(at(100)),
			wantCode: model.CodeRestartUnexplained,
		},
		{
			name:     "node Event long before the termination is not evidence",
			pod:      testPod(withLast(1, "Error", 1, 0, 3600)),
			events:   []corev1.Event{nodeEvent("Rebooted", "rebooted", 10, 10)},
			node:     healthyNode,
			wantCode: model.CodeRestartUnexplained,
		},
		{
			name:     "exit 1: unexplained, with what was checked and the commands that confirm",
			pod:      testPod(withLast(4, "Error", 1, 0, 30)),
			events:   []corev1.Event{podEvent("uid-1", "BackOff", "Back-off restarting failed container", 31, 31, 1)},
			node:     healthyNode,
			wantCode: model.CodeRestartUnexplained,
			wantMsg: []string{
				"not explained by OOM, liveness probe or eviction",
				"kubectl describe pod -n ns sbx-0",
				"kubectl get events -n ns --field-selector involvedObject.name=sbx-0",
			},
			want: []wantEvidence{
				{model.Observed, "checked: last termination: reason Error, exit 1"},
				{model.Observed, "no Unhealthy/Killing liveness Event in the run"},
				{model.Observed, "node node-a showed no NotReady/pressure condition"},
				{model.Inferred, "kubectl logs -n ns sbx-0 -c sandbox --previous"},
			},
		},
		{
			name: "restarted but no lastState recorded",
			pod: testPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sandbox", RestartCount: 2}}
			}),
			wantCode: model.CodeRestartUnexplained,
			want:     []wantEvidence{{model.Observed, "no lastState.terminated recorded"}, {model.Observed, "node conditions not available"}},
		},
		{
			name: "never restarted: nothing to explain",
			pod: testPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sandbox", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
			}),
		},
		{
			name: "dead Pod that exited 0 by itself: POD_DEAD's business, not forensics",
			pod: testPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodSucceeded
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sandbox", State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", ExitCode: 0}}}}
			}),
		},
		{
			name: "dead Pod OOM-killed (restartPolicy Never) is explained",
			pod: testPod(withMemLimit("1Gi"), func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sandbox", State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: at(5)}}}}
			}),
			wantCode: model.CodeRestartOOM,
			wantMsg:  []string{"container sandbox terminated: OOMKilled"},
			want:     []wantEvidence{{model.Observed, "state.terminated of container sandbox: reason OOMKilled"}},
		},
		{
			name:   "siblings: same image and probe are a control, others are not",
			pod:    killedPod(1, 0, 150),
			events: livenessKill("uid-1", 100, 120, 3),
			siblings: []*corev1.Pod{
				sibling("sbx-1", "registry.example/eval:1", 10, 0),
				sibling("sbx-2", "registry.example/eval:1", 10, 0),
				sibling("sbx-3", "registry.example/eval:1", 10, 0),
				sibling("sbx-4", "registry.example/eval:2", 10, 5), // other image
				sibling("sbx-5", "registry.example/eval:1", 30, 1), // other probe
				func() *corev1.Pod { // other memory limit
					p := sibling("sbx-6", "registry.example/eval:1", 10, 0)
					p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}
					return p
				}(),
				testPod(withProbe(3, 10, ptr.To[int64](30))), // the Pod itself
			},
			wantCode: model.CodeRestartLiveness,
			want: []wantEvidence{
				{model.Observed, "0 of 3 siblings (same image, liveness probe and memory limit) restarted"},
				{model.Inferred, "the cause is specific to this Pod's workload"},
				{model.Observed, "3 sibling(s) differ in image, liveness probe or memory limit: not used as a control"},
			},
		},
		{
			name:     "siblings that restarted too point at a shared cause",
			pod:      testPod(withProbe(3, 10, nil), withLast(1, "OOMKilled", 137, 0, 150)),
			siblings: []*corev1.Pod{sibling("sbx-1", "registry.example/eval:1", 10, 2), sibling("sbx-2", "registry.example/eval:1", 10, 0)},
			wantCode: model.CodeRestartOOM,
			want:     []wantEvidence{{model.Observed, "1 of 2 siblings (same image, liveness probe and memory limit) restarted (sbx-1)"}, {model.Inferred, "a shared cause"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := model.SlimPod(tc.pod)
			got := Classify(pod, tc.events, tc.node, slimAll(tc.siblings))
			if tc.wantCode == "" {
				if len(got) != 0 {
					t.Fatalf("want no notice, got %+v", got)
				}
				if Needed(pod) {
					t.Errorf("Needed = true for a Pod with nothing to explain")
				}
				return
			}
			if !Needed(pod) {
				t.Errorf("Needed = false")
			}
			if len(got) != 1 {
				t.Fatalf("want 1 notice, got %d: %+v", len(got), got)
			}
			n := got[0]
			dump := dumpNotice(n)
			t.Log("\n" + dump)
			if n.Code != tc.wantCode {
				t.Fatalf("code = %s, want %s\n%s", n.Code, tc.wantCode, dump)
			}
			if n.Severity != model.SeverityWarning || n.Pod != "sbx-0" {
				t.Errorf("severity %s pod %q, want warning sbx-0", n.Severity, n.Pod)
			}
			for _, m := range tc.wantMsg {
				if !strings.Contains(n.Message, m) {
					t.Errorf("message lacks %q\n%s", m, dump)
				}
			}
			for _, w := range tc.want {
				if !hasEvidence(n, w) {
					t.Errorf("no %s evidence containing %q\n%s", w.kind, w.text, dump)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(dump, nw) {
					t.Errorf("unexpected %q\n%s", nw, dump)
				}
			}
			for _, e := range n.Evidence {
				if e.Kind != model.Observed && e.Kind != model.Inferred && e.Kind != model.Claimed {
					t.Errorf("evidence without a kind: %+v", e)
				}
				// A line that states a conclusion is inferred, never observed.
				if e.Kind == model.Observed && (strings.Contains(e.Text, "verdict") || strings.Contains(e.Text, "is likely") ||
					strings.Contains(e.Text, "the cause is") || strings.Contains(e.Text, "came from") || strings.Contains(e.Text, "cannot be ruled out")) {
					t.Errorf("observed evidence states a conclusion: %q", e.Text)
				}
			}
			// Every inferred verdict says so and names the commands that confirm it.
			if strings.Contains(n.Message, "inferred") {
				if !strings.Contains(n.Message, "kubectl describe pod -n ns sbx-0") || !strings.Contains(n.Message, "kubectl get events -n ns") {
					t.Errorf("inferred verdict without the commands that confirm it: %s", n.Message)
				}
				if !hasEvidence(n, wantEvidence{model.Inferred, "is inferred, not observed"}) {
					t.Errorf("inferred verdict without its inferred verdict line\n%s", dump)
				}
			}
		})
	}
}

func recoveredNode(created metav1.Time) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", CreationTimestamp: created}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: at(160)},
	}}}
}

func sibling(name, image string, period int32, restarts int32) *corev1.Pod {
	p := testPod(withProbe(3, period, ptr.To[int64](30)))
	p.Name, p.UID = name, types.UID("uid-"+name)
	p.Spec.Containers[0].Image = image
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sandbox", RestartCount: restarts}}
	return p
}

func hasEvidence(n model.Notice, w wantEvidence) bool {
	for _, e := range n.Evidence {
		if e.Kind == w.kind && strings.Contains(e.Text, w.text) {
			return true
		}
	}
	return false
}

func dumpNotice(n model.Notice) string {
	var b strings.Builder
	b.WriteString(n.Code + ": " + n.Message + "\n")
	for _, e := range n.Evidence {
		b.WriteString("  " + string(e.Kind) + ": " + e.Text + "\n")
	}
	return b.String()
}

func TestClassifyMultipleContainers(t *testing.T) {
	pod := testPod(withLast(1, "OOMKilled", 137, 0, 10))
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "egress", Image: "egress:1",
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}}})
	pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
		Name: "egress", RestartCount: 1,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2, FinishedAt: at(20)}},
	})
	// A Killing Event for the egress container must not be taken for the sandbox container.
	ev := podEvent("uid-1", "Killing", "Container egress failed liveness probe, will be restarted", 8, 8, 1)
	ev.InvolvedObject.FieldPath = "spec.containers{egress}"
	got := Classify(model.SlimPod(pod), []corev1.Event{ev}, nil, nil)
	if len(got) != 2 || got[0].Code != model.CodeRestartOOM || got[1].Code != model.CodeRestartLiveness {
		t.Fatalf("got %+v", got)
	}
	if hasEvidence(got[0], wantEvidence{model.Claimed, "a liveness Killing Event exists too"}) {
		t.Errorf("egress Killing event attributed to sandbox container:\n%s", dumpNotice(got[0]))
	}
}

func TestEventSpan(t *testing.T) {
	e := seriesEvent("Unhealthy", "x", 5, 25, 3)
	first, last := EventSpan(&e)
	if !first.Equal(t0.Add(5*time.Second)) || !last.Equal(t0.Add(25*time.Second)) {
		t.Fatalf("series span = %v..%v", first, last)
	}
	c := podEvent("u", "Unhealthy", "x", 1, 9, 2)
	first, last = EventSpan(&c)
	if !first.Equal(t0.Add(time.Second)) || !last.Equal(t0.Add(9*time.Second)) {
		t.Fatalf("core span = %v..%v", first, last)
	}
}

// slimAll converts siblings the way the informer transform would.
func slimAll(pods []*corev1.Pod) []*model.Pod {
	out := make([]*model.Pod, len(pods))
	for i, p := range pods {
		out[i] = model.SlimPodWithLimits(p)
	}
	return out
}
