package sweep

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/sandscope/sandscope/internal/textsafe/textsafetest"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

func sampleReport() *Report {
	at := time.Date(2026, 11, 29, 17, 25, 19, 0, time.UTC)
	r := &Report{
		GeneratedAt: at,
		Contexts: []ContextResult{
			{Name: "prod", Server: "https://10.0.0.1:6443", Reachable: true},
			{Name: "staging", Server: "https://127.0.0.1:1", Error: "cannot reach cluster"},
		},
		Findings: []model.Finding{
			{Code: model.CodeContextUnreachable, Severity: model.SeverityError, Context: "staging", Message: "context staging could not be swept", Evidence: []model.Evidence{{Kind: model.Observed, Text: "cannot reach cluster"}}},
			{Code: model.CodeIPTaken, Severity: model.SeverityError, Context: "prod", Namespace: "ns", Sandbox: "a", Pod: "a-0", Message: "10.0.3.7 is held by b-0 <&>", Evidence: []model.Evidence{{Kind: model.Observed, Text: "holder b-0", At: &at}}},
			{Code: model.CodeRestartOOM, Severity: model.SeverityWarning, Context: "prod", Namespace: "ns", Sandbox: "c", Pod: "c-0", Message: "OOMKilled", Evidence: []model.Evidence{{Kind: model.Inferred, Text: "no logs expected"}}},
			{Code: model.CodeFailedSticky, Severity: model.SeverityInfo, Context: "prod", Namespace: "ns", Sandbox: "d", Pod: "d-0", Message: "sticky", Evidence: []model.Evidence{}},
		},
		Swept: []SandboxID{{"prod", "ns", "a"}, {"prod", "ns", "b"}, {"prod", "ns", "c"}, {"prod", "ns", "d"}},
	}
	r.Summary = Summary{Sandboxes: 4, Pods: 4, Findings: Counts{Error: 2, Warning: 1, Info: 1}}
	r.Summary.Score = model.Score(r.Findings, 4)
	r.Summary.Stuck = fleet.SummarizeStuck([]fleet.StuckPod{
		{Namespace: "team-rl", Pod: "sbx-d-0", Node: "node-2", Image: "python:3.12", DeletingSince: r.GeneratedAt.Add(-15 * time.Minute), PodInitializing: true},
	}, r.GeneratedAt)
	return r
}

// contractReport has exactly the fields of the JSON contract; decoding with
// DisallowUnknownFields proves nothing else is emitted.
type contractReport struct {
	GeneratedAt time.Time `json:"generatedAt"`
	Contexts    []struct {
		Name      string   `json:"name"`
		Server    string   `json:"server"`
		Reachable bool     `json:"reachable"`
		Partial   bool     `json:"partial"`
		Unseen    []string `json:"unseen"`
		Error     string   `json:"error"`
		Slow      string   `json:"slow"`
		Syncing   *struct {
			Received  int64 `json:"received"`
			Total     int64 `json:"total"`
			Resources []struct {
				Resource  string  `json:"resource"`
				Received  int64   `json:"received"`
				Total     *int64  `json:"total"`
				PerSecond float64 `json:"perSecond"`
				Done      bool    `json:"done"`
			} `json:"resources"`
		} `json:"syncing"`
	} `json:"contexts"`
	Summary struct {
		Sandboxes int `json:"sandboxes"`
		Pods      int `json:"pods"`
		Findings  struct {
			Error   int `json:"error"`
			Warning int `json:"warning"`
			Info    int `json:"info"`
		} `json:"findings"`
		Score int `json:"score"`
		Stuck struct {
			Pods            int     `json:"pods"`
			PodInitializing int     `json:"podInitializing"`
			AgeMedian       float64 `json:"ageMedianSeconds"`
			AgeP90          float64 `json:"ageP90Seconds"`
			TopNodes        []struct {
				Name string `json:"name"`
				Pods int    `json:"pods"`
			} `json:"topNodes"`
			TopImages []struct {
				Name string `json:"name"`
				Pods int    `json:"pods"`
			} `json:"topImages"`
			Objects int `json:"objects"`
		} `json:"stuck"`
	} `json:"summary"`
	Findings []struct {
		Code      string `json:"code"`
		Severity  string `json:"severity"`
		Context   string `json:"context"`
		Namespace string `json:"namespace"`
		Sandbox   string `json:"sandbox"`
		Pod       string `json:"pod"`
		Message   string `json:"message"`
		Evidence  []struct {
			Kind string     `json:"kind"`
			Text string     `json:"text"`
			At   *time.Time `json:"at"`
		} `json:"evidence"`
	} `json:"findings"`
}

