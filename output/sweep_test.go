package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/internal/textsafe/textsafetest"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/output/outputtest"
)

func TestWriteSweepJSONContract(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSweepJSON(&buf, outputtest.SampleReport()); err != nil {
		t.Fatal(err)
	}
	c := outputtest.CheckJSONContract(t, buf.Bytes())
	if st := c.Summary.Stuck; st.Pods != 1 || st.PodInitializing != 1 || st.AgeMedian != 900 || st.AgeP90 != 900 ||
		len(st.TopNodes) != 1 || st.TopNodes[0].Name != "node-2" || len(st.TopImages) != 1 || st.TopImages[0].Pods != 1 {
		t.Errorf("stuck block %+v", st)
	}
	if len(c.Findings) != 4 || c.Summary.Findings.Error != 2 || c.Contexts[1].Reachable || c.Contexts[1].Error == "" {
		t.Errorf("decoded %+v", c)
	}
	if !strings.Contains(buf.String(), `"at": "2026-11-29T17:25:19Z"`) {
		t.Errorf("evidence time not RFC 3339:\n%s", buf.String())
	}
}

// The JSON of sweep -o json and serve's /findings holds a finding's
// tenant-written text whole, with DEL, C1 and bidi controls as \u escapes:
// it is read on terminals too (curl, cat).
func TestWriteSweepJSONEscapesControls(t *testing.T) {
	t.Parallel()
	r := outputtest.SampleReport()
	r.Findings[2].Message = textsafetest.HostileUnicode
	var buf bytes.Buffer
	if err := WriteSweepJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	textsafetest.AssertInert(t, buf.String())
	c := outputtest.CheckJSONContract(t, buf.Bytes())
	if got := c.Findings[2].Message; got != textsafetest.HostileUnicode {
		t.Errorf("message read back %q, want %q", got, textsafetest.HostileUnicode)
	}
}

