package model

import (
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model/modeltest"
)

// A row is allocated per sandbox and per change: it must stay in the
// 144-byte size class, which it reached by pointing at its source's
// metadata instead of copying it and reading its engine from its key (it
// was 272 bytes, in the 288 class).
func TestSandboxRowSize(t *testing.T) {
	if s := unsafe.Sizeof(Sandbox{}); s > 144 {
		t.Errorf("Sandbox is %d bytes, want <= 144", s)
	}
}

// A derived row shares its source's ObjectMeta, whatever the engine.
func TestRowSharesSourceMeta(t *testing.T) {
	f, _ := newSyncedFleet(t)
	b := batchSandbox("a")
	f.UpsertBatchSandbox(b)
	p := SlimPod(modeltest.RunningPod("p", "up", "10.0.0.9"))
	f.UpsertPod(p)
	ag := &AgentSandbox{ObjectMeta: ObjectMeta{Namespace: ns, Name: "ag", UID: "u-ag"}}
	f.UpsertAgentSandbox(ag)
	for key, meta := range map[string]*ObjectMeta{bsKey("a"): &b.ObjectMeta, plainKey("p"): &p.ObjectMeta, agentKey("ag"): &ag.ObjectMeta} {
		if sb := mustSandbox(t, f, key); sb.Meta != meta {
			t.Errorf("%s: Meta %p, want the source's %p", key, sb.Meta, meta)
		}
	}
}

// The accessors read a row without Meta (built by hand, no source) as empty.
func TestSandboxWithoutMetaReadsEmpty(t *testing.T) {
	sb := &Sandbox{Key: "bsbx/ns/x"}
	if sb.Namespace() != "" || sb.Name() != "" || sb.UID() != "" || !sb.Labels().IsZero() ||
		!sb.CreatedAt().IsZero() || sb.DeletingSince() != nil || sb.Finalizers() != nil {
		t.Errorf("a row without Meta reads %q %q %q %v %v %v %v", sb.Namespace(), sb.Name(), sb.UID(),
			sb.Labels(), sb.CreatedAt(), sb.DeletingSince(), sb.Finalizers())
	}
}

// A plain-Pod sandbox's deletion is its Pod's, reported on its slot: the
// row says nothing of an object being deleted, though its Meta (the Pod's)
// has a deletionTimestamp and finalizers.
func TestPlainPodRowHasNoObjectDeletion(t *testing.T) {
	f, _ := newSyncedFleet(t)
	pod := modeltest.RunningPod("p", "up", "10.0.0.9", modeltest.DeletingAt(ft0, 30))
	pod.Finalizers = []string{"example.com/hold"}
	f.UpsertPod(SlimPod(pod))
	sb := mustSandbox(t, f, plainKey("p"))
	if sb.Meta.DeletionTimestamp == nil {
		t.Fatal("the Pod's meta lost its deletionTimestamp")
	}
	if sb.DeletingSince() != nil || sb.Finalizers() != nil {
		t.Errorf("plain-Pod row: DeletingSince %v, Finalizers %v, want none", sb.DeletingSince(), sb.Finalizers())
	}

	// The same meta on an engine object is that object's deletion.
	del := metav1.NewTime(ft0.Add(time.Minute))
	b := batchSandbox("a")
	b.DeletionTimestamp, b.Finalizers = &del, []string{"example.com/hold"}
	f.UpsertBatchSandbox(b)
	sb = mustSandbox(t, f, bsKey("a"))
	if d := sb.DeletingSince(); d == nil || !d.Equal(del.Time) || len(sb.Finalizers()) != 1 {
		t.Errorf("BatchSandbox row: DeletingSince %v, Finalizers %v", d, sb.Finalizers())
	}
}
