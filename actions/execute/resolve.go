package execute

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/model"
)

// Resolve finds the target the way the fleet model knows it. ref is a
// sandbox name in namespace, a sandbox key ("bsbx/NS/NAME"), or pod/NAME.
// A pod/NAME the model does not know resolves to a bare target with no UID
// (bound live before dispatch).
func Resolve(snap *model.Snapshot, namespace, ref string) (Target, error) {
	if name, ok := strings.CutPrefix(ref, "pod/"); ok {
		return resolvePod(snap, namespace, name), nil
	}
	if name, ok := strings.CutPrefix(ref, "pods/"); ok {
		return resolvePod(snap, namespace, name), nil
	}
	var matches []*model.Sandbox
	if snap != nil {
		for _, sb := range snap.Sandboxes() {
			if sb == nil {
				continue
			}
			if sb.Key == ref || (sb.Namespace() == namespace && sb.Name() == ref) {
				matches = append(matches, sb)
			}
		}
	}
	switch len(matches) {
	case 0:
		if snap != nil && !snap.Status.Synced && snap.NumSandboxes() == 0 {
			// Before its first sync the fleet lists nothing, however many
			// sandboxes it has read (model.Snapshot.Loading, 0 at first).
			return Target{}, refused(CodeNotSynced, fmt.Sprintf("the fleet has not synced yet (%d sandboxes read so far)", snap.Loading), true,
				observed("fleet model: first list still arriving"))
		}
		return Target{}, refused(CodeNotFound, fmt.Sprintf("no sandbox %q in namespace %s", ref, namespace), false,
			inferred("not in the fleet snapshot (use pod/NAME for a Pod)"))
	case 1:
		return TargetOf(matches[0])
	}
	keys := make([]string, len(matches))
	for i, m := range matches {
		keys[i] = m.Key
	}
	return Target{}, refused(CodeAmbiguous, fmt.Sprintf("%q names several sandboxes: %s; use the key", ref, strings.Join(keys, ", ")), false)
}

// TargetOf is the target of a sandbox: its primary slot (the one the engine
// forwards to).
func TargetOf(sb *model.Sandbox) (Target, error) {
	slot := sb.PrimarySlot()
	if slot == nil || slot.PodName == "" {
		return Target{}, refused(CodeNotExecReady, fmt.Sprintf("sandbox %s has no Pod yet", sb.Key), true,
			observed("fleet model: sandbox %s state %s, no linked Pod", sb.Key, sb.State))
	}
	t := Target{Namespace: sb.Namespace(), Sandbox: sb.Key, Pod: slot.PodName, UID: slot.BoundUID, IP: slot.RecordedIP}
	if slot.Pod != nil {
		if t.UID == "" {
			t.UID = string(slot.Pod.UID)
		}
		if t.IP == "" {
			t.IP = slot.Pod.Status.PodIP
		}
		t.Container = modelMainContainer(slot.Pod)
	}
	return t, nil
}

func resolvePod(snap *model.Snapshot, namespace, name string) Target {
	if snap != nil {
		for _, sb := range snap.Sandboxes() {
			if sb == nil || sb.Namespace() != namespace {
				continue
			}
			for i := range sb.Slots {
				if sb.Slots[i].PodName != name {
					continue
				}
				slot := sb.Slots[i]
				t := Target{Namespace: namespace, Sandbox: sb.Key, Pod: name, UID: slot.BoundUID, IP: slot.RecordedIP}
				if slot.Pod != nil {
					if t.UID == "" {
						t.UID = string(slot.Pod.UID)
					}
					if t.IP == "" {
						t.IP = slot.Pod.Status.PodIP
					}
					t.Container = modelMainContainer(slot.Pod)
				}
				return t
			}
		}
		for _, p := range snap.Pods() {
			if p != nil && p.Namespace == namespace && p.Name == name {
				return Target{Namespace: namespace, Pod: name, UID: string(p.UID), IP: p.Status.PodIP, Container: modelMainContainer(p)}
			}
		}
	}
	return Target{Namespace: namespace, Pod: name}
}

// modelHolders is the model's IP index for ip: every Pod in the snapshot
// holding it (the check skips the target and dead Pods).
func modelHolders(snap *model.Snapshot, ip string) []Holder {
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
