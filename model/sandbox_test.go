package model

import (
	"testing"
	"time"
)

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

// A late Ready is kept without the rare part (it is on nearly every object
// of a fleet that came up slowly), and reads back exactly, also when the
// time is beyond what Unix nanoseconds hold.
func TestBatchSandboxReadySince(t *testing.T) {
	created := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	for _, since := range []time.Time{
		time.Date(2026, 11, 29, 17, 12, 0, 500, time.UTC),
		time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		b := &BatchSandbox{ObjectMeta: *ObjectMeta{}.WithCreated(created)}
		b.SetReady(since.In(time.FixedZone("x", 3600)))
		if r := b.ReadySince(); r == nil || !r.Equal(since) || r.Location() != time.UTC {
			t.Fatalf("ReadySince %v, want %v (UTC)", r, since)
		}
		if inline := since.Year() < 2262; inline != (b.rare == nil) {
			t.Fatalf("since %v: rare part %v", since, b.rare)
		}
	}
	b := &BatchSandbox{ObjectMeta: *ObjectMeta{}.WithCreated(created)}
	b.SetReady(created.Add(LateReadyAfter))
	if b.ReadySince() != nil || b.rare != nil {
		t.Fatalf("a Ready on time is kept: %v", b.ReadySince())
	}
}
