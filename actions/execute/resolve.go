package execute

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Resolve finds the target the way the fleet model knows it. ref is a
// sandbox name in namespace, a sandbox key ("bsbx/NS/NAME"), or pod/NAME.
// A pod/NAME the model does not know resolves to a bare target with no UID
// (bound live before dispatch).
func Resolve(snap *fleet.Snapshot, namespace, ref string) (Target, error) {
	if name, ok := podRefName(ref); ok {
		t := resolvePod(snap, namespace, name)
		t.byPod = true
		return t, nil
	}
	_, _, _, isKey := model.ParseSandboxKey(ref)
	if name, ok := strings.CutPrefix(ref, "claim/"); ok && !isKey {
		return resolveClaim(snap, namespace, name, true)
	}
	var matches []*model.Sandbox
	if snap != nil {
		matches = snap.Named(namespace, ref)
	}
	switch len(matches) {
	case 0:
		if t, err := resolveClaim(snap, namespace, ref, false); err == nil || t.Namespace != "" {
			return t, err // a claim of that name: its sandbox, or why not
		}
		if snap != nil && !snap.Status.Synced && snap.NumSandboxes() == 0 {
			// Before its first sync the fleet lists nothing, however many
			// sandboxes it has read (fleet.Snapshot.Loading, 0 at first).
			return Target{}, refusal.New(CodeNotSynced, fmt.Sprintf("the fleet has not synced yet (%d sandboxes read so far)", snap.Loading), true,
				observed("fleet model: first list still arriving"))
		}
		where := "in namespace " + namespace
		if namespace == "" {
			where = "in any namespace"
		}
		if snap != nil && len(snap.Status.Forbidden) > 0 {
			// Not found among the kinds this user may read; it may be one
			// of the kinds the server refused.
			ev := []model.Evidence{inferred("not among the sandboxes that could be read")}
			for _, f := range snap.Status.Forbidden {
				ev = append(ev, observed("API server refused: %s", f))
			}
			return Target{}, refusal.New(refusal.CodeForbidden, fmt.Sprintf("no sandbox %q %s among the kinds this user may read; it may be of a kind the server refused (%s)",
				ref, where, strings.Join(snap.Status.Forbidden, "; ")), false, ev...)
		}
		return Target{}, refusal.New(refusal.CodeNotFound, fmt.Sprintf("no sandbox %q %s", ref, where), false,
			inferred("not in the fleet snapshot (use pod/NAME for a Pod)"))
	case 1:
		return TargetOf(matches[0])
	}
	keys := make([]string, len(matches))
	for i, m := range matches {
		keys[i] = m.Key
	}
	return Target{}, refusal.New(CodeAmbiguous, fmt.Sprintf("%q names several sandboxes: %s; give -n NAMESPACE or the key", ref, strings.Join(keys, ", ")), false)
}

// podRefName is NAME of a pod/NAME (or pods/NAME) ref; a plain-Pod
// sandbox's key ("pod/NS/NAME") is not one.
func podRefName(ref string) (string, bool) {
	if _, _, _, isKey := model.ParseSandboxKey(ref); isKey {
		return "", false
	}
	for _, prefix := range []string{"pod/", "pods/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			return name, true
		}
	}
	return "", false
}

// resolveClaim resolves an agent-sandbox SandboxClaim to the Sandbox it is
// bound to, which is then checked as any other. A claim found but not
// bound (or whose Sandbox is gone) is refused with a Target naming its
// namespace; no claim of that name returns a zero Target and, when
// explicit (claim/NAME), a not-found refusal.
func resolveClaim(snap *fleet.Snapshot, namespace, name string, explicit bool) (Target, error) {
	var found []model.ClaimRow
	if snap != nil {
		for _, r := range snap.ClaimRows() {
			if r.Claim.Name == name && (namespace == "" || r.Claim.Namespace == namespace) {
				found = append(found, r)
			}
		}
	}
	switch {
	case len(found) == 0:
		if !explicit {
			return Target{}, refusal.New(refusal.CodeNotFound, "no claim "+name, false)
		}
		return Target{}, refusal.New(refusal.CodeNotFound, fmt.Sprintf("no claim %q in namespace %s", name, orAny(namespace)), false,
			inferred("not in the fleet snapshot (are agent-sandbox's extensions installed and readable?)"))
	case len(found) > 1:
		return Target{Namespace: found[0].Claim.Namespace}, refusal.New(CodeAmbiguous,
			fmt.Sprintf("claim %q is in several namespaces; give -n NAMESPACE", name), false)
	}
	r := found[0]
	c := r.Claim
	ev := observed("SandboxClaim %s/%s: %s, sandbox %s", c.Namespace, c.Name, c.State(), orAny(c.Sandbox))
	if r.Sandbox == nil {
		if c.Sandbox != "" {
			return Target{Namespace: c.Namespace}, refusal.New(string(model.IdentityPodGone),
				fmt.Sprintf("claim %s/%s is bound to Sandbox %s, which no longer exists", c.Namespace, c.Name, c.Sandbox), false, ev)
		}
		return Target{Namespace: c.Namespace}, refusal.New(CodeNotExecReady,
			fmt.Sprintf("claim %s/%s is not bound to a sandbox yet", c.Namespace, c.Name), true, ev)
	}
	t, err := TargetOf(r.Sandbox)
	t.hints = append([]model.Evidence{ev}, t.hints...)
	if t.Namespace == "" {
		t.Namespace = c.Namespace
	}
	return t, err
}

