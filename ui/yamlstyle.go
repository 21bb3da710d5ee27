package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// yamlStyles tell a YAML document's keys, values and comments apart. Tabs
// stay as they are (lipgloss would widen them), so that under the Ascii
// profile, where no attribute survives, a styled line is the line itself.
type yamlStyles struct{ key, value, comment lipgloss.Style }

func newYAMLStyles(r *lipgloss.Renderer) yamlStyles {
	base := r.NewStyle().TabWidth(lipgloss.NoTabConversion)
	return yamlStyles{
		key:     base.Foreground(lipgloss.Color("12")),
		value:   base.Foreground(lipgloss.Color("10")),
		comment: base.Faint(true),
	}
}

// styleYAML styles lines of YAML that are already safe to show (the
// sanitiser ran first: styling adds the only escape codes). It reads the
// lines as the API server's YAML is written, not as a YAML parser would: a
// key is the text before the first ": " of a line (after any "- "); the
// lines of a block scalar (a value of | or >) are values, whatever they say.
func (st yamlStyles) styleYAML(lines []string) []string {
	out := make([]string, len(lines))
	block := -1 // indentation of the key that opened a block scalar, -1 = none
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		indent := len(l) - len(trimmed)
		if block >= 0 {
			if trimmed == "" || indent > block {
				out[i] = st.value.Render(l)
				continue
			}
			block = -1
		}
		switch {
		case trimmed == "":
			out[i] = l
		case strings.HasPrefix(trimmed, "#"):
			out[i] = st.comment.Render(l)
		case trimmed == "---" || trimmed == "...":
			out[i] = st.comment.Render(l)
		default:
			out[i] = st.styleLine(l, indent, &block)
		}
	}
	return out
}

// styleLine styles one "key: value", "- key: value" or "- value" line and
// notes (in block) a block scalar it opens.
func (st yamlStyles) styleLine(l string, indent int, block *int) string {
	head := indent
	for strings.HasPrefix(l[head:], "- ") {
		head += 2
	}
	if rest := l[head:]; rest == "-" {
		return l
	}
	rest := l[head:]
	k, v, isKey := splitKey(rest)
	if !isKey {
		return l[:head] + st.value.Render(rest)
	}
	if t := strings.TrimSpace(v); t != "" && (t[0] == '|' || t[0] == '>') {
		*block = head // its lines are indented past the key's column
	}
	out := l[:head] + st.key.Render(k) + ":"
	if v != "" {
		lead := len(v) - len(strings.TrimLeft(v, " "))
		out += v[:lead] + st.value.Render(v[lead:])
	}
	return out
}

// splitKey splits "key: value" (or "key:") at its first ": ". A line that
// starts with a quote or a flow collection is a value.
func splitKey(s string) (key, value string, ok bool) {
	if s == "" || strings.ContainsRune("\"'{[", rune(s[0])) {
		return "", "", false
	}
	if strings.HasSuffix(s, ":") && !strings.Contains(s[:len(s)-1], ": ") {
		return s[:len(s)-1], "", true
	}
	i := strings.Index(s, ": ")
	if i <= 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}
