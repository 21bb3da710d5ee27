// Package query is how an operator narrows and orders the sandboxes of a
// Snapshot: the filter typed after "/" (text, fuzzy, inverted, label
// selector, problems only), the text each row is matched against, and the
// sort orders of the list views.
package query

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sandscope/sandscope/model"
)

// Filter narrows a list of sandboxes the way an operator types it, as k9s
// does: text over each row's key (AppendRowKey, kept by the caller), matched
// case-insensitively as a substring or, when it holds regular-expression
// operators, as a regular expression; optionally inverted ("!text"), fuzzy
// only when asked ("-f text"), a label selector ("-l app=x"), and a
// problems-only switch.
//
// What a filter matches never depends on what the rows are: a filter that
// matched one sandbox by name matches nothing once that sandbox is gone,
// rather than turning into a looser match over whatever rows are left.
type Filter struct {
	Text         string          // substring or regular expression; "" matches everything
	Invert       bool            // keep the rows the pattern does NOT match
	Fuzzy        bool            // "-f text": fuzzy matching only, rows ranked by score
	Selector     labels.Selector // nil = no label constraint
	ProblemsOnly bool

	rx *regexp.Regexp // Text as a regular expression, when it is one (ParseFilter)
}

// ErrIncomplete is ParseFilter's error for a line that is on its way to an
// option ("-", "-f", "-l"): not a filter yet, so the one in force stays.
var ErrIncomplete = errors.New("incomplete filter option (-f TEXT: fuzzy, -l KEY=VALUE: labels)")

// regexOperators are the characters that make filter text a regular
// expression. A dot alone does not: "10.244.1.17" is an IP typed as it
// reads, and matched literally.
const regexOperators = `\+*?()|[]{}^$`

// IsRegex reports whether filter text is matched as a regular expression.
func IsRegex(text string) bool { return strings.ContainsAny(text, regexOperators) }

// ParseFilter reads what was typed after "/": "text", "!text", "-f text",
// "-l k=v", or "text -l k=v". A bad selector or regular expression is an
// error naming it; a line that only begins an option is ErrIncomplete.
func ParseFilter(s string) (Filter, error) {
	var f Filter
	s = strings.TrimSpace(s)
	if s == "-" || s == "-f" || strings.HasSuffix(s, " -") {
		return f, ErrIncomplete
	}
	if i := indexSelectorFlag(s); i >= 0 {
		sel := strings.TrimSpace(s[i+2:])
		if sel == "" {
			return f, fmt.Errorf("label selector: -l needs key=value")
		}
		parsed, err := labels.Parse(sel)
		if err != nil {
			return f, fmt.Errorf("label selector %q: %w", sel, err)
		}
		f.Selector = parsed
		s = strings.TrimSpace(s[:i])
	}
	if rest, ok := strings.CutPrefix(s, "-f "); ok {
		f.Fuzzy = true
		s = strings.TrimSpace(rest)
	}
	if strings.HasPrefix(s, "!") {
		f.Invert = true
		s = strings.TrimSpace(s[1:])
	}
	f.Text = s
	if !f.Fuzzy && IsRegex(s) {
		rx, err := regexp.Compile("(?i)" + s)
		if err != nil {
			return Filter{}, fmt.Errorf("filter %q is not a regular expression: %w", s, err)
		}
		f.rx = rx
	}
	return f, nil
}

// regex is the filter's text as a regular expression, or nil when it is
// matched as a substring (or fuzzily). A Filter built by hand rather than
// parsed compiles here; text that does not compile is matched literally.
func (f Filter) regex() *regexp.Regexp {
	if f.rx != nil || f.Fuzzy || !IsRegex(f.Text) {
		return f.rx
	}
	rx, err := regexp.Compile("(?i)" + f.Text)
	if err != nil {
		return nil
	}
	return rx
}

// indexSelectorFlag finds "-l" as a word ("-l x" at the start or " -l x").
func indexSelectorFlag(s string) int {
	if strings.HasPrefix(s, "-l ") || s == "-l" {
		return 0
	}
	if i := strings.Index(s, " -l "); i >= 0 {
		return i + 1
	}
	if strings.HasSuffix(s, " -l") {
		return len(s) - 2
	}
	return -1
}

