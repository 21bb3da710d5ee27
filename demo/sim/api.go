package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// fieldManager names the simulator in managedFields, like a controller would.
const fieldManager = "sandscope-sim"

// Every method here is called with s.mu held, from an event.

func (s *Sim) op(verb, resource, ns, name, detail string) {
	s.ops++
	if s.cfg.OnOp != nil {
		s.cfg.OnOp(Op{At: s.now, Verb: verb, Resource: resource, Namespace: ns, Name: name, Detail: detail})
	}
}

// newUID is a UUID4 drawn from the seeded generator, so UIDs (and sandbox
// ids) repeat with the seed.
func (s *Sim) newUID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(s.rng.Intn(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

func (s *Sim) hex(n int) string {
	const digits = "0123456789abcdef"
	var sb strings.Builder
	for range n {
		sb.WriteByte(digits[s.rng.Intn(16)])
	}
	return sb.String()
}

// stamp sets what a real API server sets on create, when emulating one.
func (s *Sim) stamp(m metav1.Object) {
	if !s.cfg.EmulateServer {
		return
	}
	m.SetUID(types.UID(s.newUID()))
	m.SetCreationTimestamp(metav1.NewTime(s.now.Add(-s.backdate)))
	m.SetGeneration(1)
}

// --- Pods ---

func (s *Sim) createPod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	s.stamp(pod)
	status := pod.Status
	created, err := s.kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return nil, fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	s.op("create", "pods", pod.Namespace, pod.Name, string(created.UID))
	if s.cfg.EmulateServer || status.Phase == "" {
		return created, nil
	}
	created.Status = status
	return s.writePod(ctx, created, true, "initial status")
}

// mutatePod applies fn to a copy of pod and writes it (status: through the
// status subresource). On a conflict it re-reads the Pod and applies fn again.
func (s *Sim) mutatePod(ctx context.Context, pod *corev1.Pod, status bool, detail string, fn func(*corev1.Pod)) (*corev1.Pod, error) {
	next := pod.DeepCopy()
	fn(next)
	out, err := s.writePod(ctx, next, status, detail)
	if apierrors.IsConflict(err) {
		cur, gerr := s.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, fmt.Errorf("re-reading pod %s/%s after a conflict: %w", pod.Namespace, pod.Name, gerr)
		}
		fn(cur)
		out, err = s.writePod(ctx, cur, status, detail)
	}
	return out, err
}

func (s *Sim) writePod(ctx context.Context, pod *corev1.Pod, status bool, detail string) (*corev1.Pod, error) {
	pods := s.kube.CoreV1().Pods(pod.Namespace)
	return write(ctx, s, "pod", "pods", pod, status, detail, pods.Update, pods.UpdateStatus)
}

// write updates obj, through the status subresource when status is set, and
// logs the operation. noun names the kind in the error, resource in the log.
func write[T metav1.Object](ctx context.Context, s *Sim, noun, resource string, obj T, status bool, detail string,
	update, updateStatus func(context.Context, T, metav1.UpdateOptions) (T, error)) (T, error) {
	verb, call := "update", update
	if status {
		verb, call = "status", updateStatus
	}
	out, err := call(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager})
	if err != nil {
		var none T
		return none, fmt.Errorf("writing %s %s/%s (%s): %w", noun, obj.GetNamespace(), obj.GetName(), detail, err)
	}
	s.op(verb, resource, obj.GetNamespace(), obj.GetName(), detail)
	return out, nil
}

// deletePod deletes a Pod. With hold, the Pod stays Terminating: a finalizer
// keeps it on a real server; against a fake the deletionTimestamp is set by
// an update. Returns the Pod as it now is (nil when gone).
func (s *Sim) deletePod(ctx context.Context, pod *corev1.Pod, hold bool, finalizer string) (*corev1.Pod, error) {
	if hold {
		grace := int64(30)
		if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		if s.cfg.EmulateServer {
			return s.mutatePod(ctx, pod, false, "deleting, held by "+finalizer, func(p *corev1.Pod) {
				addFinalizer(p, finalizer)
				// As the API server: the end of the grace period, the
				// request time plus the grace granted (stamping the request
				// time made the deletion read as asked for before the Pod
				// was created).
				ts := metav1.NewTime(s.now.Add(time.Duration(grace) * time.Second))
				p.DeletionTimestamp = &ts
				p.DeletionGracePeriodSeconds = &grace
			})
		}
		held, err := s.mutatePod(ctx, pod, false, "finalizer "+finalizer, func(p *corev1.Pod) { addFinalizer(p, finalizer) })
		if err != nil {
			return nil, err
		}
		if err := s.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
			return nil, fmt.Errorf("deleting pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		s.op("delete", "pods", pod.Namespace, pod.Name, "held by "+finalizer)
		cur, err := s.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return held, nil
		}
		return cur, nil
	}
	if len(pod.Finalizers) > 0 {
		if _, err := s.mutatePod(ctx, pod, false, "finalizers removed", func(p *corev1.Pod) { p.Finalizers = nil }); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	// No kubelet confirms a graceful deletion here: delete at once.
	zero := int64(0)
	err := s.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("deleting pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	s.op("delete", "pods", pod.Namespace, pod.Name, string(pod.UID))
	return nil, nil
}

// bindPod binds an unbound Pod to node, as the scheduler does: through the
// binding subresource on a real server (spec.nodeName cannot be updated);
// a fake has no binding, so there an update sets it.
func (s *Sim) bindPod(ctx context.Context, pod *corev1.Pod, node string) (*corev1.Pod, error) {
	if s.cfg.EmulateServer {
		return s.mutatePod(ctx, pod, false, "bound to "+node, func(p *corev1.Pod) { p.Spec.NodeName = node })
	}
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := s.kube.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("binding pod %s/%s to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	s.op("bind", "pods", pod.Namespace, pod.Name, node)
	out, err := s.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s after binding: %w", pod.Namespace, pod.Name, err)
	}
	return out, nil
}

// deletePodGracefully starts a Pod's deletion and leaves it Terminating for
// its kubelet to finish (finishPodDeletion): a bound Pod on a real server
// stays until then; a fake needs the deletionTimestamp set by an update.
func (s *Sim) deletePodGracefully(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	grace := int64(30)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if s.cfg.EmulateServer {
		return s.mutatePod(ctx, pod, false, "deleting", func(p *corev1.Pod) {
			ts := metav1.NewTime(s.now.Add(time.Duration(grace) * time.Second))
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
		})
	}
	pods := s.kube.CoreV1().Pods(pod.Namespace)
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &pod.UID}}); err != nil {
		return nil, fmt.Errorf("deleting pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	s.op("delete", "pods", pod.Namespace, pod.Name, "graceful "+string(pod.UID))
	out, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s after deleting it: %w", pod.Namespace, pod.Name, err)
	}
	return out, nil
}

