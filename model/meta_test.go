package model

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// The informer machinery keys, versions and deletes cached objects through
// metav1.Object; the slim types must answer it as the API types would.
func TestObjectMetaAsMetav1Object(t *testing.T) {
	grace := int64(30)
	now := metav1.Now()
	for _, obj := range []any{
		&Pod{ObjectMeta: ObjectMeta{Namespace: "ns", Name: "a-0", UID: "u1"}},
		&BatchSandbox{ObjectMeta: ObjectMeta{Namespace: "ns", Name: "a-0", UID: "u1"}, ResourceVersion: "7"},
	} {
		// Only a BatchSandbox, which its watch decodes straight into the
		// model, keeps a version: the reflector reads it there.
		_, keepsVersion := obj.(*BatchSandbox)
		wantRV := func(rv string) string {
			if keepsVersion {
				return rv
			}
			return ""
		}
		// Only a Pod keeps a deletion grace period: its deletion reads it.
		_, keepsGrace := obj.(*Pod)
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil || key != "ns/a-0" {
			t.Fatalf("%T: key %q, %v", obj, key, err)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatalf("%T: %v", obj, err)
		}
		if m.GetUID() != "u1" || m.GetResourceVersion() != wantRV("7") {
			t.Errorf("%T: uid %q rv %q", obj, m.GetUID(), m.GetResourceVersion())
		}
		m.SetResourceVersion("8")
		m.SetLabels(map[string]string{"app": "rl"})
		m.SetDeletionTimestamp(&now)
		m.SetDeletionGracePeriodSeconds(&grace)
		m.SetFinalizers([]string{"f"})
		m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "sandbox.opensandbox.io/v1alpha1", Kind: "BatchSandbox", Name: "a", UID: "u0"}})
		if g := m.GetDeletionGracePeriodSeconds(); keepsGrace != (g != nil) || g != nil && *g != 30 {
			t.Errorf("%T: deletion grace %v after setting 30 (kept: %v)", obj, g, keepsGrace)
		}
		if m.GetResourceVersion() != wantRV("8") || m.GetLabels()["app"] != "rl" || m.GetDeletionTimestamp() != &now ||
			len(m.GetFinalizers()) != 1 ||
			len(m.GetOwnerReferences()) != 1 || m.GetOwnerReferences()[0].Kind != "BatchSandbox" || m.GetOwnerReferences()[0].Name != "a" {
			t.Errorf("%T: setters did not stick: %+v", obj, m)
		}
		// Not kept: reads empty, writes ignored.
		m.SetGeneration(3)
		m.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "x"}})
		if m.GetGeneration() != 0 || m.GetManagedFields() != nil {
			t.Errorf("%T: kept a field it has no room for", obj)
		}
	}
}

// The reflector ends a streamed initial list at the bookmark carrying
// k8s.io/initial-events-end; BatchSandboxes are decoded straight into the
// model type, so the model type must say it.
func TestBatchSandboxBookmarkAnnotation(t *testing.T) {
	b := &BatchSandbox{InitialEventsEnd: true}
	m, err := meta.Accessor(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Errorf("bookmark annotations %v", m.GetAnnotations())
	}
	if (&BatchSandbox{}).GetAnnotations() != nil {
		t.Error("a plain BatchSandbox reports annotations")
	}
}

func TestObjectMetaDeepCopyShares(t *testing.T) {
	now := metav1.Now()
	in := ObjectMeta{Name: "a", DeletionTimestamp: &now,
		OwnerReferences: []OwnerReference{{Kind: "BatchSandbox", Name: "a"}}}
	in.SetFinalizers([]string{"f"})
	var out ObjectMeta
	in.DeepCopyInto(&out)
	out.Finalizers()[0] = "changed"
	out.OwnerReferences[0].Name = "changed"
	out.DeletionTimestamp.Time = now.Add(1)
	if in.Finalizers()[0] != "f" || in.OwnerReferences[0].Name != "a" || !in.DeletionTimestamp.Equal(&now) {
		t.Errorf("the copy shares memory with the original: %+v", in)
	}
}