// A partial context fails the default --fail-on in JUnit, as a failure of
// the context's own case, and its JSON says partial.
func TestWriteSweepPartial(t *testing.T) {
	t.Parallel()
	unseen := "forbidden: list batchsandboxes"
	r := sweep.Report{
		Contexts: []sweep.ContextResult{{Name: "a", Reachable: true, Partial: true, Unseen: []string{unseen}}},
		Findings: []model.Finding{{Code: model.CodeContextPartial, Severity: model.SeverityWarning, Context: "a",
			Message:  "context a was read partially; what it reports may miss problems: " + unseen,
			Evidence: []model.Evidence{{Kind: model.Observed, Text: unseen}}}},
	}
	def, err := sweep.ParseFailOn(sweep.DefaultFailOn)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSweepJUnit(&buf, &r, def); err != nil {
		t.Fatal(err)
	}
	doc := outputtest.ParseJUnit(t, buf.Bytes())
	if doc.Failures != 1 || !strings.Contains(buf.String(), `type="CONTEXT_PARTIAL"`) || !strings.Contains(buf.String(), "forbidden: list batchsandboxes") {
		t.Errorf("JUnit of a partial context: %d failures, want 1 CONTEXT_PARTIAL naming what was unseen:\n%s", doc.Failures, buf.String())
	}
	buf.Reset()
	if err := WriteSweepJSON(&buf, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"partial": true`) {
		t.Errorf("JSON of a partial context lacks \"partial\": true:\n%s", buf.String())
	}
}

func TestWriteSweepJUnit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failOn       sweep.FailOn
		wantFailures int
	}{{sweep.FailOn{Severity: model.SeverityError}, 2}, {sweep.FailOn{Severity: model.SeverityWarning}, 3}} {
		var buf bytes.Buffer
		if err := WriteSweepJUnit(&buf, outputtest.SampleReport(), tc.failOn); err != nil {
			t.Fatal(err)
		}
		doc := outputtest.ParseJUnit(t, buf.Bytes())
		if doc.Failures != tc.wantFailures || len(doc.Suites) != 2 {
			t.Fatalf("fail-on %s: %d failures in %d suites, want %d in 2\n%s", tc.failOn, doc.Failures, len(doc.Suites), tc.wantFailures, buf.String())
		}
		prod := doc.Suites[0]
		// The context case plus one per swept sandbox (a..d), b passing.
		if prod.Tests != 5 || len(prod.Cases) != 5 {
			t.Errorf("prod suite has %d cases, want 5", len(prod.Cases))
		}
		for _, c := range prod.Cases {
			if c.Name == "ns/b" && len(c.Failures) != 0 {
				t.Errorf("clean sandbox b has failures")
			}
			if c.Name == "ns/a" && (len(c.Failures) != 1 || c.Failures[0].Type != model.CodeIPTaken || !strings.Contains(c.Failures[0].Message, "<&>")) {
				t.Errorf("case a = %+v", c)
			}
			if c.Name == "ns/d" && !strings.Contains(c.SystemOut, "FAILED_STICKY") {
				t.Errorf("info finding not in system-out: %+v", c)
			}
		}
		staging := doc.Suites[1]
		if staging.Failures != 1 || staging.Cases[0].Failures[0].Type != model.CodeContextUnreachable {
			t.Errorf("staging suite = %+v", staging)
		}
	}
}

func TestWriteSweepTable(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSweepTable(&buf, outputtest.SampleReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(out, "\n")
	header := lines[0]
	col := strings.Index(header, "CODE")
	if col < 0 {
		t.Fatalf("no header:\n%s", out)
	}
	// Aligned: every finding row has its code starting under CODE.
	for _, l := range lines[1:5] {
		if !strings.HasPrefix(l[col:], "CONTEXT_UNREACHABLE") && !strings.HasPrefix(l[col:], "IP_TAKEN") &&
			!strings.HasPrefix(l[col:], "RESTART_OOM") && !strings.HasPrefix(l[col:], "FAILED_STICKY") {
			t.Errorf("row not aligned under CODE: %q", l)
		}
	}
	for _, want := range []string{"EVIDENCE", "observed holder b-0 @2026-11-29T17:25:19Z", "inferred no logs expected",
		"staging", "cannot reach cluster", "4 sandboxes, 4 pods: 2 error, 1 warning, 1 info. Score",
		"Stuck Terminating: 1 pods (1 in PodInitializing), since deletion median 15m0s, p90 15m0s.",
		"top nodes: node-2 1", "top images: python:3.12 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// The table is read on a terminal: what the fleet wrote in a finding is
// shown, never obeyed.
func TestWriteSweepTableIsInert(t *testing.T) {
	t.Parallel()
	r := outputtest.SampleReport()
	h := textsafetest.Hostile
	r.Findings[1].Message = "msg " + h
	r.Findings[1].Sandbox = "sb" + h
	r.Findings[1].Evidence = []model.Evidence{{Kind: model.Observed, Text: "ev " + h}}
	r.Contexts[1].Error = "err " + h
	r.Notes = []string{"note " + h}
	var b bytes.Buffer
	if err := WriteSweepTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	textsafetest.AssertInert(t, out)
	for _, want := range []string{"ev " + textsafetest.Shown, "err " + textsafetest.Shown, "note " + textsafetest.Shown, "msg ␛]0;evil title␇"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// On a terminal the findings table fits its width by cutting MESSAGE (the
// EVIDENCE block gives it whole); for a file or a pipe MESSAGE is whole on
// its row, for grep and awk.
func TestWriteSweepTableWidth(t *testing.T) {
	t.Parallel()
	r := outputtest.SampleReport()
	long := "the engine forwards to 10.0.3.7, which another live Pod holds since its IP was reused by the node's IPAM after a restart of the node"
	r.Findings[2].Message = long
	id := "16952042-4659-4a6b-9d3e-0c5aff3444d1" // sandboxes named by their id: 36 columns, and its Pod's 38
	r.Findings[2].Sandbox, r.Findings[2].Pod = id, id+"-0"
	var pipe bytes.Buffer
	if err := WriteSweepTable(&pipe, r); err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(pipe.String(), "\n") {
		if strings.Contains(l, "RESTART_OOM") {
			row = l
			break
		}
	}
	if !strings.HasSuffix(row, long) {
		t.Errorf("not a terminal: the row does not end with the whole message:\n%s", pipe.String())
	}

	for _, width := range []int{100, 120, 200} {
		var tty bytes.Buffer
		if err := WriteSweepTableWidth(&tty, r, width); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(tty.String(), "\n")
		for _, l := range lines[:len(r.Findings)+1] {
			if n := runewidth.StringWidth(l); n > width {
				t.Errorf("width %d: a table line is %d columns: %q", width, n, l)
			}
		}
		if !strings.Contains(tty.String(), "…") || !strings.Contains(tty.String(), "    "+long+"\n") ||
			!strings.Contains(tty.String(), "ns/"+id+" pod "+id+"-0\n") {
			t.Errorf("width %d: the message and names are not cut in the table and whole under EVIDENCE:\n%s", width, tty.String())
		}
	}

	// One context: its column gives its room to the rest, and the table
	// fits an 80-column terminal (it stayed 91 columns wide).
	one := *r
	one.Contexts = r.Contexts[:1]
	one.Findings = nil
	for _, f := range r.Findings {
		if f.Context == r.Contexts[0].Name {
			one.Findings = append(one.Findings, f)
		}
	}
	one.Findings = append(one.Findings, model.Finding{Code: model.CodeRestartUnexplained, Severity: model.SeverityWarning,
		Context: r.Contexts[0].Name, Namespace: "eval", Sandbox: id, Pod: id + "-0", Message: long})
	for _, width := range []int{80, 90} {
		var tty bytes.Buffer
		if err := WriteSweepTableWidth(&tty, &one, width); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(tty.String(), "\n")
		if strings.Contains(lines[0], "CONTEXT") {
			t.Errorf("one context, width %d: the table still has a CONTEXT column: %q", width, lines[0])
		}
		for _, l := range lines[:len(one.Findings)+1] {
			if n := runewidth.StringWidth(l); n > width {
				t.Errorf("one context, width %d: a table line is %d columns: %q", width, n, l)
			}
		}
	}
}

// A finding about no one sandbox (a warm pool's) gets a case of its
// namespace: it was filed under a second case named as the context's.
func TestWriteSweepJUnitCaseNamesAreUnique(t *testing.T) {
	t.Parallel()
	r := outputtest.SampleReport()
	r.Findings = append(r.Findings, model.Finding{Code: model.CodeWarmPoolExhausted, Severity: model.SeverityWarning,
		Context: r.Contexts[0].Name, Namespace: "ns", Message: "warm pool p has no ready member"})
	var buf bytes.Buffer
	if err := WriteSweepJUnit(&buf, r, sweep.FailOn{Severity: model.SeverityWarning}); err != nil {
		t.Fatal(err)
	}
	for _, suite := range outputtest.ParseJUnit(t, buf.Bytes()).Suites {
		seen := map[string]bool{}
		for _, c := range suite.Cases {
			if seen[c.Name] {
				t.Errorf("suite %s: two cases named %q", suite.Name, c.Name)
			}
			seen[c.Name] = true
		}
		if suite.Name == r.Contexts[0].Name && !seen["namespace ns"] {
			t.Errorf("suite %s: no case for the namespace's pool finding", suite.Name)
		}
	}
}
