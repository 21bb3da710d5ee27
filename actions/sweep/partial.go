package sweep

import (
	"fmt"
	"strings"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// A read that could not see everything must never pass for a clean one: a
// user allowed Pods but not BatchSandboxes saw no sandbox and got exit 0.
// Unseen lists what a read of one context missed; any entry makes the
// context partial (ContextResult.Partial, a CONTEXT_PARTIAL finding, and by
// default a failing exit code).

// Unseen says what the read of a context could not see: kinds the server
// denied, lookups that did not finish (the source's notes), dead sandboxes
// whose address was not checked for a holder in other namespaces, and
// engines whose CRD is missing although Pods name sandboxes of theirs.
// Empty when the read saw everything it looked for.
func Unseen(src Source, snap *fleet.Snapshot) []string {
	var out []string
	for _, f := range snap.Status.Forbidden {
		out = append(out, "forbidden: "+f)
	}
	if n, ok := src.(interface{ Notes() []string }); ok {
		out = append(out, n.Notes()...)
	}
	unchecked := 0
	used := map[model.Engine]int{}
	for _, sb := range snap.Sandboxes() {
		used[sb.Engine()]++
		for i := range sb.Slots {
			if sb.Slots[i].NamespaceOnly {
				unchecked++
				break
			}
		}
	}
	if unchecked > 0 {
		why := "not looked up"
		if snap.ForeignBlocked != "" {
			why = snap.ForeignBlocked
		}
		out = append(out, fmt.Sprintf("%d sandbox(es) whose recorded address was not checked for a holder in other namespaces (%s)", unchecked, why))
	}
	for _, eng := range snap.Status.NotInstalled {
		if n := used[eng]; n > 0 {
			out = append(out, fmt.Sprintf("the %s CRD is not installed, yet %d sandbox(es) of it are named by Pods: their objects could not be read", engineCRD(eng), n))
		}
	}
	return out
}

func engineCRD(e model.Engine) string {
	switch e {
	case model.EngineBatchSandbox:
		return "OpenSandbox BatchSandbox"
	case model.EngineAgent:
		return "agent-sandbox Sandbox"
	}
	return string(e)
}

// partialFinding is the CONTEXT_PARTIAL finding of a context whose read
// missed unseen.
func partialFinding(name string, unseen []string) model.Finding {
	ev := make([]model.Evidence, len(unseen))
	for i, u := range unseen {
		ev[i] = model.Evidence{Kind: model.Observed, Text: u}
	}
	return model.NewFinding(name, nil, model.Notice{
		Code: model.CodeContextPartial, Severity: model.SeverityWarning,
		Message:  fmt.Sprintf("context %s was read partially; what it reports may miss problems: %s", name, strings.Join(unseen, "; ")),
		Evidence: ev,
	})
}

// FailOn is what makes a sweep fail (--fail-on): findings at or above
// Severity, and, when Partial, a context read partially whatever the
// severity.
type FailOn struct {
	Severity model.Severity
	Partial  bool
}

// DefaultFailOn is --fail-on's default: errors, and partial reads.
const DefaultFailOn = "error,partial"

// ParseFailOn reads --fail-on: a severity (warning, error or info),
// optionally with "partial", comma-separated.
func ParseFailOn(s string) (FailOn, error) {
	var f FailOn
	for _, part := range strings.Split(s, ",") {
		switch p := strings.ToLower(strings.TrimSpace(part)); model.Severity(p) {
		case model.SeverityError, model.SeverityWarning, model.SeverityInfo:
			if f.Severity != "" {
				return FailOn{}, fmt.Errorf("--fail-on takes one severity, not %q", s)
			}
			f.Severity = model.Severity(p)
		case "partial":
			f.Partial = true
		default:
			return FailOn{}, fmt.Errorf("--fail-on must be warning or error (or info), optionally with ,partial; not %q", s)
		}
	}
	if f.Severity == "" {
		return FailOn{}, fmt.Errorf("--fail-on needs a severity (warning, error or info): %q", s)
	}
	return f, nil
}

// String is the flag's form.
func (f FailOn) String() string {
	if f.Partial {
		return string(f.Severity) + ",partial"
	}
	return string(f.Severity)
}

// Fails reports whether finding fd fails the sweep.
func (f FailOn) Fails(fd model.Finding) bool {
	return fd.Severity.Rank() >= f.Severity.Rank() || (f.Partial && fd.Code == model.CodeContextPartial)
}
