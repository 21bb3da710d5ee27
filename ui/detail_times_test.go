package ui

import (
	"strings"
	"testing"
)

// The detail view says what each time of a deletion is: deletionTimestamp
// is when the grace period ends (the request time + the grace period), not
// when the deletion was asked for.
func TestDetailSaysWhatDeletionTimesAre(t *testing.T) {
	sb := incidentSnapshot().Sandbox("bsbx/batch/sbx-d")
	if sb == nil || sb.Slots[0].Pod == nil {
		t.Fatal("incident snapshot has no deleting sbx-d-0")
	}
	text := strings.Join(detailLines(testShared(), sb, nil, nil, "", nil, nil), "\n")
	for _, want := range []string{
		// The fixture's Pod carries no deletionGracePeriodSeconds: only the end is known.
		"Pod deleting    grace ends 2026-11-29 17:05:00",
		"STUCK           Terminating: deletion requested ~2026-11-29 17:04:30",
		"its grace period (30s) ended 2026-11-29 17:05:00",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("detail lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "deleting    since") || strings.Contains(text, "Terminating since") {
		t.Errorf("detail still calls deletionTimestamp a start:\n%s", text)
	}

	grace := int64(30)
	p := *sb.Slots[0].Pod
	p.SetDeletionGracePeriodSeconds(&grace)
	sb.Slots[0].Pod = &p
	text = strings.Join(detailLines(testShared(), sb, nil, nil, "", nil, nil), "\n")
	if want := "Pod deleting    requested ~2026-11-29 17:04:30"; !strings.Contains(text, want) || !strings.Contains(text, "grace ends 2026-11-29 17:05:00") {
		t.Errorf("detail lacks %q, grace ends 17:05:00:\n%s", want, text)
	}
}