func addFinalizer(m metav1.Object, f string) {
	for _, have := range m.GetFinalizers() {
		if have == f {
			return
		}
	}
	m.SetFinalizers(append(m.GetFinalizers(), f))
}

// --- custom resources ---

func (s *Sim) createCR(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s.stamp(obj)
	status, hasStatus := obj.Object["status"]
	created, err := s.dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return nil, fmt.Errorf("creating %s %s/%s: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
	s.op("create", gvr.Resource, obj.GetNamespace(), obj.GetName(), string(created.GetUID()))
	if s.cfg.EmulateServer || !hasStatus {
		return created, nil
	}
	created.Object["status"] = status
	return s.writeCR(ctx, gvr, created, true, "initial status")
}

func (s *Sim) mutateCR(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, status bool, detail string, fn func(*unstructured.Unstructured)) (*unstructured.Unstructured, error) {
	next := obj.DeepCopy()
	fn(next)
	out, err := s.writeCR(ctx, gvr, next, status, detail)
	if apierrors.IsConflict(err) {
		cur, gerr := s.dyn.Resource(gvr).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if gerr != nil {
			return nil, fmt.Errorf("re-reading %s %s/%s after a conflict: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), gerr)
		}
		fn(cur)
		out, err = s.writeCR(ctx, gvr, cur, status, detail)
	}
	return out, err
}

func (s *Sim) writeCR(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, status bool, detail string) (*unstructured.Unstructured, error) {
	res := s.dyn.Resource(gvr).Namespace(obj.GetNamespace())
	update := func(ctx context.Context, u *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
		return res.Update(ctx, u, opts)
	}
	return write(ctx, s, gvr.Resource, gvr.Resource, obj, status, detail, update, res.UpdateStatus)
}

// deleteCR deletes a custom resource; with hold it stays Terminating on
// finalizer (real server: the finalizer holds it; fake: an update sets the
// deletionTimestamp).
func (s *Sim) deleteCR(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, hold bool, finalizer string) (*unstructured.Unstructured, error) {
	res := s.dyn.Resource(gvr).Namespace(obj.GetNamespace())
	if hold {
		if s.cfg.EmulateServer {
			return s.mutateCR(ctx, gvr, obj, false, "deleting, held by "+finalizer, func(u *unstructured.Unstructured) {
				addFinalizer(u, finalizer)
				ts := metav1.NewTime(s.now)
				u.SetDeletionTimestamp(&ts)
				zero := int64(0)
				u.SetDeletionGracePeriodSeconds(&zero)
			})
		}
		held, err := s.mutateCR(ctx, gvr, obj, false, "finalizer "+finalizer, func(u *unstructured.Unstructured) { addFinalizer(u, finalizer) })
		if err != nil {
			return nil, err
		}
		if err := res.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil {
			return nil, fmt.Errorf("deleting %s %s/%s: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
		}
		s.op("delete", gvr.Resource, obj.GetNamespace(), obj.GetName(), "held by "+finalizer)
		cur, err := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return held, nil
		}
		return cur, nil
	}
	if len(obj.GetFinalizers()) > 0 {
		if _, err := s.mutateCR(ctx, gvr, obj, false, "finalizers removed", func(u *unstructured.Unstructured) { u.SetFinalizers(nil) }); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	uid := obj.GetUID()
	err := res.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("deleting %s %s/%s: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
	s.op("delete", gvr.Resource, obj.GetNamespace(), obj.GetName(), string(uid))
	return nil, nil
}
