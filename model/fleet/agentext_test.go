package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/model"
)

func claimOwner(name string) []model.OwnerReference {
	return []model.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: model.KindSandboxClaim, Name: name}}
}

func poolOwner(name string) []model.OwnerReference {
	return []model.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: model.KindSandboxWarmPool, Name: name}}
}

// Claims join their sandboxes; pools count members, claims bound and
// waiting; the four extension findings fire on what they describe only.
func TestAgentClaimsAndPools(t *testing.T) {
	f, c := newSyncedFleet(t)
	old := metav1.NewTime(ft0.Add(-time.Hour))
	// pool "warm": one ready member, one unready for an hour; claim alice adopted a third.
	for _, m := range []struct {
		name, ip string
		owner    []model.OwnerReference
		ready    bool
	}{{"warm-a", "10.0.1.1", poolOwner("warm"), true}, {"warm-b", "", poolOwner("warm"), false}, {"warm-c", "10.0.1.3", claimOwner("alice"), true}} {
		if m.ip != "" {
			f.UpsertPod(agentPodOf(m.name, "u-"+m.name, m.ip))
		}
		a := &model.AgentSandbox{ObjectMeta: *model.ObjectMeta{Name: m.name, Namespace: ns, UID: types.UID("s-" + m.name), OwnerReferences: m.owner}.WithCreated(old.Time),
			Selector: "agents.x-k8s.io/sandbox-name-hash=h-" + m.name, Conditions: readyCond("False", "DependenciesNotReady")}
		if m.ready {
			a.PodIPs, a.Conditions = []string{m.ip}, readyCond("True", "DependenciesReady")
		}
		f.UpsertAgentSandbox(a)
	}
	f.UpsertWarmPool(&model.WarmPool{ObjectMeta: model.ObjectMeta{Name: "warm", Namespace: ns}, Desired: 2, Replicas: 2, ReadyReplicas: 1})
	f.UpsertWarmPool(&model.WarmPool{ObjectMeta: model.ObjectMeta{Name: "dry", Namespace: ns}, Desired: 1, Replicas: 0, ReadyReplicas: 0})
	f.UpsertSandboxClaim(&model.SandboxClaim{ObjectMeta: *model.ObjectMeta{Name: "alice", Namespace: ns}.WithCreated(old.Time), WarmPool: "warm", Sandbox: "warm-c"})
	f.UpsertSandboxClaim(&model.SandboxClaim{ObjectMeta: *model.ObjectMeta{Name: "bob", Namespace: ns}.WithCreated(old.Time), WarmPool: "dry"})
	f.UpsertSandboxClaim(&model.SandboxClaim{ObjectMeta: *model.ObjectMeta{Name: "carol", Namespace: ns}.WithCreated(old.Time), WarmPool: "dry", Sandbox: "carol"})
	c.Advance(time.Second)
	snap := f.Snapshot()

	rows := map[string]model.ClaimRow{}
	for _, r := range snap.ClaimRows() {
		rows[r.Claim.Name] = r
	}
	if r := rows["alice"]; r.Sandbox == nil || r.Sandbox.Name() != "warm-c" || r.Sandbox.Claim() != "alice" || r.Sandbox.LaunchType() != model.LaunchWarm {
		t.Errorf("alice: %+v", r)
	}
	if r := rows["bob"]; r.Sandbox != nil || r.Claim.State() != model.ClaimPending {
		t.Errorf("bob: %+v", r)
	}
	pools := map[string]model.WarmPoolRow{}
	for _, r := range snap.WarmPoolRows() {
		pools[r.Pool.Name] = r
	}
	if r := pools["warm"]; r.Members != 2 || r.Ready != 1 || r.Claimed != 1 || r.Waiting != 0 || len(r.Unready) != 1 {
		t.Errorf("warm: %+v", r)
	}
	if r := pools["dry"]; r.Claimed != 1 || r.Waiting != 1 {
		t.Errorf("dry: %+v", r)
	}
	if sb := snap.Sandbox(agentKey("warm-a")); sb.Pool != "warm" || sb.Claim() != "" {
		t.Errorf("free member: pool %q claim %q", sb.Pool, sb.Claim())
	}

	got := map[string][]ExtFinding{}
	for _, x := range snap.ExtensionFindings(c.Now()) {
		got[x.Notice.Code] = append(got[x.Notice.Code], x)
	}
	if x := got[model.CodeWarmPoolExhausted]; len(x) != 1 || x[0].Namespace != ns {
		t.Errorf("WARM_POOL_EXHAUSTED: %+v", x)
	}
	if x := got[model.CodeWarmPoolDegraded]; len(x) != 1 {
		t.Errorf("WARM_POOL_DEGRADED: %+v", x)
	}
	if x := got[model.CodeClaimPending]; len(x) != 1 || x[0].Sandbox != "bob" {
		t.Errorf("CLAIM_PENDING: %+v", x)
	}
	if x := got[model.CodeClaimSandboxDead]; len(x) != 1 || x[0].Sandbox != "carol" || x[0].Notice.Severity != model.SeverityError {
		t.Errorf("CLAIM_SANDBOX_DEAD: %+v", x)
	}
	// A fresh claim is not yet CLAIM_PENDING.
	if x := snap.ExtensionFindings(ft0.Add(-time.Hour + time.Minute)); len(x) > 0 {
		for _, e := range x {
			if e.Notice.Code == model.CodeClaimPending {
				t.Errorf("claim a minute old: %+v", e)
			}
		}
	}
}

