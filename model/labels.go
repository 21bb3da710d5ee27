package model

import (
	"encoding/json"
	"iter"
	"slices"
	"sort"
	"strings"
	"unique"
)

// Labels is an object's labels kept as one sorted list of key, value pairs.
// A Go map of five labels costs about 340 bytes before its strings; this
// list costs 24 bytes a label (the key is an interning handle, one pointer
// to the copy every object shares), and with tens of thousands of Pods and
// sandboxes that difference is a large part of the fleet's memory. Lookups
// are a binary search over a handful of keys.
//
// Labels implements k8s.io/apimachinery/pkg/labels.Labels, so a selector
// matches it directly. The zero value is empty. A Labels is read only: it
// may share its array with the informer cache and with Snapshots.
type Labels struct {
	pairs []labelPair // sorted by key, keys unique
}

type labelPair struct {
	key   unique.Handle[string]
	value string
}

// maxInternedLabelValue: label values up to this long are interned. Short
// values are mostly the fleet's few tenants, apps, tiers, versions and
// template hashes, each repeated on thousands of objects; the long ones
// (UUIDs and other IDs) are unique, and an interning table entry for each
// would cost more than the copy it saves.
const maxInternedLabelValue = 24

// LabelsFrom converts a label map. Keys are interned (they repeat across
// the fleet), and so are short values. A longer value equal to one of same,
// or to another value of m, shares that string: engines repeat an object's
// ID in several labels and in its owner's name, and each is decoded into its
// own copy.
func LabelsFrom(m map[string]string, same ...string) Labels {
	if len(m) == 0 {
		return Labels{}
	}
	kept := make([]string, 0, len(same)+len(m))
	for _, s := range same {
		if s != "" {
			kept = append(kept, s)
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]labelPair, 0, len(m))
	for _, k := range keys {
		v := m[k]
		if i := slices.Index(kept, v); i >= 0 {
			v = kept[i]
		} else if len(v) <= maxInternedLabelValue {
			v = Intern(v)
		} else {
			kept = append(kept, v)
		}
		pairs = append(pairs, labelPair{unique.Make(k), v})
	}
	return Labels{pairs: pairs}
}

// Len is the number of labels.
func (l Labels) Len() int { return len(l.pairs) }

// Lookup returns the value of key and whether it is set.
func (l Labels) Lookup(key string) (string, bool) {
	lo, hi := 0, len(l.pairs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch k := l.pairs[mid].key.Value(); {
		case k == key:
			return l.pairs[mid].value, true
		case k < key:
			lo = mid + 1
		default:
			hi = mid
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
		for _, p := range l.pairs {
			if !yield(p.key.Value(), p.value) {
				return
			}
		}
	}
}

// Map returns the labels as a new map (nil when there are none).
func (l Labels) Map() map[string]string {
	if len(l.pairs) == 0 {
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
func (l Labels) IsZero() bool { return len(l.pairs) == 0 }
