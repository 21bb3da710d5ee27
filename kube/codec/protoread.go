package codec

import (
	"fmt"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// A minimal protobuf reader, over protowire: fields in wire order, their
// values aliasing the input, repeated fields collected without allocating
// for the usual few. The Pod mapping (podwire.go) and the envelopes
// (envelope.go) are written on it.

// Field numbers every map<K, V> field shares.
const (
	mapEntryKey   protowire.Number = 1
	mapEntryValue protowire.Number = 2
)

// decodeMapEntry reads one entry of a map field whose values are strings or
// messages: a missing key or value stays nil, a repeated one replaces the
// earlier, as in the generated decoders.
func decodeMapEntry(b []byte, key, value *[]byte) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case mapEntryKey:
			*key, err = f.bytes()
		case mapEntryValue:
			*value, err = f.bytes()
		}
		return err
	})
}

// forMessages calls fn with every message of field num (named name) in b.
func forMessages(b []byte, num protowire.Number, name string, fn func([]byte) error) error {
	return eachField(b, func(f field) error {
		if f.num != num {
			return nil
		}
		return f.message(name, fn)
	})
}

// viewString is b as a string, without copying: only for strings that are
// compared or interned and then dropped, never kept, since b belongs to a
// buffer its owner reuses.
func viewString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// rawList collects the raw values of a repeated field, in wire order. The
// first few sit in the array, so that the usual Pod needs no scratch on
// the heap (a running Pod has five conditions, a command may have a few
// more words).
type rawList struct {
	n     int
	first [8][]byte
	more  [][]byte
}

func (l *rawList) add(b []byte) {
	if l.n < len(l.first) {
		l.first[l.n] = b
	} else {
		l.more = append(l.more, b)
	}
	l.n++
}

func (l *rawList) len() int { return l.n }

// decodeEach decodes every message of l into a slice of l's length (nil
// when l is empty, as the generated decoder leaves an absent field).
// Errors start with the index, for the caller to prefix the field's name.
func decodeEach[T any](l *rawList, decode func(b []byte, v *T) error) ([]T, error) {
	if l.len() == 0 {
		return nil, nil
	}
	out := make([]T, l.len())
	for i := range out {
		if err := decode(l.at(i), &out[i]); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return out, nil
}

func (l *rawList) at(i int) []byte {
	if i < len(l.first) {
		return l.first[i]
	}
	return l.more[i-len(l.first)]
}

// field is one field of a message as read off the wire: a varint's value,
// or the contents of a length-delimited field (aliasing the input).
// Fixed-width and group fields are consumed whole: none of the fields read
// here has one, so they are skipped as unknown.
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64
	b   []byte
}

// fieldReader reads the fields of one message in wire order; err is set
// when the message is malformed.
type fieldReader struct {
	msg []byte
	err error
}

// eachField calls fn with every field of msg in wire order, and returns
// the first error fn returns or the one the message's own framing makes.
// The field is passed by value so that it stays on the caller's stack.
func eachField(msg []byte, fn func(f field) error) error {
	r := fieldReader{msg: msg}
	var f field
	for r.next(&f) {
		if err := fn(f); err != nil {
			return err
		}
	}
	return r.err
}

// next reads the next field into f, false at the end of the message or on
// an error.
func (r *fieldReader) next(f *field) bool {
	if r.err != nil || len(r.msg) == 0 {
		return false
	}
	num, typ, n := protowire.ConsumeTag(r.msg)
	if n < 0 {
		r.err = fmt.Errorf("reading a field tag: %w", protowire.ParseError(n))
		return false
	}
	rest := r.msg[n:]
	*f = field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.u, n = protowire.ConsumeVarint(rest)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(rest)
	default:
		n = protowire.ConsumeFieldValue(num, typ, rest)
	}
	if n < 0 {
		r.err = fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		return false
	}
	r.msg = rest[n:]
	return true
}

func (f *field) bytes() ([]byte, error) {
	if f.typ != protowire.BytesType {
		return nil, f.wrongType(protowire.BytesType)
	}
	return f.b, nil
}

func (f *field) varint() (uint64, error) {
	if f.typ != protowire.VarintType {
		return 0, f.wrongType(protowire.VarintType)
	}
	return f.u, nil
}

func (f *field) bool() (bool, error) {
	v, err := f.varint()
	return protowire.DecodeBool(v), err
}

// setInt64 sets o from an int64 varint field.
func (f *field) setInt64(o *optionalInt64) error {
	v, err := f.varint()
	if err != nil {
		return err
	}
	*o = optionalInt64{set: true, v: int64(v)}
	return nil
}

// message calls decode with the contents of a message field, naming the
// field in its error.
func (f *field) message(name string, decode func([]byte) error) error {
	b, err := f.bytes()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := decode(b); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// repeated adds the contents of a length-delimited field to l.
func (f *field) repeated(l *rawList) error {
	b, err := f.bytes()
	if err != nil {
		return err
	}
	l.add(b)
	return nil
}

func (f *field) wrongType(want protowire.Type) error {
	return fmt.Errorf("field %d: wire type %d, want %d", f.num, f.typ, want)
}
