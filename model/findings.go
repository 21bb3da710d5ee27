package model

import (
	"math"
	"sort"
)

// FindingSeverity is the severity table of the sweep: it is the
// contract, so a notice whose own severity disagrees is reported at the
// table's. Codes not in the table keep their notice's severity.
var FindingSeverity = map[string]Severity{
	CodeIPTaken:               SeverityError,
	CodePodDead:               SeverityError,
	CodePodGone:               SeverityError,
	CodeUIDChanged:            SeverityWarning,
	CodeIPStale:               SeverityWarning,
	CodeStuckTerminating:      SeverityWarning,
	CodeEntrypointNotRun:      SeverityWarning,
	CodeImageConfigUnreadable: SeverityWarning,
	CodeNotExecReady:          SeverityWarning,
	CodeStateMismatch:         SeverityWarning,
	CodeFailedSticky:          SeverityInfo,
	CodeRestartOOM:            SeverityWarning,
	CodeRestartLiveness:       SeverityWarning,
	CodeRestartEvicted:        SeverityWarning,
	CodeRestartUnexplained:    SeverityWarning,
	CodeContextUnreachable:    SeverityError,
	CodeContextPartial:        SeverityWarning, // and fails the default --fail-on (error,partial)
	CodeTaskFailed:            SeverityWarning,
	CodePodRecreated:          SeverityWarning,
	CodeWarmPoolExhausted:     SeverityWarning,
	CodeWarmPoolDegraded:      SeverityWarning,
	CodeClaimPending:          SeverityWarning,
	CodeClaimSandboxDead:      SeverityError,
}

// SeverityOf returns the sweep severity of a notice: the table's, else its own.
func SeverityOf(n Notice) Severity {
	if s, ok := FindingSeverity[n.Code]; ok {
		return s
	}
	return n.Severity
}

// NewFinding places a sandbox's notice in a context. sb may be nil for
// findings about the context itself.
func NewFinding(context string, sb *Sandbox, n Notice) Finding {
	f := Finding{
		Code:     n.Code,
		Severity: SeverityOf(n),
		Context:  context,
		Pod:      n.Pod,
		Message:  n.Message,
		Evidence: n.Evidence,
	}
	if sb != nil {
		f.Namespace, f.Sandbox = sb.Namespace(), sb.Name()
	}
	if f.Evidence == nil {
		f.Evidence = []Evidence{} // "evidence": [] rather than null in JSON
	}
	return f
}

// SortFindings orders findings worst first, then by context, namespace,
// sandbox, pod and code, so reports are stable from run to run.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if ra, rb := a.Severity.Rank(), b.Severity.Rank(); ra != rb {
			return ra > rb
		}
		if a.Context != b.Context {
			return a.Context < b.Context
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Sandbox != b.Sandbox {
			return a.Sandbox < b.Sandbox
		}
		if a.Pod != b.Pod {
			return a.Pod < b.Pod
		}
		return a.Code < b.Code
	})
}

// Score weights. A sandbox's penalty is the sum of its findings' weights,
// capped at ScoreSandboxCap: one sandbox with five errors is one broken
// sandbox, not five.
const (
	ScoreWeightError   = 10
	ScoreWeightWarning = 3
	ScoreWeightInfo    = 1
	ScoreSandboxCap    = 10
)

// ScoreWeight is the penalty of one finding of severity s.
func ScoreWeight(s Severity) int {
	switch s {
	case SeverityError:
		return ScoreWeightError
	case SeverityWarning:
		return ScoreWeightWarning
	case SeverityInfo:
		return ScoreWeightInfo
	}
	return 0
}

// Score rates a fleet from 0 to 100: 100 minus the weighted findings per
// sandbox, as a percentage of the worst possible.
//
//	score = floor(100 × (1 − Σ_units min(Σ weights, 10) / (10 × units)))
//
// where a unit is a sandbox (sandboxes of them) or a finding about no sandbox
// (a context that did not answer counts as one fully failed unit), and the
// weights are error 10, warning 3, info 1. So 100 means no finding at all,
// a fleet where every sandbox has an error scores 0, and one warning on each
// of 10% of the sandboxes costs 3 points. With no unit at all the score is 100.
func Score(findings []Finding, sandboxes int) int {
	type key struct{ context, namespace, sandbox string }
	penalty := make(map[key]int)
	extraUnits, total := 0, 0
	for _, f := range findings {
		w := ScoreWeight(f.Severity)
		if f.Sandbox == "" {
			extraUnits++
			total += min(w, ScoreSandboxCap)
			continue
		}
		penalty[key{f.Context, f.Namespace, f.Sandbox}] += w
	}
	units := sandboxes + extraUnits
	if units <= 0 {
		return 100
	}
	for _, p := range penalty {
		total += min(p, ScoreSandboxCap)
	}
	score := math.Floor(100 * (1 - float64(total)/float64(ScoreSandboxCap*units)))
	return int(max(0, min(100, score)))
}

// CountBySeverity counts findings per severity.
func CountBySeverity(fs []Finding) (errors, warnings, infos int) {
	for _, f := range fs {
		switch f.Severity {
		case SeverityError:
			errors++
		case SeverityWarning:
			warnings++
		case SeverityInfo:
			infos++
		}
	}
	return errors, warnings, infos
}
