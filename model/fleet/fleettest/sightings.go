// Package fleettest holds what tests that watch a fleet until it shows
// every state they want have in common: a record of which sandbox first
// showed each slot identity and notice code, and what is still missing.
package fleettest

import (
	"sort"
	"testing"

	"github.com/sandscope/sandscope/model/fleet"
)

// Sightings maps what was seen (a slot identity, a notice code, or a
// caller's own name) to the first sandbox, or other evidence, showing it.
type Sightings map[string]string

// Note records every slot identity and notice code of snap's sandboxes not
// seen before: the sandbox's key, and for a notice its message.
func (s Sightings) Note(snap *fleet.Snapshot) {
	for _, sb := range snap.Sandboxes() {
		for _, sl := range sb.Slots {
			if _, ok := s[string(sl.Identity)]; !ok {
				s[string(sl.Identity)] = sb.Key
			}
		}
		for _, n := range sb.Notices {
			if _, ok := s[n.Code]; !ok {
				s[n.Code] = sb.Key + ": " + n.Message
			}
		}
	}
}

// Missing is what of want was never seen, sorted; nil when all was.
func (s Sightings) Missing(want []string) []string {
	var out []string
	for _, w := range want {
		if _, ok := s[w]; !ok {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

// Log logs where each of want was seen, in want's order.
func (s Sightings) Log(t testing.TB, want []string) {
	t.Helper()
	for _, w := range want {
		if v, ok := s[w]; ok {
			t.Logf("%-24s %s", w, v)
		}
	}
}
