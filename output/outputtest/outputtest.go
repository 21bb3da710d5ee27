// Package outputtest holds what the tests of a sweep's printed report
// share: a sample report, and readers of the JSON contract and of JUnit
// that fail a test on anything else. output's tests print with them, and
// the sweep's integration tests read sandscope's output with them.
package outputtest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"testing"
	"time"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// SampleReport is a report of two contexts, one unreachable, with a
// finding of each severity, evidence with and without a time, a sandbox
// without findings and a stuck Pod: every part the printers print.
func SampleReport() *sweep.Report {
	at := time.Date(2026, 11, 29, 17, 25, 19, 0, time.UTC)
	r := &sweep.Report{
		GeneratedAt: at,
		Contexts: []sweep.ContextResult{
			{Name: "prod", Server: "https://10.0.0.1:6443", Reachable: true},
			{Name: "staging", Server: "https://127.0.0.1:1", Error: "cannot reach cluster"},
		},
		Findings: []model.Finding{
			{Code: model.CodeContextUnreachable, Severity: model.SeverityError, Context: "staging", Message: "context staging could not be swept", Evidence: []model.Evidence{{Kind: model.Observed, Text: "cannot reach cluster"}}},
			{Code: model.CodeIPTaken, Severity: model.SeverityError, Context: "prod", Namespace: "ns", Sandbox: "a", Pod: "a-0", Message: "10.0.3.7 is held by b-0 <&>", Evidence: []model.Evidence{{Kind: model.Observed, Text: "holder b-0", At: &at}}},
			{Code: model.CodeRestartOOM, Severity: model.SeverityWarning, Context: "prod", Namespace: "ns", Sandbox: "c", Pod: "c-0", Message: "OOMKilled", Evidence: []model.Evidence{{Kind: model.Inferred, Text: "no logs expected"}}},
			{Code: model.CodeFailedSticky, Severity: model.SeverityInfo, Context: "prod", Namespace: "ns", Sandbox: "d", Pod: "d-0", Message: "sticky", Evidence: []model.Evidence{}},
		},
		Swept: []sweep.SandboxID{{Context: "prod", Namespace: "ns", Name: "a"}, {Context: "prod", Namespace: "ns", Name: "b"}, {Context: "prod", Namespace: "ns", Name: "c"}, {Context: "prod", Namespace: "ns", Name: "d"}},
	}
	r.Summary = sweep.Summary{Sandboxes: 4, Pods: 4, Findings: sweep.Counts{Error: 2, Warning: 1, Info: 1}}
	r.Summary.Score = model.Score(r.Findings, 4)
	r.Summary.Stuck = fleet.SummarizeStuck([]fleet.StuckPod{
		{Namespace: "team-rl", Pod: "sbx-d-0", Node: "node-2", Image: "python:3.12", DeletingSince: r.GeneratedAt.Add(-15 * time.Minute), PodInitializing: true},
	}, r.GeneratedAt)
	return r
}

// ContractReport has exactly the fields of the JSON contract; decoding with
// DisallowUnknownFields proves nothing else is emitted.
type ContractReport struct {
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
// keys every object must carry.
func CheckJSONContract(t testing.TB, data []byte) ContractReport {
	t.Helper()
	var c ContractReport
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

// JUnitDoc is what a JUnit document of a sweep says.
type JUnitDoc struct {
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
// the document.
func ParseJUnit(t testing.TB, data []byte) JUnitDoc {
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
	var doc JUnitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit does not decode: %v", err)
	}
	return doc
}
