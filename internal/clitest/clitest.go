// Package clitest runs sandscope's command line in tests and reads what it
// prints for programs: the exit code and both streams, the one JSON error
// object on stderr, and JSON lines on stdout. It takes the entry point as a
// value (cli.Main) so that cli's own tests can use it too.
package clitest

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// Main is the command line's entry point, cli.Main.
type Main func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Result is one run: its exit code and what it printed.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs main with args, stdin as its standard input.
func Run(main Main, stdin string, args ...string) Result {
	var out, errOut bytes.Buffer
	code := main(args, strings.NewReader(stdin), &out, &errOut)
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// ErrorObject parses r's stderr, which must be exactly one JSON error
// object, {"error":{...}}, carrying keys (the command's contract), and
// returns what "error" holds.
func (r Result) ErrorObject(t testing.TB, keys ...string) map[string]any {
	t.Helper()
	var v struct {
		Error map[string]any `json:"error"`
	}
	if strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || json.Unmarshal([]byte(r.Stderr), &v) != nil || v.Error == nil {
		t.Fatalf("stderr is not one JSON error object: %q (exit %d, stdout %q)", r.Stderr, r.Code, r.Stdout)
	}
	for _, k := range keys {
		if _, ok := v.Error[k]; !ok {
			t.Errorf("error object lacks %q: %s", k, r.Stderr)
		}
	}
	return v.Error
}

// JSONLines parses s as one JSON object a line; blank lines are skipped.
func JSONLines(t testing.TB, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// JSONLinesBySandbox parses s as JSON lines (JSONLines), one a sandbox as
// a command over a selector prints them, and keys each by its sandbox's
// name: the last part of its "sandbox" field ("team/sbx-a" is sbx-a). A
// line without a sandbox, or a second line for one, fails the test.
func JSONLinesBySandbox(t testing.TB, s string) map[string]map[string]any {
	t.Helper()
	by := map[string]map[string]any{}
	for _, m := range JSONLines(t, s) {
		ref, ok := m["sandbox"].(string)
		if !ok || ref == "" {
			t.Fatalf("a line names no sandbox: %v", m)
		}
		name := ref[strings.LastIndex(ref, "/")+1:]
		if _, dup := by[name]; dup {
			t.Fatalf("two lines for sandbox %s:\n%s", name, s)
		}
		by[name] = m
	}
	return by
}
