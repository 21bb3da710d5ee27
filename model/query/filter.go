// Package query is how an operator narrows and orders the sandboxes of a
// Snapshot: the filter typed after "/" (text, fuzzy, inverted, label
// selector, problems only), the text each row is matched against, and the
// sort orders of the list views.
package query

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sandscope/sandscope/model"
)

// Filter narrows a list of sandboxes the way an operator types it: fuzzy text
// over each row's key (AppendRowKey, kept by the caller), optionally inverted ("!text"), a label selector
// ("-l app=x"), and a problems-only switch.
type Filter struct {
	Text         string          // substring, else fuzzy, pattern; "" matches everything
	Invert       bool            // keep the rows the pattern does NOT match
	Fuzzy        bool            // "-f text": fuzzy matching only, rows ranked by score
	Selector     labels.Selector // nil = no label constraint
	ProblemsOnly bool
}

// ParseFilter reads what was typed after "/": "text", "!text", "-l k=v",
// or "text -l k=v". A bad selector is an error naming it.
func ParseFilter(s string) (Filter, error) {
	var f Filter
	s = strings.TrimSpace(s)
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
	return f, nil
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
// lower-cased, to dst: what an operator would type to find it (names, pod,
// IP, node, states, codes). Appending lets a caller pack many keys into one
// block instead of allocating a string per row.
func AppendRowKey(dst []byte, s *model.Sandbox) []byte {
	start := len(dst)
	dst = append(dst, s.Namespace()...)
	dst = append(dst, '/')
	dst = append(dst, s.Name()...)
	dst = append(dst, ' ')
	dst = append(dst, s.Engine()...)
	dst = append(dst, ' ')
	dst = append(dst, s.State...)
	dst = append(dst, ' ')
	dst = append(dst, s.Identity()...)
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

// keySource exposes a subset of cached keys to sahilm/fuzzy without copying strings.
type keySource struct {
	keys []string
	idx  []int // positions into keys; nil = all
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
// Text matching is substring-first: when some candidate contains the pattern
// (case-insensitively), only those match, so typing part of a name narrows to
// that name; when none does, sahilm/fuzzy subsequence matching takes over
// (abbreviations, typos of order). exact reports which of the two applied.
func (f Filter) Apply(rows []*model.Sandbox, keys []string, within []int) (idx []int, exact bool) {
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
		matched = make([]bool, len(cand))
		pat := strings.ToLower(f.Text)
		if !f.Fuzzy {
			for j, i := range cand {
				if strings.Contains(keys[i], pat) {
					matched[j], exact = true, true
				}
			}
		}
		if f.Fuzzy || (!exact && FuzzyApplies(f.Text)) {
			rank = make([]int, len(cand))
			for place, m := range fuzzy.FindFrom(f.Text, keySource{keys: keys, idx: cand}) {
				matched[m.Index], rank[m.Index] = true, place
			}
		}
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
	return out, exact
}

// Narrows reports whether next can be applied to prev's result instead of
// the whole fleet: next only adds characters to a non-inverted pattern and
// nothing else changed (substring and subsequence matches only shrink as the
// pattern grows). One exception the caller handles: when prev matched exact
// and next finds no exact match among prev's rows, next's fuzzy matches may
// lie outside them, so it must be applied to the whole fleet again.
func Narrows(prev, next Filter) bool {
	if prev.Invert || next.Invert || prev.ProblemsOnly != next.ProblemsOnly || prev.Fuzzy != next.Fuzzy {
		return false
	}
	if selString(prev.Selector) != selString(next.Selector) {
		return false
	}
	return strings.HasPrefix(next.Text, prev.Text)
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

// FuzzyApplies reports whether a filter text that matched nothing as a
// substring is tried as a fuzzy pattern: not for id-like text (hex digits
// and dashes, six or more), which names one sandbox or Pod and would
// otherwise match unrelated rows whose ids hold the same digits in order.
func FuzzyApplies(text string) bool {
	if len(text) < 6 {
		return true
	}
	for _, c := range text {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-') {
			return true
		}
	}
	return false
}
