package codec

import (
	"context"
	"fmt"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restwatch "k8s.io/client-go/rest/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// Pods and BatchSandboxes reach the model through one decoder each
// (podwire.go, batchsandboxes.go), which reads the bytes an API server
// sends. Objects that arrive as objects, not bytes (from the demo's
// in-memory cluster, the fake clientsets of unit tests, or a typed client's
// one-off read) are encoded first, as an API server encodes them, with
// client-go's serializers (Pods in protobuf, BatchSandboxes in JSON, watch
// events framed into a stream), so that the demo runs the decoders a real
// cluster runs and a field the model gains is read in one place. The
// encoding costs about an object's size in allocations; a real cluster's
// watches never pay it.

// wireFormat is how the server writes one resource, and how sandscope reads
// it back.
type wireFormat struct {
	object runtime.Encoder // a list, one object, or a watch event's object
	event  runtime.Encoder // the WatchEvent around a watch event's object
	framer runtime.Framer  // watch events one after another in a stream
	codec  runtime.Decoder // a list or one object, as the RESTClient reads them
	// events reads a watch stream.
	events func(body io.ReadCloser) watch.Decoder
}

// podProtobuf: protobuf, as sandscope asks the server for Pods.
func podProtobuf(lists *mem.StringLists) wireFormat {
	info := serializerFor(runtime.ContentTypeProtobuf)
	return wireFormat{
		object: scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion),
		event:  info.StreamSerializer.Serializer, framer: info.StreamSerializer.Framer,
		codec:  podCodec{lists: lists},
		events: func(body io.ReadCloser) watch.Decoder { return newPodEvents(body, lists) },
	}
}

// batchSandboxJSON: JSON, the only encoding of a custom resource.
func batchSandboxJSON(lists *mem.StringLists) wireFormat {
	info := serializerFor(runtime.ContentTypeJSON)
	return wireFormat{
		object: unstructured.UnstructuredJSONScheme,
		event:  info.StreamSerializer.Serializer, framer: info.StreamSerializer.Framer,
		codec:  batchSandboxCodec{lists: lists},
		events: func(body io.ReadCloser) watch.Decoder { return newBatchSandboxEvents(body, lists) },
	}
}

// serializerFor is client-go's serializer of a media type, the one an API
// server negotiates too (the same codec factory).
func serializerFor(mediaType string) runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		panic("client-go's scheme has no stream serializer for " + mediaType) // a broken client-go build
	}
	return info
}

// reencode returns obj as sandscope's decoder reads it from the wire; into,
// as for a RESTClient's Into, may be the list to fill.
func (f wireFormat) reencode(obj, into runtime.Object) (runtime.Object, error) {
	data, err := runtime.Encode(f.object, obj)
	if err != nil {
		return nil, fmt.Errorf("encoding a %T as the server would: %w", obj, err)
	}
	out, _, err := f.codec.Decode(data, nil, into)
	return out, err
}

// listWatch reads the objects lw lists and watches through the wire, as
// NewPodListWatch and NewBatchSandboxListWatch read a server's. newList
// makes the list the reflector is handed. client says whether lw can
// stream an initial list (cache.ToListWatcherWithWatchListSemantics).
func (f wireFormat) listWatch(lw *cache.ListWatch, client any, newList func() runtime.Object) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := lw.ListWithContext(ctx, opts)
			if err != nil {
				return nil, err
			}
			return f.reencode(list, newList())
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := lw.WatchWithContext(ctx, opts)
			if err != nil {
				return nil, err
			}
			return newWireWatch(ctx, f.events(f.stream(w))), nil
		},
	}, client)
}

// stream writes w's events into a stream, as a server writes a watch
// response, until w ends or the stream's reader closes it.
func (f wireFormat) stream(w watch.Interface) io.ReadCloser {
	pr, pw := io.Pipe()
	crash.Go(func() {
		enc := restwatch.NewEncoder(streaming.NewEncoder(f.framer.NewFrameWriter(pw), f.event), f.object)
		for ev := range w.ResultChan() {
			// The encoder sets the object's kind in place, and client-go's
			// fake tracker hands a watch that resumes from a
			// resourceVersion the objects it stores, not copies: encoding
			// those would race with the tracker's next read of them.
			if ev.Object != nil {
				ev.Object = ev.Object.DeepCopyObject()
			}
			if err := enc.Encode(&ev); err != nil {
				w.Stop()
				pw.CloseWithError(err)
				return
			}
		}
		pw.Close()
	})
	return &encodedWatch{PipeReader: pr, stop: w.Stop}
}

// encodedWatch is a watch stream whose Close also ends the watch it is
// written from, as closing a response body ends a server's watch.
type encodedWatch struct {
	*io.PipeReader
	stop func()
}

func (b *encodedWatch) Close() error {
	b.stop()
	return b.PipeReader.Close()
}

// newWireWatch turns a stream decoder into the watch the reflector reads,
// reporting a stream that cannot be decoded as rest.Request.Watch does.
func newWireWatch(ctx context.Context, d watch.Decoder) watch.Interface {
	return watch.NewStreamWatcherWithLogger(klog.FromContext(ctx), d,
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding"))
}

// PodsOverWire lists and watches Pods through kc, read as the server's
// protobuf: *PodList and *VersionedPod, as NewPodListWatch returns them.
func PodsOverWire(lw *cache.ListWatch, client any, lists *mem.StringLists) cache.ListerWatcher {
	return podProtobuf(lists).listWatch(lw, client, func() runtime.Object { return &PodList{} })
}

// BatchSandboxesOverWire lists and watches BatchSandboxes through a dynamic
// client, read as the server's JSON: *batchSandboxList and
// *model.BatchSandbox, as NewBatchSandboxListWatch returns them.
func BatchSandboxesOverWire(lw *cache.ListWatch, client any, lists *mem.StringLists) cache.ListerWatcher {
	return batchSandboxJSON(lists).listWatch(lw, client, func() runtime.Object { return &batchSandboxList{} })
}

// Objects read one at a time (an exec's lookup, its live re-read of a
// pooled sandbox, the holders of an address) go through the same decoders.

// ModelPod is p as the Pod watch reads it.
func ModelPod(p *corev1.Pod) (*model.Pod, error) {
	obj, err := podProtobuf(nil).reencode(p, nil)
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	vp, ok := obj.(*VersionedPod)
	if !ok {
		return nil, fmt.Errorf("reading pod %s/%s: decoded a %T", p.Namespace, p.Name, obj)
	}
	return vp.Pod, nil
}

// ModelBatchSandbox is obj, a BatchSandbox or only its metadata, as the
// BatchSandbox watch reads it.
func ModelBatchSandbox(obj runtime.Object) (*model.BatchSandbox, error) {
	out, err := batchSandboxJSON(nil).reencode(obj, nil)
	if err != nil {
		return nil, fmt.Errorf("reading a batchsandbox: %w", err)
	}
	b, ok := out.(*model.BatchSandbox)
	if !ok {
		return nil, fmt.Errorf("reading a batchsandbox: decoded a %T", out)
	}
	b.ResourceVersion = "" // as the watch's transform does: nothing reads it
	return b, nil
}
