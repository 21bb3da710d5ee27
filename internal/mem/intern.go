// Package mem holds the containers that keep a large fleet small in memory:
// interned strings, shared string lists, copy-on-write lists that snapshots
// share, and a map of small sets. They know nothing of sandboxes; the model,
// its fleet and kube/'s decoders use them. Sizes and the reasons behind them
// are in docs/design.md ("Compact model records").
package mem

import (
	"unique"
	"unsafe"
)

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

// InternBytes interns the string b holds, without first copying it into a
// string of its own: unique.Make clones a string the first time it sees it
// and only compares it after, so b may be the caller's scratch (even on its
// stack) or a buffer it reuses. On the strings a fleet repeats it allocates
// nothing.
func InternBytes(b []byte) string {
	if len(b) == 0 {
		return "" // not Intern: it returns its argument here, which would take b to the heap
	}
	return unique.Make(unsafe.String(unsafe.SliceData(b), len(b))).Value()
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
