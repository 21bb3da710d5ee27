package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// The engines' reconcile: what the OpenSandbox and agent-sandbox controllers
// write into their objects' annotations and status from the Pods they find.

// reconcile is the engine's reconcile of sb (plain Pod sandboxes have
// none), called right after a change to its Pods: a watch-driven
// controller reflects a change within moments.
func (s *Sim) reconcile(ctx context.Context, sb *sandbox) error {
	if sb == nil || sb.gone {
		return nil
	}
	switch sb.engine {
	case EngineBatch, EnginePooled:
		return s.reconcileBatch(ctx, sb, true)
	case EngineAgent:
		return s.reconcileAgent(ctx, sb)
	}
	return nil
}

// reconcileBatch writes what the OpenSandbox controller writes: the
// endpoints annotation from every Pod it finds (dead ones included) and the
// status counters and phase. Pod phase Failed/Succeeded is not looked at.
func (s *Sim) reconcileBatch(ctx context.Context, sb *sandbox, endpoints bool) error {
	if sb.obj == nil {
		return nil
	}
	if sb.pool == nil && !slices.ContainsFunc(sb.pods, func(p *simPod) bool { return p != nil && p.obj != nil }) && sb.obj.Object["status"] == nil {
		return nil // nothing is written until a Pod exists
	}
	var st batchStatus
	// Non-pooled: built only from the Pods found, in index order ([] while
	// a deleted Pod is not re-created yet). Pooled: a slot per allocated Pod.
	var eps []string
	if sb.pool != nil {
		eps = make([]string, len(sb.pods))
	}
	var allocPods []string
	waitingFailure, failedPod, failed := "", "", 0
	for i, p := range sb.pods {
		if p == nil || p.obj == nil {
			continue
		}
		pod := p.obj
		allocPods = append(allocPods, pod.Name)
		st.Replicas++
		if sb.pool != nil {
			eps[i] = pod.Status.PodIP
		} else {
			eps = append(eps, pod.Status.PodIP)
		}
		if pod.Spec.NodeName != "" || pod.Status.PodIP != "" {
			st.Allocated++
		}
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && podReady(pod) {
			st.Ready++
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				switch w.Reason {
				case "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError":
					if failedPod != pod.Name {
						failed++
					}
					waitingFailure, failedPod = w.Reason, pod.Name
				}
			}
		}
	}
	if sb.pool != nil {
		// Pooled: the controller lists what alloc-status says, found or not.
		allocPods = nil
		for _, p := range sb.pods {
			if p != nil {
				allocPods = append(allocPods, p.name())
			}
		}
		st.Replicas = int32(len(allocPods))
	}
	// The controller's conditions (false ones are removed). Failed is sticky:
	// once written it keeps its first summary.
	switch {
	case sb.failedStuck || waitingFailure != "":
		st.Phase = "Failed"
		if waitingFailure != "" && sb.failedMsg == "" {
			sb.failedMsg = fmt.Sprintf("%d/%d observed pods failed; primary reason=%s; sample pod=%s", max(failed, 1), st.Replicas, waitingFailure, failedPod)
		}
		if sb.failedMsg == "" {
			sb.failedMsg = fmt.Sprintf("1/1 observed pods failed; primary reason=ImagePullBackOff; sample pod=%s-0", sb.name)
		}
		sb.failedStuck = true
		st.Conditions = []map[string]any{condition("PodFailed", "True", "PodFailed", sb.failedMsg, s.now)}
	case st.Ready >= 1:
		st.Phase = "Succeed"
		st.Conditions = []map[string]any{condition("Ready", "True", "PodsReady", "Sandbox is running", s.now)}
	default:
		st.Phase = "Pending"
		st.Conditions = []map[string]any{condition("Progressing", "True", "Creating", "Sandbox is being created", s.now)}
	}
	if eps == nil {
		eps = []string{}
	}
	desired := jsonString(eps)
	ann := sb.obj.GetAnnotations()
	if endpoints && sb.scenario != BadAnnotation && ann[osv1.AnnotationEndpoints] != desired || (sb.pool != nil && ann[osv1.AnnotationAllocStatus] == "") {
		obj, err := s.mutateCR(ctx, BatchSandboxGVR, sb.obj, false, "endpoints "+desired, func(u *unstructured.Unstructured) {
			a := u.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			if sb.scenario != BadAnnotation {
				a[osv1.AnnotationEndpoints] = desired
			}
			if sb.pool != nil {
				a[osv1.AnnotationAllocStatus] = jsonString(map[string][]string{"pods": allocPods})
			}
			u.SetAnnotations(a)
		})
		if err != nil {
			return err
		}
		sb.obj = obj
	}
	statusObj := st.object(sb.obj.GetGeneration())
	if cur, ok := sb.obj.Object["status"].(map[string]any); ok && sameBatchStatus(cur, statusObj) {
		return nil
	}
	obj, err := s.mutateCR(ctx, BatchSandboxGVR, sb.obj, true, "phase "+st.Phase, func(u *unstructured.Unstructured) {
		u.Object["status"] = statusObj
	})
	if err != nil {
		return err
	}
	sb.obj = obj
	return nil
}

