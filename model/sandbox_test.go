package model

import "testing"

// The accessors read a row without Meta (built by hand, no source) as empty.
func TestSandboxWithoutMetaReadsEmpty(t *testing.T) {
	sb := &Sandbox{Key: "bsbx/ns/x"}
	if sb.Namespace() != "" || sb.Name() != "" || sb.UID() != "" || !sb.Labels().IsZero() ||
		!sb.CreatedAt().IsZero() || sb.DeletingSince() != nil || sb.Finalizers() != nil {
		t.Errorf("a row without Meta reads %q %q %q %v %v %v %v", sb.Namespace(), sb.Name(), sb.UID(),
			sb.Labels(), sb.CreatedAt(), sb.DeletingSince(), sb.Finalizers())
	}
}

// A sandbox's identity is its worst slot's: ranks go from OK to IP_TAKEN.
func TestIdentityIsTheWorstSlots(t *testing.T) {
	order := []IdentityState{IdentityOK, IdentityUnassigned, IdentityUnknown, IdentityIPStale,
		IdentityUIDChanged, IdentityPodGone, IdentityPodDead, IdentityIPTaken}
	for i, s := range order {
		if s.Rank() != i {
			t.Errorf("%s ranks %d, want %d", s, s.Rank(), i)
		}
		sb := &Sandbox{Slots: []Slot{{Identity: IdentityOK}, {Identity: s}, {Identity: IdentityUnassigned}}}
		if want := order[max(i, 1)]; sb.Identity() != want {
			t.Errorf("slots OK, %s, UNASSIGNED read %s, want %s", s, sb.Identity(), want)
		}
	}
	if IdentityState("BOGUS").Rank() != 0 {
		t.Error("an unknown state does not rank as OK")
	}
}