// CheckJSONContract decodes data strictly into the contract and checks the
// keys every object must carry. Shared with the integration tests.
func CheckJSONContract(t *testing.T, data []byte) contractReport {
	t.Helper()
	var c contractReport
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("report JSON does not match the contract: %v\n%s", err, data)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"generatedAt", "contexts", "summary", "findings"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	if len(raw) != 4 {
		t.Errorf("top-level keys: %d, want exactly 4", len(raw))
	}
	var loose struct {
		Contexts []map[string]json.RawMessage `json:"contexts"`
		Findings []map[string]json.RawMessage `json:"findings"`
	}
	_ = json.Unmarshal(data, &loose)
	for _, c := range loose.Contexts {
		for _, k := range []string{"name", "server", "reachable", "partial", "error"} {
			if _, ok := c[k]; !ok {
				t.Errorf("context lacks %q", k)
			}
		}
	}
	for _, f := range loose.Findings {
		for _, k := range []string{"code", "severity", "context", "namespace", "sandbox", "pod", "message", "evidence"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding lacks %q", k)
			}
		}
		if string(f["evidence"]) == "null" {
			t.Errorf("evidence is null, want a list")
		}
	}
	for _, f := range c.Findings {
		for _, e := range f.Evidence {
			if e.Kind != "observed" && e.Kind != "inferred" && e.Kind != "claimed" {
				t.Errorf("evidence kind %q", e.Kind)
			}
		}
	}
	return c
}

