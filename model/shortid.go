package model

import "strings"

// MinIDPrefix is the shortest start of a sandbox id accepted for the whole
// id, as git accepts a short hash.
const MinIDPrefix = 4

// IsIDPrefix reports whether ref is the start of name, a sandbox id that
// begins with a UUID (OpenSandbox names a sandbox by its id), as the TUI
// shows it on a narrow terminal ("16952042" for
// "16952042-4659-4a6b-9d3e-0c5aff3444d1"): at least MinIDPrefix
// characters and shorter than name. A caller accepts it only when one
// sandbox matches.
func IsIDPrefix(name, ref string) bool {
	return len(ref) >= MinIDPrefix && len(ref) < len(name) && len(name) >= 36 && IsUUID(name[:36]) &&
		(len(name) == 36 || !isHex(name[36])) && strings.HasPrefix(name, ref)
}

// IsUUID reports whether s is 8-4-4-4-12 hex digits: the shape of an
// OpenSandbox sandbox id.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
