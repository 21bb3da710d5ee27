package ui

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
)

// :claims lists the agent-sandbox claims with their sandboxes; enter on a
// bound claim opens its sandbox, whose detail names the claim. :pools
// shows warm pools beside OpenSandbox Pools.
func TestClaimsViewGoesToTheSandbox(t *testing.T) {
	snap := incidentSnapshot()
	// sbx-c is the incident fleet's agent Sandbox: make it claimed by alice.
	var claimed *model.Sandbox
	for _, sb := range snap.Sandboxes() {
		if sb.Key == "agent/team-rl/sbx-c" {
			claimed = sb
		}
	}
	if claimed == nil {
		t.Fatal("the incident fleet has no agent/team-rl/sbx-c")
	}
	meta := *claimed.Meta
	meta.OwnerReferences = []model.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: model.KindSandboxClaim, Name: "alice"}}
	claimed.Meta = &meta
	created := metav1.NewTime(fixedNow().Add(-10 * 60e9))
	snap.Claims = []*model.SandboxClaim{
		{ObjectMeta: model.ObjectMeta{Namespace: "team-rl", Name: "alice", CreationTimestamp: created}, WarmPool: "py-warm", Sandbox: "sbx-c"},
		{ObjectMeta: model.ObjectMeta{Namespace: "team-rl", Name: "bob", CreationTimestamp: created}, WarmPool: "py-warm"},
	}
	snap.WarmPools = []*model.WarmPool{{ObjectMeta: model.ObjectMeta{Namespace: "team-rl", Name: "py-warm", CreationTimestamp: created},
		Desired: 3, Replicas: 3, ReadyReplicas: 0}}
	app, tm := newTestApp(t, &fakeSource{snap: snap}, Backend{}, Options{})
	keys(tm, ":", "pools", "enter")
	screenContains(t, tm, app, "py-warm")
	keys(tm, ":", "claims", "enter")
	screenContains(t, tm, app, "Claims [2/2]")
	keys(tm, "/", "alice", "enter")
	screenContains(t, tm, app, "Claims [1/2]")
	keys(tm, "enter")
	screenContains(t, tm, app, "Claim       alice")
}
