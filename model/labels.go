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
// The keys are one interned string, shared by every object with the same
// label keys (a fleet has a handful of such key sets), and the values a
// list beside it, so an object pays little more than a string header a
// label where a map would cost hundreds of bytes (docs/design.md, "Compact
// model records"). Lookups scan the key set, a few hundred bytes at most.
//
// Labels implements k8s.io/apimachinery/pkg/labels.Labels, so a selector
// matches it directly. The zero value is empty. A Labels is read only: it
// may share its array with the informer cache and with Snapshots.
type Labels struct {
	// kv[0] is the key set: each key in order, as its length (uvarint)
	// then its bytes, interned. kv[1+i] is the value of the i-th key. nil
	// when there are no labels.
	kv []string
}

// A Labels is built from its keys, added in order, each once, encoded into
// a key set by appendKey in the caller's scratch array, and its values in
// kv[1:]; newLabels interns the key set. The key set and the values are two
// variables, not one builder struct: escape analysis does not tell a
// struct's fields apart, and the values escape into the Labels, which took
// the scratch array to the heap with them at every call.

func appendKey(set []byte, key string) []byte {
	set = binary.AppendUvarint(set, uint64(len(key)))
	return append(set, key...)
}

func newLabels(set []byte, kv []string) Labels {
	kv[0] = mem.InternBytes(set)
	return Labels{kv: kv}
}

// cutKey splits the first key off a key set.
func cutKey(set string) (key, rest string) {
	var n uint64
	i := 0
	for shift := 0; ; shift += 7 {
		c := set[i]
		i++
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return set[i : i+int(n)], set[i+int(n):]
}

// maxInternedLabelValue: label values up to this long are interned. Short
// values are mostly the fleet's few tenants, apps, tiers, versions and
// template hashes, each repeated on thousands of objects; the long ones
// (UUIDs and other IDs) are unique, and an interning table entry for each
// would cost more than the copy it saves.
const maxInternedLabelValue = 24

// LabelsFrom converts a label map. The key set is interned (it repeats across
// the fleet), and so are short values. A longer value equal to one of same,
// or to another value of m, shares that string: engines repeat an object's
// ID in several labels and in its owner's name, and each is decoded into its
// own copy.
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
	set, kv := scratch[:0], make([]string, 1, 1+len(keys))
	for _, k := range keys {
		v := m[k]
		if i := slices.Index(kept, v); i >= 0 {
			v = kept[i]
		} else if len(v) <= maxInternedLabelValue {
			v = mem.Intern(v)
		} else {
			kept = append(kept, v)
		}
		set, kv = appendKey(set, k), append(kv, v)
	}
	return newLabels(set, kv)
}

// Len is the number of labels.
func (l Labels) Len() int { return max(len(l.kv)-1, 0) }

// Lookup returns the value of key and whether it is set.
func (l Labels) Lookup(key string) (string, bool) {
	if len(l.kv) == 0 {
		return "", false
	}
	set := l.kv[0]
	for i := 1; i < len(l.kv); i++ {
		var k string
		k, set = cutKey(set)
		switch {
		case k == key:
			return l.kv[i], true
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
		if len(l.kv) == 0 {
			return
		}
		set := l.kv[0]
		for _, v := range l.kv[1:] {
			var k string
			k, set = cutKey(set)
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
