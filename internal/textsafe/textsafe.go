// Package textsafe makes text that someone else wrote safe to put on the
// operator's terminal. Everything sandscope shows comes from the cluster, a
// registry or a sandbox: a termination message, an annotation, an Event, a
// log line. A control character in it is an instruction to the terminal
// (ESC ] 0 sets the window title, ESC ] 52 writes the clipboard, ESC [ 2 J
// blanks the screen, U+009B is a one-byte CSI), and a bidi control (U+202E
// RIGHT-TO-LEFT OVERRIDE) reorders what follows it, so a finding's text
// reads backwards or swaps columns; shown as is, the fleet steers the
// operator's terminal. The functions here turn every such
// character into a visible stand-in, so the text still reads and the
// terminal receives only characters that print.
//
// Sanitise before measuring or cutting: a replacement has a width (an
// escape has none), so width math done on the raw text is wrong.
package textsafe

import (
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Stand-ins. C0 controls become their Control Pictures (ESC shows as ␛,
// BEL as ␇), DEL as ␡; C1 controls, bidi controls and bytes that are not
// UTF-8 (a lone 0x9B is a CSI to an 8-bit terminal) become U+FFFD.
const (
	del         = '\u2421'
	replacement = utf8.RuneError
)

// Line returns s fit for a one-line surface (a table cell, the header, the
// footer, an error message): every control character, newline and tab
// included, is replaced. A tab becomes a space: it prints, but its width
// depends on the column it lands in, which would break the table's layout.
func Line(s string) string {
	if clean(s, false) {
		return s
	}
	return sanitise(s, false)
}

// Text returns s fit for a multi-line view (YAML, logs, events, command
// output, the detail view): as Line, but newlines and tabs stay; a carriage
// return that ends a line (CRLF) is dropped, any other is replaced (a bare
// CR would send the cursor back over what the line already said).
func Text(s string) string {
	if clean(s, true) {
		return s
	}
	return sanitise(s, true)
}

// clean reports whether s needs no change: the fast path, no allocation,
// for the text that is almost always plain.
func clean(s string, multi bool) bool {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b < 0x20 || b == 0x7f {
				if !multi || (b != '\n' && b != '\t') {
					return false
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || Obeyed(r) {
			return false
		}
		i += size
	}
	return true
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi reports the bidirectional formatting characters (Unicode's
// Bidi_Control: the embeddings and overrides U+202A–U+202E, the isolates
// U+2066–U+2069, the marks U+200E, U+200F and U+061C). A terminal that
// implements bidi reorders the text around them; none prints anything.
func isBidi(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }

// Obeyed reports whether r, outside ASCII, is a character a terminal acts
// on instead of printing: a C1 control or a bidi control. (ASCII's are
// C0 and DEL.) Encoders that must keep such text (JSON, YAML) escape these.
func Obeyed(r rune) bool { return isC1(r) || isBidi(r) }

func sanitise(s string, multi bool) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 0x20 && c < 0x7f:
				b.WriteByte(c)
			case multi && (c == '\n' || c == '\t'):
				b.WriteByte(c)
			case multi && c == '\r' && i < len(s) && s[i] == '\n':
				// CRLF: the newline alone ends the line.
			case c == '\t':
				b.WriteByte(' ')
			case c == 0x7f:
				b.WriteRune(del)
			default:
				b.WriteRune(0x2400 + rune(c))
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError || Obeyed(r) {
			b.WriteRune(replacement)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Writer passes text through Text on its way to w: for a CLI's text
// output, where everything written is meant to be read, never obeyed. It
// keeps a UTF-8 sequence cut between two writes whole. It is safe for
// concurrent use: a command's goroutines, and a crash report, share one.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte // an incomplete UTF-8 sequence from the last write
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sanitises p and writes it; it reports len(p) when all of it went.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf := p
	if len(w.tail) > 0 {
		buf = append(w.tail, p...)
		w.tail = nil
	}
	// Hold back a sequence that may complete with the next write.
	cut := len(buf)
	for k := 1; k < utf8.UTFMax && k <= len(buf); k++ {
		c := buf[len(buf)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(buf[len(buf)-k:]) {
				cut = len(buf) - k
			}
			break
		}
	}
	if cut == len(buf) && cut > 0 && buf[cut-1] == '\r' {
		cut-- // the first half of a CRLF
	}
	w.tail = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(w.w, Text(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a last, incomplete sequence held back (as U+FFFD).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.tail) == 0 {
		return nil
	}
	s := Text(string(w.tail))
	w.tail = nil
	_, err := io.WriteString(w.w, s)
	return err
}

// OrDash is s, or "-" for an empty value: how a table cell or a message
// shows a field that is not set.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