func TestWriteJSONContract(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	c := CheckJSONContract(t, buf.Bytes())
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
func TestWriteJSONEscapesControls(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Findings[2].Message = textsafetest.HostileUnicode
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	textsafetest.AssertInert(t, buf.String())
	c := CheckJSONContract(t, buf.Bytes())
	if got := c.Findings[2].Message; got != textsafetest.HostileUnicode {
		t.Errorf("message read back %q, want %q", got, textsafetest.HostileUnicode)
	}
}

// A report fails at --fail-on and above; one whose every context was
// unreachable says so.
func TestFailsAndUnreachable(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	if !r.Fails(FailOn{Severity: model.SeverityError}) {
		t.Errorf("fail-on error with errors does not fail")
	}
	r.Findings = r.Findings[2:] // warning + info only
	if r.Fails(FailOn{Severity: model.SeverityError}) {
		t.Errorf("fail-on error with warnings only fails")
	}
	if !r.Fails(FailOn{Severity: model.SeverityWarning}) {
		t.Errorf("fail-on warning with a warning does not fail")
	}
	r.Findings = r.Findings[1:] // info only
	if r.Fails(FailOn{Severity: model.SeverityWarning}) {
		t.Errorf("fail-on warning with info only fails")
	}
	if r.Unreachable() {
		t.Errorf("a report with a reachable context is unreachable")
	}
	r.Contexts[0].Reachable = false
	if !r.Unreachable() {
		t.Errorf("every context unreachable, and the report does not say so")
	}
	if _, err := ParseFailOn("fatal"); err == nil {
		t.Error("ParseFailOn accepted fatal")
	}
	if s, err := ParseFailOn("Warning"); err != nil || s != (FailOn{Severity: model.SeverityWarning}) {
		t.Errorf("ParseFailOn(Warning) = %v %v", s, err)
	}
	if s, err := ParseFailOn(DefaultFailOn); err != nil || s != (FailOn{Severity: model.SeverityError, Partial: true}) {
		t.Errorf("ParseFailOn(%s) = %v %v", DefaultFailOn, s, err)
	}
	for _, bad := range []string{"partial", "error,warning", "error,partial,x"} {
		if _, err := ParseFailOn(bad); err == nil {
			t.Errorf("ParseFailOn accepted %q", bad)
		}
	}
}

// A partial context fails the default --fail-on (error,partial), whatever
// its finding's severity, and passes --fail-on error: in the exit code and
// in JUnit, where it is a failure of the context's own case.
func TestPartialFails(t *testing.T) {
	t.Parallel()
	r := Report{
		Contexts: []ContextResult{{Name: "a", Reachable: true, Partial: true, Unseen: []string{"forbidden: list batchsandboxes"}}},
		Findings: []model.Finding{partialFinding("a", []string{"forbidden: list batchsandboxes"})},
	}
	def, err := ParseFailOn(DefaultFailOn)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fails(def) {
		t.Error("a partial context passes the default --fail-on")
	}
	if r.Fails(FailOn{Severity: model.SeverityError}) {
		t.Error("a partial context fails --fail-on error (without partial)")
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, &r, def); err != nil {
		t.Fatal(err)
	}
	doc := ParseJUnit(t, buf.Bytes())
	if doc.Failures != 1 || !strings.Contains(buf.String(), `type="CONTEXT_PARTIAL"`) || !strings.Contains(buf.String(), "forbidden: list batchsandboxes") {
		t.Errorf("JUnit of a partial context: %d failures, want 1 CONTEXT_PARTIAL naming what was unseen:\n%s", doc.Failures, buf.String())
	}
	buf.Reset()
	if err := WriteJSON(&buf, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"partial": true`) {
		t.Errorf("JSON of a partial context lacks \"partial\": true:\n%s", buf.String())
	}
}

type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name     string `xml:"name,attr"`
			Failures []struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// ParseJUnit checks well-formedness by decoding every token, then decodes
// the document. Shared with the integration tests.
func ParseJUnit(t *testing.T, data []byte) junitDoc {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("JUnit is not well-formed XML: %v\n%s", err, data)
		}
	}
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit does not decode: %v", err)
	}
	return doc
}

func TestWriteJUnit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failOn       FailOn
		wantFailures int
	}{{FailOn{Severity: model.SeverityError}, 2}, {FailOn{Severity: model.SeverityWarning}, 3}} {
		var buf bytes.Buffer
		if err := WriteJUnit(&buf, sampleReport(), tc.failOn); err != nil {
			t.Fatal(err)
		}
		doc := ParseJUnit(t, buf.Bytes())
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

func TestWriteTable(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleReport()); err != nil {
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
func TestWriteTableIsInert(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	h := textsafetest.Hostile
	r.Findings[1].Message = "msg " + h
	r.Findings[1].Sandbox = "sb" + h
	r.Findings[1].Evidence = []model.Evidence{{Kind: model.Observed, Text: "ev " + h}}
	r.Contexts[1].Error = "err " + h
	r.Notes = []string{"note " + h}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
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
func TestWriteTableWidth(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	long := "the engine forwards to 10.0.3.7, which another live Pod holds since its IP was reused by the node's IPAM after a restart of the node"
	r.Findings[2].Message = long
	id := "16952042-4659-4a6b-9d3e-0c5aff3444d1" // sandboxes named by their id: 36 columns, and its Pod's 38
	r.Findings[2].Sandbox, r.Findings[2].Pod = id, id+"-0"
	var pipe bytes.Buffer
	if err := WriteTable(&pipe, r); err != nil {
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
		if err := WriteTableWidth(&tty, r, width); err != nil {
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
}