// IsZero reports whether the filter lets everything through.
func (f Filter) IsZero() bool {
	return f.Text == "" && !f.Invert && f.Selector == nil && !f.ProblemsOnly
}

// String renders the filter back in the form ParseFilter reads.
func (f Filter) String() string {
	var parts []string
	if f.Fuzzy {
		parts = append(parts, "-f")
	}
	if f.Invert {
		parts = append(parts, "!"+f.Text)
	} else if f.Text != "" {
		parts = append(parts, f.Text)
	}
	if f.Selector != nil && !f.Selector.Empty() {
		parts = append(parts, "-l "+f.Selector.String())
	}
	return strings.Join(parts, " ")
}

// AppendRowKey appends the text the filter matches for one sandbox,
// lower-cased, to dst: what an operator would type to find it (names, claim,
// pod, IP, node, states, codes). Appending lets a caller pack many keys into one
// block instead of allocating a string per row.
func AppendRowKey(dst []byte, s *model.Sandbox) []byte {
	start := len(dst)
	dst = append(dst, s.Namespace()...)
	dst = append(dst, '/')
	dst = append(dst, s.Name()...)
	dst = append(dst, ' ')
	dst = append(dst, s.Engine()...)
	dst = append(dst, ' ')
	dst = append(dst, s.State.String()...)
	dst = append(dst, ' ')
	dst = append(dst, s.Identity()...)
	// The claim is the name a user of agent-sandbox holds and reports.
	if c := s.Claim(); c != "" {
		dst = append(dst, ' ')
		dst = append(dst, c...)
	}
	for i := range s.Slots {
		sl := &s.Slots[i]
		if sl.PodName != "" {
			dst = append(dst, ' ')
			dst = append(dst, sl.PodName...)
		}
		if sl.RecordedIP != "" {
			dst = append(dst, ' ')
			dst = append(dst, sl.RecordedIP...)
		}
		if sl.Pod != nil && sl.Pod.Spec.NodeName != "" {
			dst = append(dst, ' ')
			dst = append(dst, sl.Pod.Spec.NodeName...)
		}
	}
	for _, n := range s.Notices {
		dst = append(dst, ' ')
		dst = append(dst, n.Code...)
	}
	return lowerFrom(dst, start)
}

// lowerFrom lower-cases dst[start:], in place when it is ASCII (names,
// IPs, states and codes always are).
func lowerFrom(dst []byte, start int) []byte {
	for i := start; i < len(dst); i++ {
		c := dst[i]
		if c >= utf8.RuneSelf {
			return append(dst[:start], bytes.ToLower(dst[start:])...)
		}
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + ('a' - 'A')
		}
	}
	return dst
}

// RowKey is AppendRowKey as a string.
func RowKey(s *model.Sandbox) string { return string(AppendRowKey(nil, s)) }

// KeyBytes is what a row key holds, kept beside the key for
// Filter.ApplyKeys: its bytes and its pairs of hex digits. A key that lacks
// a byte or a pair of a pattern cannot hold the pattern, and a pattern of
// one byte with a bit of its own is matched by that bit, without reading
// the key: a filter's first character matches the whole fleet.
type KeyBytes struct {
	// bytes has one bit for each lower-case letter, digit and the
	// punctuation keys hold, the other bytes sharing the bits left.
	bytes uint64
	// pairs has one bit for each four pairs of adjacent hex digits
	// ("3f", "80"): in a fleet named by UUIDs every key holds every hex
	// digit, so the bytes spare no key for a second character, and a
	// name's 30 or so pairs leave about three bits in five clear.
	pairs uint64
}

// byteBit is b's bit, and whether b has it to itself.
func byteBit(b byte) (uint64, bool) {
	switch {
	case 'a' <= b && b <= 'z':
		return 1 << (b - 'a'), true
	case '0' <= b && b <= '9':
		return 1 << (26 + b - '0'), true
	}
	if i := strings.IndexByte(ownBitPunct, b); i >= 0 {
		return 1 << (36 + i), true
	}
	return 1 << (36 + len(ownBitPunct) + int(b)%(64-36-len(ownBitPunct))), false
}

