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
	e := asError(err)
	if e == nil || e.Code != CodeNotSynced || !e.Retryable || e.Executed != refusal.ExecutedNo {
		t.Fatalf("before the first sync: %v", err)
	}
	justStarted := fleet.NewSnapshot(1, model.SourceStatus{}, nil, nil, nil) // nothing read yet
	if e := asError(func() error { _, err := Resolve(justStarted, "ns", "web"); return err }()); e == nil || e.Code != CodeNotSynced {
		t.Fatalf("before the first sync, nothing read yet: %v", e)
	}
	synced := fleet.NewSnapshot(2, model.SourceStatus{Synced: true}, nil, nil, nil)
	if e := asError(func() error { _, err := Resolve(synced, "ns", "web"); return err }()); e == nil || e.Code != refusal.CodeNotFound {
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
		if err := tgt.gate(); asError(err) == nil || asError(err).Code != string(model.IdentityPodDead) {
			t.Errorf("%s: the claimed sandbox's dead Pod is not refused: %v", ref, err)
		}
	}
	if _, err := Resolve(snap, "ns", "bob"); asError(err) == nil || asError(err).Code != CodeNotExecReady {
		t.Errorf("unbound claim: %v", err)
	}
	if _, err := Resolve(snap, "ns", "carol"); asError(err) == nil || asError(err).Code != string(model.IdentityPodGone) {
		t.Errorf("claim on a gone Sandbox: %v", err)
	}
	if _, err := Resolve(snap, "ns", "claim/nobody"); asError(err) == nil || asError(err).Code != refusal.CodeNotFound {
		t.Errorf("no such claim: %v", err)
	}
}

// The short id the TUI shows (the start of a sandbox id) names its
// sandbox wherever it is unique; where it is not, AMBIGUOUS lists the
// candidates; a whole name always wins over a start of another's id.
func TestResolveByShortID(t *testing.T) {
	sandbox := func(ns, name string) *model.Sandbox {
		return &model.Sandbox{Key: model.SandboxKey(model.EngineBatchSandbox, ns, name), Meta: &model.ObjectMeta{Name: name, Namespace: ns},
			Slots: []model.Slot{{PodName: name + "-0", RecordedIP: "10.0.0.1", Identity: model.IdentityOK}}}
	}
	snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true}, []*model.Sandbox{
		sandbox("eval", "16952042-4659-4a6b-9d3e-0c5aff3444d1"),
		sandbox("sandboxes", "8efd263d-1111-4a6b-9d3e-0c5aff3444d1"),
		sandbox("sandboxes", "8efd263e-2222-4a6b-9d3e-0c5aff3444d1"),
		sandbox("sandboxes", "1695"), // a sandbox named like the start of another's id
	}, nil, nil)
	for _, tc := range []struct{ ns, ref, want string }{
		{"", "16952042", "16952042-4659-4a6b-9d3e-0c5aff3444d1"},
		{"eval", "169520", "16952042-4659-4a6b-9d3e-0c5aff3444d1"},
		{"", "1695", "1695"},
		{"", "8efd263e", "8efd263e-2222-4a6b-9d3e-0c5aff3444d1"},
	} {
		got, err := Resolve(snap, tc.ns, tc.ref)
		if err != nil || got.Sandbox != model.SandboxKey(model.EngineBatchSandbox, got.Namespace, tc.want) {
			t.Errorf("Resolve(%q, %q) = %+v, %v; want %s", tc.ns, tc.ref, got.Sandbox, err, tc.want)
		}
	}
	for _, tc := range []struct{ ns, ref, code string }{
		{"", "8efd263", CodeAmbiguous},
		{"sandboxes", "16952042", refusal.CodeNotFound}, // not in that namespace
		{"", "169", refusal.CodeNotFound},               // shorter than model.MinIDPrefix
	} {
		_, err := Resolve(snap, tc.ns, tc.ref)
		if e := asError(err); e == nil || e.Code != tc.code {
			t.Errorf("Resolve(%q, %q): %v; want %s", tc.ns, tc.ref, err, tc.code)
		}
	}
}

// A sandbox with no running Pod is worth a retry only while it may still
// get one: a deleted, expired, failed or suspended one was refused
// "retryable" as a starting one is, and a caller waited for nothing.
func TestNotReadyIsRetryableOnlyWhileTheSandboxMayStart(t *testing.T) {
	for state, retryable := range map[model.EffectiveState]bool{
		model.StatePending: true, model.StateStarting: true,
		model.StateTerminating: false, model.StateExpired: false, model.StateFailed: false, model.StateSuspended: false,
	} {
		noPod := &model.Sandbox{Key: "bsbx/ns/a", State: state, Meta: &model.ObjectMeta{Namespace: "ns", Name: "a"}}
		_, err := TargetOf(noPod)
		if e := asError(err); e == nil || e.Code != CodeNotExecReady || e.Retryable != retryable {
			t.Errorf("%s, no Pod: %v; want NOT_EXEC_READY, retryable %v", state, err, retryable)
		}
		unassigned := &model.Sandbox{Key: "bsbx/ns/b", State: state, Meta: &model.ObjectMeta{Namespace: "ns", Name: "b"},
			Slots: []model.Slot{{PodName: "b-0", Identity: model.IdentityUnassigned}}}
		tgt, err := TargetOf(unassigned)
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		if e := asError(tgt.gate()); e == nil || e.Code != CodeNotExecReady || e.Retryable != retryable {
			t.Errorf("%s, no address: %v; want NOT_EXEC_READY, retryable %v", state, e, retryable)
		}
	}
}
