package textsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileJSON holds what encoding/json leaves raw: DEL, C1 controls (an
// 8-bit CSI and OSC), NEL, and the bidi overrides, isolates and marks.
const hostileJSON = "del\x7f csi\u009b2J osc\u009d0;t\u009c nel\u0085 rlo\u202egnp.exe lri\u2066x\u2069 lrm\u200e alm\u061c ok ✓"

// The JSON sandscope writes holds nothing a terminal obeys, and still
// decodes to exactly the value it was given.
func TestWriteJSONEscapesWhatTerminalsObey(t *testing.T) {
	t.Parallel()
	v := map[string]any{"reason": hostileJSON, "list": []string{hostileJSON, "plain"}}
	for _, indent := range []string{"", "  "} {
		var out bytes.Buffer
		if err := WriteJSON(&out, v, indent); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if c, bad := controls(s, true); bad {
			t.Fatalf("WriteJSON kept %q: %q", c, s)
		}
		for _, want := range []string{`del\u007f`, `csi\u009b2J`, `nel\u0085`, `rlo\u202egnp`, `lri\u2066x\u2069`, `lrm\u200e`, `alm\u061c`, "ok ✓"} {
			if !strings.Contains(s, want) {
				t.Errorf("output lacks %s: %s", want, s)
			}
		}
		var back map[string]any
		if err := json.Unmarshal(out.Bytes(), &back); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, s)
		}
		if back["reason"] != hostileJSON {
			t.Errorf("round trip: %q, want %q", back["reason"], hostileJSON)
		}
	}
	if b, err := MarshalJSON(hostileJSON); err != nil || !utf8.Valid(b) || bytes.ContainsRune(b, 0x202e) {
		t.Errorf("MarshalJSON: %q, %v", b, err)
	}
}

func TestEscapeJSONLeavesCleanAlone(t *testing.T) {
	doc := []byte(`{"a":"日本語 ✓ \u001b","b":[1,2]}`)
	if got := EscapeJSON(doc); &got[0] != &doc[0] {
		t.Errorf("clean document copied: %s", got)
	}
	if got := string(EscapeJSON([]byte("\"a\xffb\""))); got != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8: %s", got)
	}
}

// Bidi controls read as stand-ins on a terminal surface, like C0 and C1.
func TestBidiControlsAreShown(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c} {
		s := "finding " + string(r) + "gnp.exe"
		for name, got := range map[string]string{"Line": Line(s), "Text": Text(s)} {
			if strings.ContainsRune(got, r) || got != "finding \ufffdgnp.exe" {
				t.Errorf("%s(%q) = %q", name, s, got)
			}
		}
	}
}

// FuzzEscapeJSON: whatever a string holds, its JSON from WriteJSON holds
// nothing a terminal obeys and decodes back to the string (made valid
// UTF-8 the way encoding/json does).
func FuzzEscapeJSON(f *testing.F) {
	for _, s := range []string{hostileJSON, Hostile, "", "\xff\x7f", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var out bytes.Buffer
		if err := WriteJSON(&out, s, ""); err != nil {
			t.Fatal(err)
		}
		if c, bad := controls(out.String(), true); bad {
			t.Fatalf("WriteJSON(%q) kept %q: %q", s, c, out.String())
		}
		var back string
		if err := json.Unmarshal(out.Bytes(), &back); err != nil {
			t.Fatalf("WriteJSON(%q) is not JSON: %v: %q", s, err, out.String())
		}
		if want := string([]rune(s)); back != want { // each byte that is not UTF-8 one U+FFFD, as encoding/json does
			t.Fatalf("round trip of %q: %q", s, back)
		}
	})
}
