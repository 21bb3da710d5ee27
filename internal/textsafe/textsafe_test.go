package textsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Hostile is what a fleet that wants to hurt the operator writes where
// sandscope reads: OSC 0 (window title), OSC 52 (clipboard), CSI 2J (clear
// screen), cursor moves, and a C1 CSI, both as UTF-8 and as a raw byte.
const Hostile = "pwned\x1b]0;evil title\x07 clip\x1b]52;c;ZWNobyBoaQ==\x07 wipe\x1b[2J\x1b[7;13H\x1b[99D c1\u009b31m raw\x9bK end\r\nnext"

// controls reports the first byte or rune of s a terminal would obey: a
// control character (C0, DEL, C1), a bidi control (by Unicode's own
// Bidi_Control property, not sandscope's list), or a byte that is not UTF-8.
func controls(s string, multi bool) (string, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return s[i : i+1], true
			}
		}
		if multi && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return string(r), true
		}
	}
	return "", false
}

func TestLineAndText(t *testing.T) {
	t.Parallel()
	line := Line(Hostile)
	if c, bad := controls(line, false); bad {
		t.Fatalf("Line kept %q: %q", c, line)
	}
	for _, want := range []string{"pwned␛]0;evil title␇", "␛]52;c;ZWNobyBoaQ==", "␛[2J␛[7;13H␛[99D", "c1\ufffd31m", "raw\ufffdK", "end␍␊next"} {
		if !strings.Contains(line, want) {
			t.Errorf("Line(%q) = %q, lacks %q", Hostile, line, want)
		}
	}
	text := Text(Hostile + "\n\tindented")
	if c, bad := controls(text, true); bad {
		t.Fatalf("Text kept %q: %q", c, text)
	}
	if !strings.Contains(text, "end\nnext\n\tindented") {
		t.Errorf("Text lost its lines or tab: %q", text)
	}
	if got := Line("a\tb"); got != "a b" {
		t.Errorf("Line tab: %q", got)
	}
	if got := Text("a\rb"); got != "a␍b" {
		t.Errorf("Text bare CR: %q", got)
	}
}

func TestCleanTextIsUntouched(t *testing.T) {
	for _, s := range []string{"", "sbx-a 10.244.1.17", "日本語 ✓ ␛", "line\nline\ttab"} {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q", s, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Line("team-rl/sbx-a IP_TAKEN→sbx-b-0") }); n != 0 {
		t.Errorf("clean Line allocates %v times", n)
	}
}

func TestWriterKeepsSplitRunesWhole(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewWriter(&out)
	in := []byte("ok ✓ \u009b2J\r\nnext")
	for i := range in { // one byte at a time: every sequence split
		if _, err := w.Write(in[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "ok ✓ \ufffd2J\nnext"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// FuzzSanitise: whatever the input, nothing a terminal obeys comes out,
// and clean text passes unchanged.
func FuzzSanitise(f *testing.F) {
	for _, s := range []string{Hostile, "", "plain", "\x9b", "\xc2\x9b", "a\r\nb", "\xe2\x82", "a\u202eb\u2067c", "\xe2\x80\xae"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, x := Line(s), Text(s)
		if c, bad := controls(l, false); bad {
			t.Fatalf("Line(%q) kept %q", s, c)
		}
		if c, bad := controls(x, true); bad {
			t.Fatalf("Text(%q) kept %q", s, c)
		}
		if Line(l) != l || Text(x) != x {
			t.Fatalf("not idempotent on %q", s)
		}
		if _, bad := controls(s, true); !bad && !strings.Contains(s, "\r") && x != s {
			t.Fatalf("clean %q changed to %q", s, x)
		}
	})
}