// WARM_POOL_DEGRADED is what an operator sees of the real controller, which
// deletes a member not Ready 5 minutes after it was made and makes another:
// a pool short of ready members whose members do not start (one not Ready
// 2 minutes after it was made), or whose unready members this reader saw
// replaced. A pool refilling after a claim (a young member starting) is
// not degraded, nor is a full pool.
func TestWarmPoolDegradedAsTheControllerReplaces(t *testing.T) {
	f, c := newSyncedFleet(t)
	member := func(name, pool string, made time.Time, ready bool) {
		a := &model.AgentSandbox{ObjectMeta: *model.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("s-" + name), OwnerReferences: poolOwner(pool)}.WithCreated(made),
			Selector: "agents.x-k8s.io/sandbox-name-hash=h-" + name, Conditions: readyCond("False", "DependenciesNotReady")}
		if ready {
			f.UpsertPod(agentPodOf(name, "u-"+name, "10.0.9."+name[len(name)-1:]))
			a.PodIPs, a.Conditions = []string{"10.0.9." + name[len(name)-1:]}, readyCond("True", "DependenciesReady")
		}
		f.UpsertAgentSandbox(a)
	}
	pool := func(name string, desired, ready int32) {
		f.UpsertWarmPool(&model.WarmPool{ObjectMeta: model.ObjectMeta{Name: name, Namespace: ns}, Desired: desired, Replicas: desired, ReadyReplicas: ready})
	}
	now := c.Now()
	// churn: one ready member; its other member py-b was replaced (deleted
	// while not Ready) by py-c, made 30 s ago and not Ready yet.
	pool("churn", 2, 1)
	member("churn-1", "churn", now.Add(-time.Hour), true)
	member("churn-2", "churn", now.Add(-5*time.Minute), false)
	f.DeleteAgentSandbox(ns, "churn-2")
	member("churn-3", "churn", now.Add(-30*time.Second), false)
	// slow: its member has not become Ready in 3 minutes.
	pool("slow", 1, 0)
	member("slow-1", "slow", now.Add(-3*time.Minute), false)
	// refill: a claim took a ready member; the replacement, 30 s old, starts.
	pool("refill", 2, 1)
	member("refill-1", "refill", now.Add(-time.Hour), true)
	member("refill-2", "refill", now.Add(-30*time.Second), false)
	// full: as many ready members as wanted; a surplus member unready for
	// an hour (a scale-down under way) does not make it short.
	pool("full", 1, 1)
	member("full-1", "full", now.Add(-time.Hour), true)
	member("full-2", "full", now.Add(-time.Hour), false)

	got := map[string]ExtFinding{}
	for _, x := range f.Snapshot().ExtensionFindings(now) {
		if x.Notice.Code == model.CodeWarmPoolDegraded {
			name := strings.Fields(strings.TrimPrefix(x.Notice.Message, "warm pool "))[0]
			got[name] = x
		}
	}
	if x, ok := got["churn"]; !ok || !strings.Contains(x.Notice.Message, "1 replaced unready") || !strings.Contains(fmt.Sprint(x.Notice.Evidence), "churn-2") {
		t.Errorf("churning pool: %+v", x)
	}
	if x, ok := got["slow"]; !ok || !strings.Contains(fmt.Sprint(x.Notice.Evidence), "slow-1") {
		t.Errorf("pool whose member does not start: %+v", x)
	}
	for _, name := range []string{"refill", "full"} {
		if x, ok := got[name]; ok {
			t.Errorf("pool %s is not degraded: %+v", name, x)
		}
	}
	// The replacement is evidence for WarmPoolChurnWindow; after that a
	// pool whose members start is no longer degraded.
	c.Advance(WarmPoolChurnWindow + time.Second)
	member("churn-3", "churn", now.Add(-30*time.Second), true)
	for _, x := range f.Snapshot().ExtensionFindings(c.Now()) {
		if strings.HasPrefix(x.Notice.Message, "warm pool churn ") {
			t.Errorf("churn window passed, members ready: %+v", x)
		}
	}
}
