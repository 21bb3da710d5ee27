// Package textsafetest holds the hostile fixture and the check that every
// surface's tests share: text a fleet writes to hurt the operator, and
// whether output written to a terminal still holds any of it as control.
package textsafetest

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Hostile holds OSC 0 (sets the window title), OSC 52 (writes the
// clipboard), CSI 2J (clears the screen), two cursor moves, and a C1 CSI
// both as UTF-8 and as a raw byte.
const Hostile = "\x1b]0;evil title\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J\x1b[7;13H\x1b[99D\u009b31m\x9bK"

// Shown is how Hostile reads once sanitised.
const Shown = "␛]0;evil title␇␛]52;c;ZWNobyBoaQ==␇␛[2J␛[7;13H␛[99D\ufffd31m\ufffdK"

// HostileUnicode is what passes encoders that escape only C0 (encoding/json)
// and what YAML's parser refuses: DEL, C1 controls written as UTF-8 (an
// 8-bit CSI and OSC, NEL), and the bidi controls that reorder a line
// (RIGHT-TO-LEFT OVERRIDE, an isolate, a mark).
const HostileUnicode = "del\x7f csi\u009b2J osc\u009d0;t\u009c nel\u0085 rlo\u202egnp.exe lri\u2066x\u2069 rlm\u200f"

// AssertInert fails t if out holds any control sequence of Hostile: no
// OSC, no BEL, no clear screen, none of its cursor moves, no C1 control and
// nothing that is not UTF-8, and none of HostileUnicode's DEL, C1 or bidi
// controls. (sandscope's own output may hold SGR and
// cursor moves to column 1; never these.)
func AssertInert(t testing.TB, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b]", "\x07", "\x1b[2J", "\x1b[7;13H", "\x1b[99D"} {
		if i := strings.Index(out, bad); i >= 0 {
			t.Errorf("output holds %q at %d: …%q…", bad, i, out[max(0, i-40):min(len(out), i+40)])
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("output is not UTF-8 (a raw 0x9B is a CSI to an 8-bit terminal): %q", out)
	}
	for i, r := range out {
		if r >= 0x80 && r <= 0x9f {
			t.Errorf("output holds C1 control %U at %d", r, i)
			break
		}
		if r == 0x7f || unicode.Is(unicode.Bidi_Control, r) {
			t.Errorf("output holds %U at %d: …%q…", r, i, out[max(0, i-40):min(len(out), i+40)])
			break
		}
	}
}
