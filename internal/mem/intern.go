// Package mem holds the containers that keep a large fleet small in memory:
// interned strings, shared string lists, copy-on-write lists that snapshots
// share, and a map of small sets. They know nothing of sandboxes; the model,
// its fleet and kube/'s decoders use them. Sizes and the reasons behind them
// are in docs/design.md ("Compact model records").
package mem

import "unique"

// Intern returns the canonical copy of s. Strings that repeat across
// thousands of objects (namespaces, label keys, images, node and container
// names, owner kinds) are kept once. unique.Make's table is weak, so a
// string no object uses any more is dropped from it; strings that rarely
// repeat (names, UIDs, long label values) are not interned, since their
// table entry would cost more than it saves.
func Intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// InternAll returns a copy of ss with every element interned (the input
// may be shared with its decoder's caller, so it is not modified).
func InternAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Intern(s)
	}
	return out
}
