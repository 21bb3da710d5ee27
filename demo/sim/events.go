package sim

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Events (core/v1), recorded as client-go's event correlator does.

// eventKey is what the correlator aggregates Events by.
type eventKey struct {
	uid             types.UID
	reason, message string
}

// controllerEvent records an Event of the BatchSandbox controller about
// sb's object. A repeat of the same reason and message bumps its count, as
// client-go's event correlator does.
func (s *Sim) controllerEvent(ctx context.Context, sb *sandbox, reason, message string) error {
	if sb.obj == nil {
		return nil
	}
	return s.correlateEvent(ctx, sb, eventKey{sb.obj.GetUID(), reason, message}, sb.ns, sb.name, func(ts metav1.Time) *corev1.Event {
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s", sb.name, s.hex(16)), Namespace: sb.ns},
			InvolvedObject: corev1.ObjectReference{
				Kind: "BatchSandbox", APIVersion: BatchSandboxGVR.GroupVersion().String(), Namespace: sb.ns, Name: sb.name,
				UID: sb.obj.GetUID(), ResourceVersion: sb.obj.GetResourceVersion(),
			},
			Reason: reason, Message: message, Type: corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: "batchsandbox-controller"},
			FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
			ReportingController: "batchsandbox-controller",
		}
		s.stamp(ev)
		return ev
	})
}

// recordEvent writes a kubelet Event about pod. A repeat of the same reason
// and message bumps count and lastTimestamp of the existing Event, as the
// kubelet's correlator does; firstTimestamp stays the first occurrence.
func (s *Sim) recordEvent(ctx context.Context, sb *sandbox, pod *corev1.Pod, eventType, reason, message string) error {
	return s.correlateEvent(ctx, sb, eventKey{pod.UID, reason, message}, pod.Namespace, pod.Name, func(ts metav1.Time) *corev1.Event {
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s", pod.Name, s.hex(16)), Namespace: pod.Namespace},
			InvolvedObject: corev1.ObjectReference{
				Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
				APIVersion: "v1", ResourceVersion: pod.ResourceVersion, FieldPath: "spec.containers{" + osv1.ContainerSandbox + "}",
			},
			Reason: reason, Message: message, Type: eventType,
			Source:         corev1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName},
			FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
			ReportingController: "kubelet", ReportingInstance: pod.Spec.NodeName,
		}
		if reason == "Evicted" {
			ev.InvolvedObject.FieldPath = ""
		}
		s.stamp(ev)
		return ev
	})
}

// kubeletEvent records a kubelet Event about pod as recordEvent does, but
// named and identified without the seeded generator: these Events were
// added after the fleet's scenarios were tuned, and drawing from the
// generator for them would change every seeded fleet. Pods of no sandbox
// (a Pool's warm Pods) get none: the correlator's memory is the sandbox's.
func (s *Sim) kubeletEvent(ctx context.Context, sb *sandbox, pod *corev1.Pod, eventType, reason, message string) error {
	if sb == nil || pod == nil {
		return nil
	}
	return s.correlateEvent(ctx, sb, eventKey{pod.UID, reason, message}, pod.Namespace, pod.Name, func(ts metav1.Time) *corev1.Event {
		s.kubeletEvents++
		name := fmt.Sprintf("%s.%016x", pod.Name, s.kubeletEvents)
		source, component := corev1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName}, "kubelet"
		fieldPath := "spec.containers{" + osv1.ContainerSandbox + "}"
		if reason == "Scheduled" || reason == "FailedScheduling" {
			source, component, fieldPath = corev1.EventSource{Component: "default-scheduler"}, "default-scheduler", ""
		}
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace},
			InvolvedObject: corev1.ObjectReference{
				Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
				APIVersion: "v1", ResourceVersion: pod.ResourceVersion, FieldPath: fieldPath,
			},
			Reason: reason, Message: message, Type: eventType, Source: source,
			FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
			ReportingController: component, ReportingInstance: source.Host,
		}
		if s.cfg.EmulateServer {
			ev.UID = types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(pod.Namespace+"/"+name)).String())
			ev.CreationTimestamp = ts
		}
		return ev
	})
}

// correlateEvent records an Event as client-go's event correlator does: a
// repeat of the same key (object, reason, message) bumps the count and
// lastTimestamp of the Event recorded before (firstTimestamp stays the
// first occurrence); else mk builds a new one, created now.
func (s *Sim) correlateEvent(ctx context.Context, sb *sandbox, key eventKey, ns, about string, mk func(ts metav1.Time) *corev1.Event) error {
	ts := metav1.NewTime(s.now)
	events := s.kube.CoreV1().Events(ns)
	if prev, ok := sb.events[key]; ok {
		next := prev.DeepCopy()
		next.Count++
		next.LastTimestamp = ts
		out, err := events.Update(ctx, next, metav1.UpdateOptions{})
		if err == nil {
			sb.events[key] = out
			s.op("update", "events", ns, out.Name, fmt.Sprintf("%s x%d", key.reason, out.Count))
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("updating event %s on %s/%s: %w", key.reason, ns, about, err)
		}
	}
	out, err := events.Create(ctx, mk(ts), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("recording event %s on %s/%s: %w", key.reason, ns, about, err)
	}
	sb.events[key] = out
	s.op("create", "events", ns, out.Name, key.reason)
	return nil
}