// ownBitPunct are the punctuation bytes with a bit of their own.
const ownBitPunct = "-./ :_"

// hexValue is b's value as a lower-case hex digit, or -1.
func hexValue(b byte) int {
	switch {
	case '0' <= b && b <= '9':
		return int(b - '0')
	case 'a' <= b && b <= 'f':
		return int(b-'a') + 10
	}
	return -1
}

// pairBit is the bit of the pair of bytes a, b, 0 when either is not a hex
// digit: the first digit's two low bits and the second digit.
func pairBit(a, b byte) uint64 {
	x, y := hexValue(a), hexValue(b)
	if x < 0 || y < 0 {
		return 0
	}
	return 1 << ((x&3)<<4 | y)
}

// BytesOf is key's KeyBytes.
func BytesOf[K ~string | ~[]byte](key K) KeyBytes {
	var set KeyBytes
	for i := 0; i < len(key); i++ {
		bit, _ := byteBit(key[i])
		set.bytes |= bit
		if i > 0 {
			set.pairs |= pairBit(key[i-1], key[i])
		}
	}
	return set
}

// holds reports whether a key of set k may hold a pattern of set need.
func (k KeyBytes) holds(need KeyBytes) bool {
	return k.bytes&need.bytes == need.bytes && k.pairs&need.pairs == need.pairs
}

// keySource exposes a subset of cached keys to sahilm/fuzzy without copying strings.
type keySource struct {
	keys  []string
	bytes []KeyBytes // bytes[i] of keys[i] (BytesOf); nil = not kept
	idx   []int      // positions into keys; nil = all
}

func (k keySource) pos(i int) int {
	if k.idx == nil {
		return i
	}
	return k.idx[i]
}

func (k keySource) String(i int) string {
	if k.idx == nil {
		return k.keys[i]
	}
	return k.keys[k.idx[i]]
}

func (k keySource) Len() int {
	if k.idx == nil {
		return len(k.keys)
	}
	return len(k.idx)
}

// Apply returns the positions of the rows that pass the filter, in the order
// of within (every row, in order, when within is nil). keys[i] is the row
// key of rows[i] (AppendRowKey). Callers keep the keys: composing them reads
// each sandbox, its slots and its Pod, which at 50,000 rows is cache misses
// enough to miss a frame.
//
// Text matches as a case-insensitive substring or regular expression; with
// Fuzzy, as a sahilm/fuzzy subsequence, best matches first.
func (f Filter) Apply(rows []*model.Sandbox, keys []string, within []int) []int {
	return f.ApplyKeys(rows, keys, nil, within)
}

// ApplyKeys is Apply with each key's bytes (BytesOf) kept beside it, which
// spares reading the keys that lack a byte of the text, and all of them for
// text of one byte; bytes may be nil.
func (f Filter) ApplyKeys(rows []*model.Sandbox, keys []string, bytes []KeyBytes, within []int) []int {
	cand := within
	if cand == nil {
		cand = make([]int, len(rows))
		for i := range cand {
			cand[i] = i
		}
	}
	var matched []bool
	var rank []int // fuzzy matches: each candidate's place by score (best first)
	if f.Text != "" {
		matched, rank = f.matchText(keySource{keys: keys, bytes: bytes, idx: cand})
	}
	out := make([]int, 0, len(cand))
	// An empty pattern ("!" alone) constrains nothing, inverted or not.
	for j, i := range cand {
		if matched != nil && matched[j] == f.Invert {
			continue
		}
		s := rows[i]
		if f.Selector != nil && !f.Selector.Matches(s.Labels()) {
			continue
		}
		if f.ProblemsOnly && !IsProblem(s) {
			continue
		}
		out = append(out, i)
	}
	if rank != nil && !f.Invert {
		// Fuzzy matches read best first: a weak match of unrelated text
		// goes to the bottom instead of sitting in sort order among good ones.
		place := make(map[int]int, len(out))
		for j, i := range cand {
			if matched[j] {
				place[i] = rank[j]
			}
		}
		slices.SortStableFunc(out, func(a, b int) int { return place[a] - place[b] })
	}
	return out
}

