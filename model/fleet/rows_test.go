package fleet

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// A derived row shares its source's ObjectMeta, whatever the engine.
func TestRowSharesSourceMeta(t *testing.T) {
	f, _ := newSyncedFleet(t)
	b := batchSandbox("a")
	f.UpsertBatchSandbox(b)
	p := model.SlimPod(modeltest.RunningPod("p", "up", "10.0.0.9"))
	f.UpsertPod(p)
	ag := &model.AgentSandbox{ObjectMeta: model.ObjectMeta{Namespace: ns, Name: "ag", UID: "u-ag"}}
	f.UpsertAgentSandbox(ag)
	for key, meta := range map[string]*model.ObjectMeta{bsKey("a"): &b.ObjectMeta, plainKey("p"): &p.ObjectMeta, agentKey("ag"): &ag.ObjectMeta} {
		if sb := mustSandbox(t, f, key); sb.Meta != meta {
			t.Errorf("%s: Meta %p, want the source's %p", key, sb.Meta, meta)
		}
	}
}

// A plain-Pod sandbox's deletion is its Pod's, reported on its slot: the
// row says nothing of an object being deleted, though its Meta (the Pod's)
// has a deletionTimestamp and finalizers.
func TestPlainPodRowHasNoObjectDeletion(t *testing.T) {
	f, _ := newSyncedFleet(t)
	pod := modeltest.RunningPod("p", "up", "10.0.0.9", modeltest.DeletingAt(ft0, 30))
	pod.Finalizers = []string{"example.com/hold"}
	f.UpsertPod(model.SlimPod(pod))
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
