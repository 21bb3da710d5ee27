package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// The sweep's report, as a table for a terminal or a file, as JSON (a
// contract: sweep -o json and serve's /findings) and as JUnit for CI. The
// report and its verdicts are actions/sweep's; this file only prints it.

const tablePadding = 2 // spaces between the table's columns

// WriteSweepJSON writes a sweep's report in its contract form: sweep
// -o json, and serve's /findings.
func WriteSweepJSON(w io.Writer, r *sweep.Report) error {
	return textsafe.WriteJSON(w, r, "  ")
}

// WriteSweepTable writes a sweep's report for a file or a pipe: every cell
// whole, MESSAGE included, however long the line.
func WriteSweepTable(w io.Writer, r *sweep.Report) error { return WriteSweepTableWidth(w, r, 0) }

// On a terminal, MESSAGE is cut to fit, down to minMessageColumn; past
// that the names ([CONTEXT,] NAMESPACE, SANDBOX, POD: ids of 36 characters)
// are cut too, down to minNameColumn each, every cut cell given whole in
// the EVIDENCE block. Below that the row is left wider than the terminal
// rather than unreadable.
const (
	minMessageColumn = 12
	minNameColumn    = 8 // the TUI's short ids
)

// fitColumns narrows the name columns of cols (widths, in the table's
// order) until MESSAGE has minMessageColumn within width, and returns
// MESSAGE's width.
func fitColumns(cols []int, width int) int {
	const firstName = 3 // CONTEXT, NAMESPACE, SANDBOX, POD follow #, SEVERITY, CODE
	used := 0
	for _, c := range cols {
		used += c + tablePadding
	}
	for used+minMessageColumn > width {
		widest := -1
		for j := firstName; j < len(cols); j++ {
			if cols[j] > minNameColumn && (widest < 0 || cols[j] > cols[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			break
		}
		cols[widest]--
		used--
	}
	return max(width-used, minMessageColumn)
}

// WriteSweepTableWidth writes the findings as aligned columns, then the
// evidence of each finding under its number, then the contexts and the
// summary. Every field the fleet wrote goes through textsafe.Line first:
// the table is read on a terminal, which must not obey what a sandbox put
// in its messages. For a terminal width columns wide, the findings table
// fits by cutting MESSAGE, which the EVIDENCE block then gives whole;
// width 0 cuts nothing.
func WriteSweepTableWidth(w io.Writer, r *sweep.Report, width int) error {
	safe := textsafe.Line
	// With one context the CONTEXT column says the same on every row (the
	// contexts' table below names it): it gives its room to the rest, so
	// that the table fits 80 columns.
	oneContext := len(r.Contexts) <= 1
	header := []string{"#", "SEVERITY", "CODE", "CONTEXT", "NAMESPACE", "SANDBOX", "POD"}
	if oneContext {
		header = slices.Delete(header, 3, 4)
	}
	rows := make([][]string, len(r.Findings))
	cols := make([]int, len(header))
	for i, h := range header {
		cols[i] = runewidth.StringWidth(h)
	}
	for i, f := range r.Findings {
		rows[i] = []string{strconv.Itoa(i + 1), safe(string(f.Severity)), safe(f.Code), safe(textsafe.OrDash(f.Context)),
			safe(textsafe.OrDash(f.Namespace)), safe(textsafe.OrDash(f.Sandbox)), safe(textsafe.OrDash(f.Pod))}
		if oneContext {
			rows[i] = slices.Delete(rows[i], 3, 4)
		}
		for j, c := range rows[i] {
			cols[j] = max(cols[j], runewidth.StringWidth(c))
		}
	}
	messageWidth := 0 // whole
	if width > 0 {
		messageWidth = fitColumns(cols, width)
	}
	cut := make([]bool, len(r.Findings)) // a cell shown cut: EVIDENCE gives it whole
	tw := tabwriter.NewWriter(w, 0, 0, tablePadding, ' ', 0)
	if len(r.Findings) == 0 {
		fmt.Fprintln(tw, "No findings.")
	} else {
		fmt.Fprintln(tw, strings.Join(header, "\t")+"\tMESSAGE")
		for i, f := range r.Findings {
			for j, c := range rows[i] {
				if runewidth.StringWidth(c) > cols[j] {
					rows[i][j], cut[i] = runewidth.Truncate(c, cols[j], "…"), true
				}
			}
			msg := safe(f.Message)
			if messageWidth > 0 && runewidth.StringWidth(msg) > messageWidth {
				msg, cut[i] = runewidth.Truncate(msg, messageWidth, "…"), true
			}
			fmt.Fprintf(tw, "%s\t%s\n", strings.Join(rows[i], "\t"), msg)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Findings) > 0 {
		fmt.Fprintln(w, "\nEVIDENCE")
		for i, f := range r.Findings {
			if len(f.Evidence) == 0 && !cut[i] {
				continue
			}
			fmt.Fprintf(w, "[%d] %s %s\n", i+1, safe(f.Code), safe(subjectOf(f)))
			if cut[i] {
				fmt.Fprintf(w, "    %s\n", safe(f.Message))
			}
			for _, e := range f.Evidence {
				at := ""
				if e.At != nil {
					at = " @" + e.At.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(w, "    %-8s %s%s\n", safe(string(e.Kind)), safe(e.Text), at)
			}
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CONTEXT\tSERVER\tREACHABLE\tPARTIAL\tERROR")
	for _, c := range r.Contexts {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%t\t%s\n", safe(textsafe.OrDash(c.Name)), safe(textsafe.OrDash(c.Server)), c.Reachable, c.Partial, safe(textsafe.OrDash(c.Error)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", safe(n))
	}
	s := r.Summary
	if _, err := fmt.Fprintf(w, "\n%d sandboxes, %d pods: %d error, %d warning, %d info. Score %d/100.\n",
		s.Sandboxes, s.Pods, s.Findings.Error, s.Findings.Warning, s.Findings.Info, s.Score); err != nil {
		return err
	}
	return writeStuck(w, s.Stuck)
}

// writeStuck writes the stuck block of the summary, nothing when no Pod is stuck.
func writeStuck(w io.Writer, st fleet.StuckSummary) error {
	if st.Pods == 0 && st.Objects == 0 {
		return nil
	}
	counts := func(cs []fleet.Count) string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = fmt.Sprintf("%s %d", c.Name, c.N)
		}
		return strings.Join(out, ", ")
	}
	secs := func(s float64) string { return time.Duration(s * float64(time.Second)).Round(time.Second).String() }
	_, err := fmt.Fprintf(w, "Stuck Terminating: %d pods (%d in PodInitializing), since deletion median %s, p90 %s.\n  top nodes: %s\n  top images: %s\n",
		st.Pods, st.PodInitializing, secs(st.AgeMedian), secs(st.AgeP90), counts(st.TopNodes), counts(st.TopImages))
	if err == nil && st.Objects > 0 {
		_, err = fmt.Fprintf(w, "  sandbox objects stuck on finalizers: %d\n", st.Objects)
	}
	return err
}

// JUnit documents (the de-facto schema CI systems read).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	ClassName string         `xml:"classname,attr"`
	Failures  []junitFailure `xml:"failure"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteSweepJUnit writes one test suite per context and one test case per
// sandbox (plus one for the context itself, and one for each namespace
// with findings about no one sandbox, a warm pool's), with a failure per finding
// failOn fails on (a partial read is the context's case); lower findings go to the case's system-out. Sandboxes
// without findings (r.Swept) are passing cases.
func WriteSweepJUnit(w io.Writer, r *sweep.Report, failOn sweep.FailOn) error {
	type caseKey struct{ ns, name string }
	doc := junitSuites{Name: "sandscope sweep"}
	for _, c := range r.Contexts {
		suite := junitSuite{Name: c.Name, Timestamp: r.GeneratedAt.UTC().Format(time.RFC3339)}
		index := map[caseKey]int{}
		addCase := func(k caseKey) int {
			if i, ok := index[k]; ok {
				return i
			}
			name := k.ns + "/" + k.name
			switch {
			case k.name == "" && k.ns == "":
				name = "context " + c.Name
			case k.name == "": // about a namespace's pools or claims, no one sandbox
				name = "namespace " + k.ns
			}
			suite.Cases = append(suite.Cases, junitCase{Name: name, ClassName: "sandscope." + c.Name})
			index[k] = len(suite.Cases) - 1
			return index[k]
		}
		addCase(caseKey{}) // the context itself: reachable or not
		for _, id := range r.Swept {
			if id.Context == c.Name {
				addCase(caseKey{id.Namespace, id.Name})
			}
		}
		for _, f := range r.Findings {
			if f.Context != c.Name {
				continue
			}
			tc := &suite.Cases[addCase(caseKey{f.Namespace, f.Sandbox})]
			if failOn.Fails(f) {
				tc.Failures = append(tc.Failures, junitFailure{
					Message: f.Code + ": " + f.Message, Type: f.Code, Text: evidenceText(f)})
				suite.Failures++
			} else {
				tc.SystemOut += fmt.Sprintf("%s %s: %s\n", f.Severity, f.Code, f.Message)
			}
		}
		suite.Tests = len(suite.Cases)
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Suites = append(doc.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func evidenceText(f model.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) %s\n", f.Code, f.Severity, subjectOf(f))
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "%s: %s\n", e.Kind, e.Text)
	}
	return b.String()
}

func subjectOf(f model.Finding) string {
	s := f.Context
	if f.Sandbox != "" {
		s += " " + f.Namespace + "/" + f.Sandbox
	}
	if f.Pod != "" {
		s += " pod " + f.Pod
	}
	return s
}
