package model

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/internal/mem"
)

// ObjectMeta is the part of metav1.ObjectMeta that sandscope reads, with the
// same field names, so code reads like code over API objects; the
// creationTimestamp and the finalizers, kept compact in every object the
// fleet holds, are read through Created and Finalizers. It leaves out
// what sandscope never reads (generateName, selfLink, generation,
// annotations, managedFields), the deletionGracePeriodSeconds, which only a
// Pod's deletion reads (a Pod keeps it, see
// Pod.GetDeletionGracePeriodSeconds), and the resourceVersion: the
// reflector reads that from the object as decoded, before the transform
// makes this one, and nothing reads it after (BatchSandbox, decoded
// straight into the model, keeps its own). Labels are a sorted list
// (Labels). The engines' annotations are parsed into typed fields by
// the conversions (BatchSandbox.Endpoints, ...).
//
// *ObjectMeta implements metav1.Object, which the informer machinery uses
// to key, version and delete cached objects. Fields it does not keep read
// as empty and ignore writes, as metav1.Common allows.
type ObjectMeta struct {
	Name      string
	Namespace string
	UID       types.UID
	// created is metadata.creationTimestamp as Unix nanoseconds, 0 when
	// unset: a word where a time.Time took three, in every Pod and every
	// sandbox object the fleet keeps. The API server sets it, always well
	// within what an int64 of nanoseconds holds (1678 to 2262). Read it
	// through Created, set it through SetCreated.
	created           int64
	DeletionTimestamp *metav1.Time
	Labels            Labels
	OwnerReferences   []OwnerReference
	// finalizers is the list of metadata.finalizers, nil when there are
	// none: a pointer to a list shared among the objects that carry an
	// equal one (mem.StringLists.ShareRef), where a slice header took three
	// words in every object. Read it through Finalizers, set it through
	// SetFinalizers.
	finalizers *[]string
}

// Created is the object's creationTimestamp, the zero time when unset.
func (m *ObjectMeta) Created() time.Time {
	if m.created == 0 {
		return time.Time{}
	}
	return time.Unix(0, m.created)
}

// SetCreated sets the creationTimestamp; the zero time unsets it.
func (m *ObjectMeta) SetCreated(t time.Time) {
	if t.IsZero() {
		m.created = 0
		return
	}
	m.created = t.UnixNano()
}

// Finalizers is metadata.finalizers, read only (it may be shared).
func (m *ObjectMeta) Finalizers() []string {
	if m.finalizers == nil {
		return nil
	}
	return *m.finalizers
}

// SetFinalizers keeps finalizers (nil for none). The list is kept as it is,
// so the caller must not change it afterwards.
func (m *ObjectMeta) SetFinalizers(finalizers []string) {
	if finalizers == nil {
		m.finalizers = nil
		return
	}
	m.finalizers = &finalizers
}

// SetSharedFinalizers keeps a list shared with other objects (see
// mem.StringLists.ShareRef), nil for none.
func (m *ObjectMeta) SetSharedFinalizers(finalizers *[]string) { m.finalizers = finalizers }

// OwnerReference is what the model reads of an owner reference: which
// engine object a Pod belongs to. The owner's UID and the controller flags
// are not kept.
type OwnerReference struct {
	APIVersion string
	Kind       string
	Name       string
}

var _ metav1.Object = (*ObjectMeta)(nil)

