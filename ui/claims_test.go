package ui

import (
	"strings"
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
		{ObjectMeta: *model.ObjectMeta{Namespace: "team-rl", Name: "alice"}.WithCreated(created.Time), WarmPool: "py-warm", Sandbox: "sbx-c"},
		{ObjectMeta: *model.ObjectMeta{Namespace: "team-rl", Name: "bob"}.WithCreated(created.Time), WarmPool: "py-warm"},
	}
	snap.WarmPools = []*model.WarmPool{{ObjectMeta: *model.ObjectMeta{Namespace: "team-rl", Name: "py-warm"}.WithCreated(created.Time),
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

// The sandboxes table shows a claimed agent Sandbox's claim in a CLAIM
// column, a dash for the others, while a sandbox in view is claimed and
// the terminal has room; a narrow terminal drops it first, and a fleet
// with no claim has no such column.
func TestSandboxesTableShowsTheClaim(t *testing.T) {
	snap := incidentSnapshot()
	for _, sb := range snap.Sandboxes() {
		if sb.Key == "agent/team-rl/sbx-c" {
			meta := *sb.Meta
			meta.OwnerReferences = []model.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: model.KindSandboxClaim, Name: "alice-session"}}
			sb.Meta = &meta
		}
	}
	app, tm := newTestAppSized(t, &fakeSource{snap: snap}, Backend{}, Options{}, 200, testH)
	frame := screenContains(t, tm, app, " CLAIM ")
	var head, claimed, other string
	for _, line := range strings.Split(frame, "\n") {
		switch {
		case strings.Contains(line, " SANDBOX "):
			head = line
		case strings.Contains(line, " sbx-c "):
			claimed = line
		case strings.Contains(line, " sbx-b "):
			other = line
		}
	}
	col := strings.Index(head, "CLAIM")
	if col < 0 || col >= len(claimed) || !strings.HasPrefix(claimed[col:], "alice-session ") {
		t.Errorf("sbx-c's row has no claim under CLAIM:\n%s\n%s", head, claimed)
	}
	if col >= len(other) || !strings.HasPrefix(other[col:], "- ") {
		t.Errorf("unclaimed sbx-b's row shows no dash under CLAIM:\n%s\n%s", head, other)
	}

	narrowApp, narrow := newTestAppSized(t, &fakeSource{snap: snap}, Backend{}, Options{}, 80, testH)
	if f := screenContains(t, narrow, narrowApp, "NOTICES"); strings.Contains(f, "CLAIM") || strings.Contains(f, "alice-session") {
		t.Errorf("80 columns keep CLAIM:\n%s", f)
	}
	_, plain := newTestAppSized(t, &fakeSource{snap: incidentSnapshot()}, Backend{}, Options{}, 200, testH)
	if f := finalFrame(t, plain); !strings.Contains(f, "NOTICES") || strings.Contains(f, "CLAIM") {
		t.Errorf("a fleet with no claim shows CLAIM:\n%s", f)
	}
}
