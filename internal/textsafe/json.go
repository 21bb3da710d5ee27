package textsafe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// WriteJSON writes v to w as one JSON document and a newline, indented by
// indent ("" for one line), with EscapeJSON applied: the one way sandscope
// writes JSON, since its JSON is read on terminals (`… -o json`, `curl
// /findings`) as often as by programs.
func WriteJSON(w io.Writer, v any, indent string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(EscapeJSON(buf.Bytes()))
	return err
}

// MarshalJSON is json.Marshal with EscapeJSON applied.
func MarshalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return EscapeJSON(b), nil
}

// EscapeJSON rewrites a JSON document so that every character a terminal
// would act on is a \u escape: encoding/json escapes only C0 (and U+2028,
// U+2029), and leaves DEL, the C1 controls (U+009B is an 8-bit CSI) and
// the bidi controls raw. The document means the same to any JSON reader.
// Outside strings JSON holds only printable ASCII and whitespace, so each
// such character found is inside a string, where an escape is valid. A
// byte that is not UTF-8 (encoding/json never writes one) becomes \ufffd.
// Clean input is returned as is.
func EscapeJSON(doc []byte) []byte {
	first := firstObeyed(doc)
	if first < 0 {
		return doc
	}
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:first]...)
	for i := first; i < len(doc); {
		c := doc[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				out = append(out, `\u007f`...)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case Obeyed(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, doc[i:i+size]...)
		}
		i += size
	}
	return out
}

// firstObeyed is the index of the first byte EscapeJSON changes, or -1.
func firstObeyed(doc []byte) int {
	for i := 0; i < len(doc); {
		c := doc[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(doc[i:])
		if (r == utf8.RuneError && size == 1) || Obeyed(r) {
			return i
		}
		i += size
	}
	return -1
}
