package model

import (
	"encoding/binary"
	"slices"
	"strings"
)

// LabelPair is one label as a decoder reads it off the wire, one map entry
// at a time.
type LabelPair struct{ Key, Value string }

// LabelsFromPairs is LabelsFrom for a decoder that reads labels as a list
// of entries (kube's protobuf Pod decoder): building a map only to hand it
// to LabelsFrom would be garbage on every Pod, and Labels' list is
// unexported. The result is the one LabelsFrom makes of the map the same
// entries would fill: a later pair replaces an earlier one of the same key,
// keys and short values are interned as one set; a longer value equal to one
// of same, or to another value kept, shares that string.
//
// The strings of pairs may alias a buffer the caller reuses: the Labels
// keeps only interned strings and copies, never pairs' own. The strings of
// same are kept as they are. pairs is the caller's scratch: it is sorted in
// place.
func LabelsFromPairs(pairs []LabelPair, same ...string) Labels {
	if len(pairs) == 0 {
		return Labels{}
	}
	// Stable, so that of the pairs of one key the last stays last.
	slices.SortStableFunc(pairs, func(a, b LabelPair) int { return strings.Compare(a.Key, b.Key) })
	n := 0 // distinct keys
	for i := range pairs {
		if replacedPair(pairs, i) {
			continue
		}
		n++
	}
	var keptBuf [8]string // scratch: an object has a handful of long values
	kept := keptBuf[:0]
	for _, s := range same {
		if s != "" {
			kept = append(kept, s)
		}
	}
	var scratch [256]byte
	var kvBuf [8]string
	set, kv := binary.AppendUvarint(scratch[:0], uint64(n)), kvBuf[:1]
	for i, p := range pairs {
		if replacedPair(pairs, i) {
			continue
		}
		v := p.Value // copied into the set when short
		if len(v) > maxInternedLabelValue {
			if j := slices.Index(kept, v); j >= 0 {
				v = kept[j]
			} else {
				v = strings.Clone(v) // p.Value may alias the caller's buffer
				kept = append(kept, v)
			}
		}
		set, kv = appendLabel(set, kv, p.Key, v)
	}
	return newLabels(set, kv)
}

// replacedPair: a later pair of sorted pairs has the key of pairs[i].
func replacedPair(pairs []LabelPair, i int) bool {
	return i+1 < len(pairs) && pairs[i+1].Key == pairs[i].Key
}
