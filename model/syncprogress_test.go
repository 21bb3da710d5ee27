package model

import "testing"

func ptr(n int64) *int64 { return &n }

func TestSyncLine(t *testing.T) {
	for _, tc := range []struct {
		in   []ListProgress
		want string
	}{
		{nil, ""},
		{[]ListProgress{{Resource: "pods", Received: 12400, Total: ptr(50000), PerSecond: 4100.4}}, "pods 12,400 of 50,000 · 4,100/s"},
		{[]ListProgress{{Resource: "pods", Received: 50000, Total: ptr(50000), Done: true}, {Resource: "batchsandboxes", Received: 3}},
			"pods 50,000 ✓ · batchsandboxes 3…"},
		// The server's count is older than the list: never "of" fewer.
		{[]ListProgress{{Resource: "pods", Received: 12, Total: ptr(10), PerSecond: 0.2}}, "pods 12 of 12…"},
		{[]ListProgress{{Resource: "pools", Done: true}}, ""},
		{[]ListProgress{{Resource: "pods", Received: 7}, {Resource: "pools", Total: ptr(0)}}, "pods 7…"},
	} {
		if got := SyncLine(tc.in); got != tc.want {
			t.Errorf("SyncLine(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSyncTotals(t *testing.T) {
	got, total := SyncTotals([]ListProgress{{Received: 10, Total: ptr(100)}, {Received: 5, Done: true}, {Total: ptr(0)}})
	if got != 15 || total != 105 {
		t.Errorf("SyncTotals = %d of %d, want 15 of 105", got, total)
	}
	if _, total := SyncTotals([]ListProgress{{Received: 10, Total: ptr(100)}, {Received: 5}}); total != 0 {
		t.Errorf("a resource without a total: total %d, want 0 (unknown)", total)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 150000: "150,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