// regexMatches reports whether rx matches key, or, when rx is anchored,
// one of the key's fields (split at spaces and slashes): "^agent" reads as
// "a name that starts with agent", as it does in k9s, not "a namespace
// that does".
func regexMatches(rx *regexp.Regexp, key string, anchored bool) bool {
	if rx.MatchString(key) {
		return true
	}
	if !anchored {
		return false
	}
	start := 0
	for i := 0; i <= len(key); i++ {
		if i == len(key) || key[i] == ' ' || key[i] == '/' {
			if i > start && rx.MatchString(key[start:i]) {
				return true
			}
			start = i + 1
		}
	}
	return false
}

// MatchText reports, for each key (lower-cased, as AppendRowKey writes
// them), whether the filter's text matches it; nil when the filter has no
// text. The other lists match their rows' keys with it, so that every
// table reads a filter the same way.
func (f Filter) MatchText(keys []string) []bool {
	if f.Text == "" {
		return nil
	}
	matched, _ := f.matchText(keySource{keys: keys})
	return matched
}

// matchText matches the text against every key of src; rank is each fuzzy
// match's place by score (nil unless Fuzzy).
func (f Filter) matchText(src keySource) (matched []bool, rank []int) {
	matched = make([]bool, src.Len())
	if f.Fuzzy {
		rank = make([]int, src.Len())
		for place, m := range fuzzy.FindFrom(f.Text, src) {
			matched[m.Index], rank[m.Index] = true, place
		}
		return matched, rank
	}
	if rx := f.regex(); rx != nil {
		anchored := strings.ContainsAny(f.Text, "^$")
		for j := range matched {
			matched[j] = regexMatches(rx, src.String(j), anchored)
		}
		return matched, nil
	}
	pat := strings.ToLower(f.Text)
	if src.bytes == nil {
		for j := range matched {
			matched[j] = strings.Contains(src.String(j), pat)
		}
		return matched, nil
	}
	need := BytesOf(pat)
	_, exact := byteBit(pat[0])
	exact = exact && len(pat) == 1
	for j := range matched {
		switch {
		case !src.bytes[src.pos(j)].holds(need):
		case exact:
			matched[j] = true
		default:
			matched[j] = strings.Contains(src.String(j), pat)
		}
	}
	return matched, nil
}

// Narrows reports whether next can be applied to prev's result instead of
// the whole fleet: next only adds characters to a non-inverted pattern and
// nothing else changed (substring and subsequence matches only shrink as the
// pattern grows; a regular expression may widen, "a" to "a|b").
func Narrows(prev, next Filter) bool {
	if prev.Invert || next.Invert || prev.ProblemsOnly != next.ProblemsOnly || prev.Fuzzy != next.Fuzzy {
		return false
	}
	if !next.Fuzzy && (IsRegex(prev.Text) || IsRegex(next.Text)) {
		return false
	}
	if selString(prev.Selector) != selString(next.Selector) {
		return false
	}
	return strings.HasPrefix(next.Text, prev.Text)
}

// Same reports whether a and b are the same filter: they keep the same
// rows in the same order.
func Same(a, b Filter) bool {
	return a.Text == b.Text && a.Invert == b.Invert && a.Fuzzy == b.Fuzzy && a.ProblemsOnly == b.ProblemsOnly &&
		selString(a.Selector) == selString(b.Selector)
}

func selString(s labels.Selector) string {
	if s == nil {
		return ""
	}
	return s.String()
}

// IsProblem is the "problems only" predicate: the sandbox's identity is not
// safe, its state is terminal or unknown-bad, or it carries a warning/error notice.
func IsProblem(s *model.Sandbox) bool {
	switch s.Identity() {
	case model.IdentityIPTaken, model.IdentityPodDead, model.IdentityPodGone, model.IdentityUIDChanged, model.IdentityIPStale:
		return true
	}
	switch s.State {
	case model.StateDead, model.StateGone, model.StateFailed:
		return true
	}
	for i := range s.Slots {
		if s.Slots[i].Stuck != nil {
			return true
		}
	}
	for _, n := range s.Notices {
		if n.Severity.Rank() >= model.SeverityWarning.Rank() {
			return true
		}
	}
	return false
}
