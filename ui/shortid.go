package ui

import (
	"strings"

	"github.com/sandscope/sandscope/model"
)

// shortIDLen is how much of a UUID a narrow table shows: sandbox ids are
// UUIDs (OpenSandbox names a sandbox by its id), and eight hex digits tell
// apart the sandboxes of any fleet a screen can hold, as a short git hash
// does; the detail view shows the whole id.
const shortIDLen = 8

// shortIDs returns s with every canonical UUID in it cut to its first
// shortIDLen characters ("16952042-4659-...-ff3444-0" → "16952042-0").
func shortIDs(s string) string {
	if len(s) < 36 {
		return s
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); {
		if i+36 <= len(s) && model.IsUUID(s[i:i+36]) && (i == 0 || !isHex(s[i-1])) && (i+36 == len(s) || !isHex(s[i+36])) {
			if !changed {
				b.Grow(len(s))
				b.WriteString(s[:i])
				changed = true
			}
			b.WriteString(s[i : i+shortIDLen])
			i += 36
			continue
		}
		if changed {
			b.WriteByte(s[i])
		}
		i++
	}
	if !changed {
		return s
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