func (m *ObjectMeta) GetNamespace() string                { return m.Namespace }
func (m *ObjectMeta) SetNamespace(namespace string)       { m.Namespace = namespace }
func (m *ObjectMeta) GetName() string                     { return m.Name }
func (m *ObjectMeta) SetName(name string)                 { m.Name = name }
func (m *ObjectMeta) GetUID() types.UID                   { return m.UID }
func (m *ObjectMeta) SetUID(uid types.UID)                { m.UID = uid }
func (m *ObjectMeta) GetResourceVersion() string          { return "" }
func (m *ObjectMeta) SetResourceVersion(string)           {}
func (m *ObjectMeta) GetCreationTimestamp() metav1.Time   { return metav1.NewTime(m.Created()) }
func (m *ObjectMeta) SetCreationTimestamp(t metav1.Time)  { m.SetCreated(t.Time) }
func (m *ObjectMeta) GetDeletionTimestamp() *metav1.Time  { return m.DeletionTimestamp }
func (m *ObjectMeta) SetDeletionTimestamp(t *metav1.Time) { m.DeletionTimestamp = t }
func (m *ObjectMeta) GetLabels() map[string]string        { return m.Labels.Map() }
func (m *ObjectMeta) SetLabels(labels map[string]string)  { m.Labels = LabelsFrom(labels) }
func (m *ObjectMeta) GetFinalizers() []string             { return m.Finalizers() }

// GetOwnerReferences returns the references as the API types, without the
// UIDs and flags ObjectMeta does not keep.
func (m *ObjectMeta) GetOwnerReferences() []metav1.OwnerReference {
	if m.OwnerReferences == nil {
		return nil
	}
	out := make([]metav1.OwnerReference, len(m.OwnerReferences))
	for i, r := range m.OwnerReferences {
		out[i] = metav1.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name}
	}
	return out
}
func (m *ObjectMeta) SetOwnerReferences(refs []metav1.OwnerReference) {
	m.OwnerReferences = ownerRefsOf(refs)
}

// ownerRefsOf keeps what OwnerReference holds of refs (nil for none).
func ownerRefsOf(refs []metav1.OwnerReference) []OwnerReference {
	if len(refs) == 0 {
		return nil
	}
	out := make([]OwnerReference, len(refs))
	for i, r := range refs {
		out[i] = OwnerReference{APIVersion: mem.Intern(r.APIVersion), Kind: mem.Intern(r.Kind), Name: r.Name}
	}
	return out
}

// Not kept: they read as empty and ignore writes.

func (m *ObjectMeta) GetGenerateName() string                                    { return "" }
func (m *ObjectMeta) SetGenerateName(string)                                     {}
func (m *ObjectMeta) GetGeneration() int64                                       { return 0 }
func (m *ObjectMeta) SetGeneration(int64)                                        {}
func (m *ObjectMeta) GetSelfLink() string                                        { return "" }
func (m *ObjectMeta) SetSelfLink(string)                                         {}
func (m *ObjectMeta) GetAnnotations() map[string]string                          { return nil }
func (m *ObjectMeta) SetAnnotations(map[string]string)                           {}
func (m *ObjectMeta) GetManagedFields() []metav1.ManagedFieldsEntry              { return nil }
func (m *ObjectMeta) SetManagedFields(managedFields []metav1.ManagedFieldsEntry) {}
func (m *ObjectMeta) GetDeletionGracePeriodSeconds() *int64                      { return nil }
func (m *ObjectMeta) SetDeletionGracePeriodSeconds(*int64)                       {}

// DeepCopyInto copies m into out. Labels are shared: they are read only.
func (m *ObjectMeta) DeepCopyInto(out *ObjectMeta) {
	*out = *m
	if m.DeletionTimestamp != nil {
		t := *m.DeletionTimestamp
		out.DeletionTimestamp = &t
	}
	if m.OwnerReferences != nil {
		out.OwnerReferences = append([]OwnerReference(nil), m.OwnerReferences...)
	}
	if m.finalizers != nil {
		out.SetFinalizers(append([]string{}, *m.finalizers...))
	}
}

// WithCreated returns a copy of m with its creationTimestamp set to t, for
// building an ObjectMeta in one expression.
func (m ObjectMeta) WithCreated(t time.Time) *ObjectMeta {
	m.SetCreated(t)
	return &m
}

// WithFinalizers returns a copy of m with its finalizers set (see
// SetFinalizers), for building an ObjectMeta in one expression.
func (m ObjectMeta) WithFinalizers(finalizers ...string) *ObjectMeta {
	m.SetFinalizers(finalizers)
	return &m
}
