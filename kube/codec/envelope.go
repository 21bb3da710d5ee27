package codec

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sandscope/sandscope/internal/mem"
)

// Every object the protobuf serializer writes, and every frame of a watch
// stream, is wrapped: an envelope (runtime.Unknown) naming the object's
// apiVersion and kind around its bytes, a WatchEvent around an enveloped
// object. This file unwraps them; podwire.go reads what is inside.

// Field numbers, from the generated.proto files of k8s.io/apimachinery
// v0.37.2 (pkg/runtime, pkg/apis/meta/v1).
const (
	// k8s.io.apimachinery.pkg.runtime.Unknown
	unknownTypeMeta protowire.Number = 1
	unknownRaw      protowire.Number = 2

	// k8s.io.apimachinery.pkg.runtime.TypeMeta
	typeMetaAPIVersion protowire.Number = 1
	typeMetaKind       protowire.Number = 2

	// k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent
	watchEventType   protowire.Number = 1
	watchEventObject protowire.Number = 2

	// k8s.io.apimachinery.pkg.runtime.RawExtension
	rawExtensionRaw protowire.Number = 1
)

// protobufMagic starts every object the protobuf serializer writes
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf), before the
// runtime.Unknown that wraps it.
const protobufMagic = "k8s\x00"

// decodeEnvelope reads an object as the protobuf serializer writes it: the
// magic, then a runtime.Unknown whose typeMeta names the object and whose
// raw holds its message. raw aliases data. As the serializer does,
// contentEncoding and contentType are ignored.
func decodeEnvelope(data []byte) (apiVersion, kind string, raw []byte, err error) {
	if len(data) < len(protobufMagic) || string(data[:len(protobufMagic)]) != protobufMagic {
		return "", "", nil, fmt.Errorf("decoding a protobuf envelope: no %q prefix", protobufMagic)
	}
	body := data[len(protobufMagic):]
	if len(body) == 0 {
		return "", "", nil, errors.New("decoding a protobuf envelope: empty body")
	}
	var av, k []byte
	err = eachField(body, func(f field) (err error) {
		switch f.num {
		case unknownTypeMeta:
			err = f.message("typeMeta", func(b []byte) error { return decodeTypeMeta(b, &av, &k) })
		case unknownRaw:
			raw, err = f.bytes()
		}
		return err
	})
	if err != nil {
		return "", "", nil, fmt.Errorf("decoding a protobuf envelope: %w", err)
	}
	// Interned: a stream repeats a handful of them, and they must not
	// alias data.
	return mem.Intern(viewString(av)), mem.Intern(viewString(k)), raw, nil
}

func decodeTypeMeta(b []byte, apiVersion, kind *[]byte) error {
	return eachField(b, func(f field) (err error) {
		switch f.num {
		case typeMetaAPIVersion:
			*apiVersion, err = f.bytes()
		case typeMetaKind:
			*kind, err = f.bytes()
		}
		return err
	})
}

// decodeWatchEvent reads one frame of a protobuf watch stream (the frame's
// contents, after its 4-byte length): a metav1.WatchEvent, written by the
// apiserver with the stream serializer, which is the raw one (no magic, no
// runtime.Unknown: see serializer.newSerializersForScheme and the
// apiserver's watchEncoder). Its object is the event's object as the
// ordinary serializer writes it, enveloped: decode it with decodeEnvelope
// (a Pod; a Status for ERROR; a Pod with only metadata for BOOKMARK).
// objectEnvelope aliases frame. A frame that is itself enveloped is read
// too, though the apiserver does not send one: the magic cannot start a
// WatchEvent, so the two cannot be confused.
//
// The type is checked as client-go's watch decoder checks it.
func decodeWatchEvent(frame []byte) (eventType string, objectEnvelope []byte, err error) {
	msg := frame
	if len(frame) >= len(protobufMagic) && string(frame[:len(protobufMagic)]) == protobufMagic {
		if _, _, msg, err = decodeEnvelope(frame); err != nil {
			return "", nil, fmt.Errorf("decoding a watch event: %w", err)
		}
	}
	var typ []byte
	err = eachField(msg, func(f field) (err error) {
		switch f.num {
		case watchEventType:
			typ, err = f.bytes()
		case watchEventObject:
			err = f.message("object", func(b []byte) error { return decodeRawExtension(b, &objectEnvelope) })
		}
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("decoding a watch event: %w", err)
	}
	t, ok := knownEventType(typ)
	if !ok {
		return "", nil, fmt.Errorf("decoding a watch event: invalid type %q", typ)
	}
	return t, objectEnvelope, nil
}

// knownEventType returns the watch event type b names, as the constant
// (not a copy of b), and whether it is one client-go accepts.
func knownEventType(b []byte) (string, bool) {
	for _, t := range [...]watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Error, watch.Bookmark} {
		if string(b) == string(t) {
			return string(t), true
		}
	}
	return "", false
}

func decodeRawExtension(b []byte, raw *[]byte) error {
	return eachField(b, func(f field) (err error) {
		if f.num == rawExtensionRaw {
			*raw, err = f.bytes()
		}
		return err
	})
}