// batchStatus is BatchSandbox status with every counter the real CRD requires.
type batchStatus struct {
	Replicas, Allocated, Ready                                     int32
	TaskRunning, TaskSucceed, TaskFailed, TaskPending, TaskUnknown int32
	Phase                                                          string
	Conditions                                                     []map[string]any
}

func (b batchStatus) object(generation int64) map[string]any {
	m := map[string]any{
		"replicas": int64(b.Replicas), "allocated": int64(b.Allocated), "ready": int64(b.Ready),
		"taskRunning": int64(b.TaskRunning), "taskSucceed": int64(b.TaskSucceed), "taskFailed": int64(b.TaskFailed),
		"taskPending": int64(b.TaskPending), "taskUnknown": int64(b.TaskUnknown),
		"observedGeneration": generation,
	}
	if b.Phase != "" {
		m["phase"] = b.Phase
	}
	if len(b.Conditions) > 0 {
		conds := make([]any, len(b.Conditions))
		for i, c := range b.Conditions {
			conds[i] = c
		}
		m["conditions"] = conds
	}
	return m
}

// condition is a status condition as the engines write it.
func condition(typ, status, reason, message string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": at.UTC().Format(time.RFC3339)}
}

// sameBatchStatus compares what matters, ignoring condition timestamps.
func sameBatchStatus(a, b map[string]any) bool {
	for _, k := range []string{"replicas", "allocated", "ready", "phase"} {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			return false
		}
	}
	return fmt.Sprint(condTypes(a)) == fmt.Sprint(condTypes(b))
}

func condTypes(m map[string]any) []string {
	var out []string
	list, _ := m["conditions"].([]any)
	for _, c := range list {
		if cm, ok := c.(map[string]any); ok {
			out = append(out, fmt.Sprint(cm["type"], cm["status"]))
		}
	}
	return out
}

// reconcileAgent writes the agent-sandbox controller's status: selector,
// podIPs (kept while the Pod object exists, whatever its phase), node, Ready.
func (s *Sim) reconcileAgent(ctx context.Context, sb *sandbox) error {
	if sb.obj == nil || len(sb.pods) == 0 || sb.expired {
		return nil // an expired Sandbox's status stays wiped (expiry.go)
	}
	status := map[string]any{
		"selector":    agentsandbox.LabelNameHash + "=" + nameHash(sb.name),
		"serviceFQDN": fmt.Sprintf("%s.%s.svc.cluster.local", sb.name, sb.ns),
		"service":     sb.name,
	}
	// As the controller words it: DependenciesNotReady until the Pod is
	// Ready (a crash loop included), PodSucceeded/PodFailed with Finished
	// True once the main container has exited (podIPs kept).
	ready, reason, msg := "False", "DependenciesNotReady", "Pod exists with phase: Pending"
	finished := false
	if p := sb.pods[0]; p != nil && p.obj != nil {
		if ip := p.obj.Status.PodIP; ip != "" {
			status["podIPs"] = []any{ip}
		}
		status["nodeName"] = p.obj.Spec.NodeName
		msg = "Pod exists with phase: " + string(p.obj.Status.Phase)
		switch {
		case podReady(p.obj):
			ready, reason, msg = "True", "DependenciesReady", "Pod is Ready; Service Exists"
		case p.obj.Status.Phase == corev1.PodSucceeded || p.obj.Status.Phase == corev1.PodFailed:
			reason, finished = "Pod"+string(p.obj.Status.Phase), true
		}
	}
	conds := []any{condition("Ready", ready, reason, msg, s.now)}
	if finished {
		conds = append(conds, condition("Finished", "True", reason, msg, s.now))
	}
	status["conditions"] = conds
	if cur, ok := sb.obj.Object["status"].(map[string]any); ok &&
		fmt.Sprint(cur["podIPs"], cur["nodeName"], condTypes(cur)) == fmt.Sprint(status["podIPs"], status["nodeName"], condTypes(status)) {
		return nil
	}
	obj, err := s.mutateCR(ctx, AgentSandboxGVR(s.cfg.AgentVersion), sb.obj, true, "ready "+ready, func(u *unstructured.Unstructured) {
		u.Object["status"] = status
	})
	if err != nil {
		return err
	}
	sb.obj = obj
	return nil
}
