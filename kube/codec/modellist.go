package codec

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The fleet's own watches (Pods in podwatch.go, BatchSandboxes in
// batchsandboxes.go) read the server's bytes straight into model types
// through a RESTClient of their own. These are the two pieces both need.

// modelList is a list as client-go's reflector needs it: list metadata, and
// items that are runtime.Objects (it finds them by the field name Items).
type modelList[T runtime.Object] struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []T
}

func (l *modelList[T]) DeepCopyObject() runtime.Object {
	out := &modelList[T]{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]T, len(l.Items))
	for i, item := range l.Items {
		out.Items[i] = item.DeepCopyObject().(T)
	}
	return out
}

// readOnlySerializers offers one media type, decoded by its serializer,
// for a client that never sends a body. It has no stream serializer: the
// watches read their streams themselves.
type readOnlySerializers struct{ info runtime.SerializerInfo }

func (s readOnlySerializers) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{s.info}
}

func (readOnlySerializers) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (readOnlySerializers) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}