func orAny(s string) string {
	if s == "" {
		return "(any)"
	}
	return s
}

// TargetOf is the target of a sandbox: its primary slot (the one the engine
// forwards to).
func TargetOf(sb *model.Sandbox) (Target, error) {
	slot := sb.PrimarySlot()
	if slot == nil || slot.PodName == "" {
		return Target{}, notReady(sb.Key, sb.State, "has no Pod yet",
			observed("fleet model: sandbox %s state %s, no linked Pod", sb.Key, sb.State))
	}
	t := Target{Namespace: sb.Namespace(), Sandbox: sb.Key, Pod: slot.PodName, UID: slot.BoundUID, IP: slot.RecordedIP,
		Identity: slot.Identity, identityEvidence: identityEvidence(sb, slot), state: sb.State}
	t.Pooled = sb.Engine() == model.EngineBatchSandbox && sb.Pool != ""
	t.hints = recreationHint(sb, slot)
	t.fillFromPod(slot.Pod)
	return t, nil
}

// recreationHint turns the model's POD_RECREATED notice for the slot's
// Pod (a same-name re-creation inferred from timestamps or seen in Events)
// into evidence for the caller, who may not know its sandbox's state is
// gone, with the commands that confirm it or refuse such a Pod.
func recreationHint(sb *model.Sandbox, slot *model.Slot) []model.Evidence {
	for _, n := range sb.Notices {
		if n.Code != model.CodePodRecreated || n.Pod != slot.PodName {
			continue
		}
		return []model.Evidence{inferred("%s (confirm: kubectl get events -n %s --field-selector reason=SuccessfulCreate; "+
			"pass --expect-uid to refuse any Pod but the one recorded at create)", n.Message, sb.Namespace())}
	}
	return nil
}

// identityEvidence is the evidence of the notice the model raised for the
// slot's identity state (IP_TAKEN names the holder, ...).
func identityEvidence(sb *model.Sandbox, slot *model.Slot) []model.Evidence {
	for _, n := range sb.Notices {
		if n.Code == string(slot.Identity) && (n.Pod == "" || n.Pod == slot.PodName) {
			return append([]model.Evidence{observed("fleet model: %s", n.Message)}, n.Evidence...)
		}
	}
	return []model.Evidence{observed("fleet model: sandbox %s slot %d identity %s", sb.Key, slot.Index, slot.Identity)}
}

// gate refuses a sandbox target whose slot the model does not hold for OK:
// the live check proves the Pod is the same Pod, the model proves it is
// still this sandbox's (a pooled Pod handed to another sandbox, an address
// another Pod holds, a Pod gone for good).
func (t Target) gate() error {
	if t.Sandbox == "" || t.byPod || t.Identity == model.IdentityOK {
		return nil
	}
	ev := t.identityEvidence
	switch t.Identity {
	case model.IdentityIPTaken, model.IdentityPodGone, model.IdentityUIDChanged, model.IdentityPodDead:
		return refusal.New(string(t.Identity), fmt.Sprintf("sandbox %s: %s", t.Sandbox, identityMeaning[t.Identity]), false, ev...)
	case model.IdentityIPStale:
		return refusal.New(CodeIPStale, fmt.Sprintf("sandbox %s: %s", t.Sandbox, identityMeaning[t.Identity]), true, ev...)
	case model.IdentityUnknown:
		return refusal.New(CodeNotSynced, fmt.Sprintf("sandbox %s: the fleet model cannot vouch for it now (disconnected)", t.Sandbox), true, ev...)
	}
	return notReady(t.Sandbox, t.state, "has no running Pod at a recorded address yet", append([]model.Evidence{
		observed("fleet model: sandbox %s state %s", t.Sandbox, t.state)}, ev...)...)
}

