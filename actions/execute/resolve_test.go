package execute

import (
	"testing"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Before the fleet's first sync nothing resolves, and the refusal says why
// and that a retry may succeed; once synced, a missing sandbox is NOT_FOUND.
func TestResolveBeforeFirstSync(t *testing.T) {
	loading := fleet.NewSnapshot(1, model.SourceStatus{}, nil, nil, nil)
	loading.Loading = 7
	_, err := Resolve(loading, "ns", "web")
	e := asRefusal(err)
	if e == nil || e.Code != CodeNotSynced || !e.Retryable || e.Executed != refusal.ExecutedNo {
		t.Fatalf("before the first sync: %v", err)
	}
	justStarted := fleet.NewSnapshot(1, model.SourceStatus{}, nil, nil, nil) // nothing read yet
	if e := asRefusal(func() error { _, err := Resolve(justStarted, "ns", "web"); return err }()); e == nil || e.Code != CodeNotSynced {
		t.Fatalf("before the first sync, nothing read yet: %v", e)
	}
	synced := fleet.NewSnapshot(2, model.SourceStatus{Synced: true}, nil, nil, nil)
	if e := asRefusal(func() error { _, err := Resolve(synced, "ns", "web"); return err }()); e == nil || e.Code != refusal.CodeNotFound {
		t.Fatalf("synced, no such sandbox: %v", e)
	}
}

// A claim name resolves to the Sandbox the claim is bound to, checked as
// any sandbox; an unbound claim and one whose Sandbox is gone are refused
// naming the claim.
func TestResolveClaim(t *testing.T) {
	pod := &model.Pod{ObjectMeta: model.ObjectMeta{Namespace: "ns", Name: "warm-x1", UID: "u1"}}
	sb := &model.Sandbox{Key: "agent/ns/warm-x1", State: model.StateDead,
		Meta:  &model.ObjectMeta{Namespace: "ns", Name: "warm-x1", OwnerReferences: []model.OwnerReference{{Kind: model.KindSandboxClaim, Name: "alice"}}},
		Slots: []model.Slot{{PodName: "warm-x1", BoundUID: "u1", RecordedIP: "10.0.0.1", Pod: pod, Identity: model.IdentityPodDead}}}
	snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true}, []*model.Sandbox{sb}, []*model.Pod{pod}, nil)
	snap.Claims = []*model.SandboxClaim{
		{ObjectMeta: model.ObjectMeta{Namespace: "ns", Name: "alice"}, WarmPool: "warm", Sandbox: "warm-x1"},
		{ObjectMeta: model.ObjectMeta{Namespace: "ns", Name: "bob"}, WarmPool: "warm"},
		{ObjectMeta: model.ObjectMeta{Namespace: "ns", Name: "carol"}, WarmPool: "warm", Sandbox: "carol"},
	}
	for _, ref := range []string{"alice", "claim/alice"} {
		tgt, err := Resolve(snap, "ns", ref)
		if err != nil || tgt.Sandbox != "agent/ns/warm-x1" || tgt.Pod != "warm-x1" {
			t.Errorf("%s: %+v, %v", ref, tgt, err)
		}
		if err := tgt.gate(); asRefusal(err) == nil || asRefusal(err).Code != string(model.IdentityPodDead) {
			t.Errorf("%s: the claimed sandbox's dead Pod is not refused: %v", ref, err)
		}
	}
	if _, err := Resolve(snap, "ns", "bob"); asRefusal(err) == nil || asRefusal(err).Code != CodeNotExecReady {
		t.Errorf("unbound claim: %v", err)
	}
	if _, err := Resolve(snap, "ns", "carol"); asRefusal(err) == nil || asRefusal(err).Code != string(model.IdentityPodGone) {
		t.Errorf("claim on a gone Sandbox: %v", err)
	}
	if _, err := Resolve(snap, "ns", "claim/nobody"); asRefusal(err) == nil || asRefusal(err).Code != refusal.CodeNotFound {
		t.Errorf("no such claim: %v", err)
	}
}
