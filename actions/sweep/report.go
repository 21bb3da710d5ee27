package sweep

// The report's verdicts, which cli/ turns into exit codes; output/ prints
// the report (output/sweep.go).

// Unreachable is true when contexts were to be swept and none could be.
func (r *Report) Unreachable() bool {
	for _, c := range r.Contexts {
		if c.Reachable {
			return false
		}
	}
	return len(r.Contexts) > 0
}

// Partial is true when a context swept was read partially.
func (r *Report) Partial() bool {
	for _, c := range r.Contexts {
		if c.Partial {
			return true
		}
	}
	return false
}

// Fails is true when a finding fails the sweep under failOn: one at or
// above its severity, or a partial context when it says partial.
func (r *Report) Fails(failOn FailOn) bool {
	for _, f := range r.Findings {
		if failOn.Fails(f) {
			return true
		}
	}
	return false
}

// SandboxID names one swept sandbox, for JUnit's passing cases.
type SandboxID struct {
	Context, Namespace, Name string
}
