package model

import (
	"encoding/binary"
	"encoding/json"
	"iter"
	"slices"
	"strings"

	"github.com/sandscope/sandscope/internal/mem"
)

// Labels is an object's labels: its label keys, sorted, and their values.
// The keys and the short values are one interned string, shared by every
// object with the same keys and short values (a fleet's tenants, apps,
// tiers, versions and template hashes make a handful of such sets), and the
// long values (UUIDs and other IDs, unique to an object) a list beside it,
// each once however many labels repeat it. So an object pays a string
// header per distinct long value, and one for the set, where a map would
// cost hundreds of bytes (docs/design.md, "Compact model records"). Lookups
// scan the set, a few hundred bytes at most.
//
// Labels implements k8s.io/apimachinery/pkg/labels.Labels, so a selector
// matches it directly. The zero value is empty. A Labels is read only: it
// may share its array with the informer cache and with Snapshots.
type Labels struct {
	// kv[0] is the set, interned: the number of labels (uvarint), then
	// each key in order as its length (uvarint) and its bytes, each
	// followed by its value's reference r (uvarint): an odd r is a value
	// of (r-1)/2 bytes that follow, an even r the value kv[r/2]. nil when
	// there are no labels.
	kv []string
}

// A Labels is built from its keys, added in order, each once, encoded into
// a set by appendLabel in the caller's scratch array, and its long values
// in kv[1:]; newLabels interns the set and copies kv at its size. The set and the values are two
// variables, not one builder struct: escape analysis does not tell a
// struct's fields apart, and the values escape into the Labels, which took
// the scratch array to the heap with them at every call.

// appendLabel adds key and its value v. A value up to
// maxInternedLabelValue long goes into the set (v may then alias a buffer
// of the caller's: its bytes are copied); a longer one is kept in kv once,
// as the string v, which the caller has chosen to share.
func appendLabel(set []byte, kv []string, key, v string) ([]byte, []string) {
	set = binary.AppendUvarint(set, uint64(len(key)))
	set = append(set, key...)
	if len(v) <= maxInternedLabelValue {
		set = binary.AppendUvarint(set, uint64(2*len(v)+1))
		return append(set, v...), kv
	}
	i := slices.Index(kv[1:], v) + 1
	if i == 0 {
		i, kv = len(kv), append(kv, v)
	}
	return binary.AppendUvarint(set, uint64(2*i)), kv
}

// newLabels makes the Labels of a set and its long values (kv[0] unused),
// both the caller's scratch: kv is copied at its final size.
func newLabels(set []byte, kv []string) Labels {
	out := make([]string, len(kv))
	out[0] = mem.InternBytes(set)
	copy(out[1:], kv[1:])
	return Labels{kv: out}
}

// uvarint reads the uvarint at the start of s.
func uvarint(s string) (n uint64, rest string) {
	i := 0
	for shift := 0; ; shift += 7 {
		c := s[i]
		i++
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return n, s[i:]
}

// cutLabel splits the first label off the rest of a set.
func (l Labels) cutLabel(set string) (key, value, rest string) {
	n, set := uvarint(set)
	key, set = set[:n], set[n:]
	r, set := uvarint(set)
	if r%2 == 0 {
		return key, l.kv[r/2], set
	}
	n = (r - 1) / 2
	return key, set[:n], set[n:]
}

// labels is the labels of the set, past its count.
func (l Labels) labels() (n int, set string) {
	if len(l.kv) == 0 {
		return 0, ""
	}
	c, set := uvarint(l.kv[0])
	return int(c), set
}

// maxInternedLabelValue: label values up to this long are kept in the
// interned set. Short values are mostly the fleet's few tenants, apps,
// tiers, versions and template hashes, each repeated on thousands of
// objects; the long ones (UUIDs and other IDs) are unique, and a set for
// each object would cost more than the copy it saves.
const maxInternedLabelValue = 24

// LabelsFrom converts a label map. The keys and short values are interned
// as one set (it repeats across the fleet). A longer value equal to one of
// same, or to another value of m, shares that string: engines repeat an
// object's ID in several labels and in its owner's name, and each is
// decoded into its own copy.
func LabelsFrom(m map[string]string, same ...string) Labels {
	if len(m) == 0 {
		return Labels{}
	}
	// Scratch on the stack for the usual handful of labels.
	var keptBuf, keysBuf [16]string
	kept := keptBuf[:0]
	for _, s := range same {
		if s != "" {
			kept = append(kept, s)
		}
	}
	keys := keysBuf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var scratch [256]byte
	var kvBuf [8]string
	set, kv := binary.AppendUvarint(scratch[:0], uint64(len(keys))), kvBuf[:1]
	for _, k := range keys {
		v := m[k]
		if len(v) > maxInternedLabelValue {
			if i := slices.Index(kept, v); i >= 0 {
				v = kept[i]
			} else {
				kept = append(kept, v)
			}
		}
		set, kv = appendLabel(set, kv, k, v)
	}
	return newLabels(set, kv)
}

// Len is the number of labels.
func (l Labels) Len() int {
	n, _ := l.labels()
	return n
}

// Lookup returns the value of key and whether it is set.
func (l Labels) Lookup(key string) (string, bool) {
	n, set := l.labels()
	for range n {
		var k, v string
		k, v, set = l.cutLabel(set)
		switch {
		case k == key:
			return v, true
		case k > key:
			return "", false // keys are sorted
		}
	}
	return "", false
}

// Has reports whether key is set (labels.Labels).
func (l Labels) Has(key string) bool {
	_, ok := l.Lookup(key)
	return ok
}

// Get returns the value of key, "" when unset (labels.Labels).
func (l Labels) Get(key string) string {
	v, _ := l.Lookup(key)
	return v
}

// All yields the labels in key order.
func (l Labels) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		n, set := l.labels()
		for range n {
			var k, v string
			k, v, set = l.cutLabel(set)
			if !yield(k, v) {
				return
			}
		}
	}
}

// Map returns the labels as a new map (nil when there are none).
func (l Labels) Map() map[string]string {
	if len(l.kv) == 0 {
		return nil
	}
	m := make(map[string]string, l.Len())
	for k, v := range l.All() {
		m[k] = v
	}
	return m
}

// String is "k1=v1,k2=v2" in key order, as kubectl prints labels.
func (l Labels) String() string {
	var b strings.Builder
	for k, v := range l.All() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// MarshalJSON writes the labels as a JSON object, as the API does.
func (l Labels) MarshalJSON() ([]byte, error) { return json.Marshal(l.Map()) }

// UnmarshalJSON reads a JSON object of labels.
func (l *Labels) UnmarshalJSON(data []byte) error {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*l = LabelsFrom(m)
	return nil
}

// IsZero lets `omitzero` leave empty labels out of JSON.
func (l Labels) IsZero() bool { return len(l.kv) == 0 }