// notReady refuses a sandbox that has no running Pod to run in (why says
// what is missing). That is worth a retry while the sandbox may still get
// one (it is pending or starting); not once it is on its way out or over,
// or paused on purpose: no wait brings it a Pod.
func notReady(key string, state model.EffectiveState, why string, ev ...model.Evidence) error {
	if final, ok := finalStates[state]; ok {
		return refusal.New(CodeNotExecReady, fmt.Sprintf("sandbox %s %s: it has no running Pod and will not get one", key, final), false, ev...)
	}
	return refusal.New(CodeNotExecReady, fmt.Sprintf("sandbox %s %s", key, why), true, ev...)
}

// finalStates are the states no wait takes to Running, as said of a
// sandbox.
var finalStates = map[model.EffectiveState]string{
	model.StateTerminating: "is being deleted",
	model.StateExpired:     "has expired",
	model.StateFailed:      "has failed",
	model.StateDead:        "has ended",
	model.StateGone:        "has lost its Pod",
	model.StateSuspended:   "is suspended",
}

var identityMeaning = map[model.IdentityState]string{
	model.IdentityIPTaken:    "another Pod holds the address the engine records: requests for this sandbox run there",
	model.IdentityPodGone:    "its Pod no longer exists or belongs to another sandbox now",
	model.IdentityUIDChanged: "its Pod was re-created under the same name: in-container state is gone",
	model.IdentityPodDead:    "its Pod has ended while the engine still records its address",
	model.IdentityIPStale:    "its Pod has another address than the one the engine records",
}

func resolvePod(snap *fleet.Snapshot, namespace, name string) Target {
	if snap != nil {
		for _, sb := range snap.Sandboxes() {
			if sb == nil || (namespace != "" && sb.Namespace() != namespace) {
				continue
			}
			for i := range sb.Slots {
				if sb.Slots[i].PodName != name {
					continue
				}
				slot := sb.Slots[i]
				t := Target{Namespace: sb.Namespace(), Sandbox: sb.Key, Pod: name, UID: slot.BoundUID, IP: slot.RecordedIP}
				t.fillFromPod(slot.Pod)
				return t
			}
		}
		for _, p := range snap.Pods() {
			if p != nil && (namespace == "" || p.Namespace == namespace) && p.Name == name {
				return Target{Namespace: p.Namespace, Pod: name, UID: string(p.UID), IP: p.Status.PodIP, Container: modelMainContainer(p)}
			}
		}
	}
	return Target{Namespace: namespace, Pod: name}
}

// modelHolders is the model's IP index for ip: every Pod in the snapshot
// holding it (the check skips the target and dead Pods).
func modelHolders(snap *fleet.Snapshot, ip string) []Holder {
	if snap == nil || ip == "" {
		return nil
	}
	var hs []Holder
	add := func(p *model.Pod) {
		if p != nil && p.HasIP(ip) {
			hs = append(hs, Holder{Namespace: p.Namespace, Pod: p.Name, UID: string(p.UID), Phase: p.Status.Phase,
				Deleting: p.DeletionTimestamp != nil, HostNetwork: p.Spec.HostNetwork, Source: "model"})
		}
	}
	for _, p := range snap.Pods() {
		add(p)
	}
	for _, sb := range snap.Sandboxes() {
		if sb == nil {
			continue
		}
		for _, sl := range sb.Slots {
			add(sl.Pod)
			if sl.Holder != nil && sl.RecordedIP == ip {
				// The model saw another live Pod at this sandbox's address.
				hs = append(hs, Holder{Namespace: sl.Holder.Namespace, Pod: sl.Holder.Pod, UID: sl.Holder.UID, Phase: corev1.PodRunning, Source: "model"})
			}
		}
	}
	return hs
}

// modelMainContainer names the main container of a Pod of the model.
func modelMainContainer(p *model.Pod) string {
	if c, _ := p.Main(); c != nil {
		return c.Name
	}
	return ""
}

// fillFromPod completes t from the slot's Pod p, when there is one: the
// UID and IP the sandbox did not record, and the main container.
func (t *Target) fillFromPod(p *model.Pod) {
	if p == nil {
		return
	}
	if t.UID == "" {
		t.UID = string(p.UID)
	}
	if t.IP == "" {
		t.IP = p.Status.PodIP
	}
	t.Container = modelMainContainer(p)
}
