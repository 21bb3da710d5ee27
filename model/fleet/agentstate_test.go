package fleet

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// agentPodOf is the agent-sandbox controller's Pod of Sandbox name:
// named like it, controlled by it, with the name-hash label.
func agentPodOf(name, uid, ip string) *model.Pod {
	p := modeltest.RunningPod(name, uid, ip)
	p.Labels = map[string]string{"agents.x-k8s.io/sandbox-name-hash": "h-" + name}
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "agents.x-k8s.io/v1beta1", Kind: "Sandbox", Name: name, Controller: &yes}}
	return model.SlimPod(p)
}

func readyCond(status, reason string) []model.Condition {
	return []model.Condition{{Type: "Ready", Status: status, Reason: reason}}
}

// On expiry the controller wipes the status while the Pod terminates:
// nothing routes to it, so no recorded IP and no POD_DEAD; once the Pod is
// gone the sandbox is Expired, not Gone.
func TestAgentExpiryIsNotPodDead(t *testing.T) {
	f, c := newSyncedFleet(t)
	pod := agentPodOf("ag", "u1", "10.0.0.5")
	f.UpsertPod(pod)
	meta := *model.ObjectMeta{Name: "ag", Namespace: ns, UID: "uag"}.WithCreated(ft0)
	f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: meta, Selector: "agents.x-k8s.io/sandbox-name-hash=h-ag",
		PodIPs: []string{"10.0.0.5"}, Conditions: readyCond("True", "DependenciesReady")})
	if sb := mustSandbox(t, f, agentKey("ag")); sb.Identity() != model.IdentityOK {
		t.Fatalf("running: %s", sb.Identity())
	}
	c.Advance(time.Minute)
	deleting := *pod
	now := metav1.NewTime(c.Now())
	deleting.DeletionTimestamp = &now
	f.UpsertPod(&deleting)
	f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: meta, Conditions: readyCond("False", model.ReasonSandboxExpired)})
	sb := mustSandbox(t, f, agentKey("ag"))
	if sl := sb.PrimarySlot(); sl != nil && sl.RecordedIP != "" {
		t.Errorf("expired sandbox records %q", sl.RecordedIP)
	}
	for _, n := range sb.Notices {
		if n.Severity == model.SeverityError {
			t.Errorf("expired sandbox, Pod terminating: %s %s", n.Code, n.Message)
		}
	}
	f.DeletePod(&deleting)
	if sb := mustSandbox(t, f, agentKey("ag")); sb.State != model.StateExpired {
		t.Errorf("expired sandbox, Pod gone: state %s", sb.State)
	}
}

// A suspended Sandbox (spec.operatingMode Suspended) with no Pod reads
// Suspended; one that just has no Pod yet still reads Pending.
func TestAgentSuspendedState(t *testing.T) {
	f, _ := newSyncedFleet(t)
	f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: model.ObjectMeta{Name: "zz", Namespace: ns, UID: "u"}, Suspended: true,
		Conditions: readyCond("False", model.ReasonSandboxSuspended)})
	f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: model.ObjectMeta{Name: "new", Namespace: ns, UID: "u2"}, Selector: "a=b",
		Conditions: readyCond("False", "DependenciesNotReady")})
	if sb := mustSandbox(t, f, agentKey("zz")); sb.State != model.StateSuspended {
		t.Errorf("suspended: state %s", sb.State)
	}
	if sb := mustSandbox(t, f, agentKey("new")); sb.State != model.StatePending {
		t.Errorf("not yet placed: state %s", sb.State)
	}
}
