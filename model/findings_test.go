package model

import "testing"

// NewFinding reports a notice at the severity of the sweep's table, and
// SortFindings puts the worst first.
func TestFindingsUseTheSeverityTable(t *testing.T) {
	sandboxes := []*Sandbox{
		{Key: "bsbx/ns/b", Meta: &ObjectMeta{Namespace: "ns", Name: "b"}, Notices: []Notice{
			{Code: CodeIPTaken, Severity: SeverityWarning, Pod: "b-0", Message: "taken"}, // table says error
			{Code: CodeFailedSticky, Severity: SeverityError, Pod: "b-0"},                // table says info
			{Code: CodeExpiringSoon, Severity: SeverityInfo},                             // not in the table: kept
		}},
		{Key: "bsbx/ns/a", Meta: &ObjectMeta{Namespace: "ns", Name: "a"}, Notices: []Notice{
			{Code: CodeStuckTerminating, Severity: SeverityWarning, Pod: "a-0", Evidence: []Evidence{{Kind: Observed, Text: "x"}}},
		}},
		{Key: "bsbx/ns/c", Meta: &ObjectMeta{Namespace: "ns", Name: "c"}},
	}
	var got []Finding
	for _, sb := range sandboxes {
		for _, n := range sb.Notices {
			got = append(got, NewFinding("prod", sb, n))
		}
	}
	SortFindings(got)
	want := []struct {
		code, sandbox string
		sev           Severity
	}{
		{CodeIPTaken, "b", SeverityError},
		{CodeStuckTerminating, "a", SeverityWarning},
		{CodeExpiringSoon, "b", SeverityInfo},
		{CodeFailedSticky, "b", SeverityInfo},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d findings, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		f := got[i]
		if f.Code != w.code || f.Sandbox != w.sandbox || f.Severity != w.sev || f.Context != "prod" || f.Namespace != "ns" {
			t.Errorf("finding %d = %+v, want %s %s %s", i, f, w.code, w.sandbox, w.sev)
		}
		if f.Evidence == nil {
			t.Errorf("finding %d: evidence nil, want [] for JSON", i)
		}
	}
}

func TestEveryTableCodeHasASeverity(t *testing.T) {
	// The table, verbatim.
	table := map[string]Severity{
		"IP_TAKEN": "error", "POD_DEAD": "error", "POD_GONE": "error", "UID_CHANGED": "warning",
		"IP_STALE": "warning", "STUCK_TERMINATING": "warning", "ENTRYPOINT_NOT_RUN": "warning",
		"IMAGE_CONFIG_UNREADABLE": "warning", "NOT_EXEC_READY": "warning", "STATE_MISMATCH": "warning",
		"FAILED_STICKY": "info", "RESTART_OOM": "warning", "RESTART_LIVENESS": "warning",
		"RESTART_EVICTED": "warning", "RESTART_UNEXPLAINED": "warning", "CONTEXT_UNREACHABLE": "error",
		"TASK_FAILED": "warning", "POD_RECREATED": "warning", "CONTEXT_PARTIAL": "warning",
		"WARM_POOL_EXHAUSTED": "warning", "WARM_POOL_DEGRADED": "warning", "CLAIM_PENDING": "warning", "CLAIM_SANDBOX_DEAD": "error",
	}
	for code, sev := range table {
		if got := SeverityOf(Notice{Code: code, Severity: "bogus"}); got != sev {
			t.Errorf("%s: severity %s, want %s", code, got, sev)
		}
	}
	if len(FindingSeverity) != len(table) {
		t.Errorf("FindingSeverity has %d codes, the table %d", len(FindingSeverity), len(table))
	}
}

func TestScore(t *testing.T) {
	f := func(sandbox string, sev Severity) Finding {
		return Finding{Context: "c", Namespace: "ns", Sandbox: sandbox, Severity: sev}
	}
	tests := []struct {
		name      string
		findings  []Finding
		sandboxes int
		want      int
	}{
		{"empty fleet", nil, 0, 100},
		{"no findings", nil, 50, 100},
		{"one info in 50000", []Finding{f("a", SeverityInfo)}, 50000, 99},
		{"every sandbox has an error", []Finding{f("a", SeverityError), f("b", SeverityError)}, 2, 0},
		{"one sandbox many errors is capped at one broken sandbox", []Finding{f("a", SeverityError), f("a", SeverityError), f("a", SeverityWarning)}, 10, 90},
		{"warnings on 10% of sandboxes cost 3 points", []Finding{f("a", SeverityWarning), f("b", SeverityWarning), f("c", SeverityWarning)}, 30, 97},
		{"mixed", []Finding{f("a", SeverityError), f("b", SeverityWarning), f("b", SeverityInfo), f("c", SeverityInfo)}, 20, 92}, // 10+4+1 = 15 of 200
		{"unreachable context is one failed unit", []Finding{{Context: "dead", Severity: SeverityError}}, 9, 90},
		{"only an unreachable context", []Finding{{Context: "dead", Severity: SeverityError}}, 0, 0},
	}
	for _, tc := range tests {
		if got := Score(tc.findings, tc.sandboxes); got != tc.want {
			t.Errorf("%s: Score = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestCountBySeverity(t *testing.T) {
	e, w, i := CountBySeverity([]Finding{{Severity: SeverityError}, {Severity: SeverityWarning}, {Severity: SeverityWarning}, {Severity: SeverityInfo}})
	if e != 1 || w != 2 || i != 1 {
		t.Fatalf("got %d %d %d", e, w, i)
	}
}
