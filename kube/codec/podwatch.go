package codec

import (
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/framer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// Pods are read from the server's protobuf straight into model.Pod
// (podwire.go), as BatchSandboxes are read from JSON (batchsandboxes.go).
// Decoding each Pod whole into a corev1.Pod first allocated some ten times
// what the model keeps, in small objects interleaved with the ones it keeps;
// the heap's spans then stayed about twice the live heap, since a span goes
// back to the OS only when all of it is free.

const protobufMediaType = runtime.ContentTypeProtobuf

// NewPodListWatch lists and watches Pods in namespace ("" = all) as
// *VersionedPod, which the fleet watch's transform unwraps to *model.Pod.
func NewPodListWatch(cfg *rest.Config, namespace string, lists *mem.StringLists) (cache.ListerWatcher, error) {
	rc, err := NewPodClient(cfg, lists)
	if err != nil {
		return nil, err
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &PodList{}
			err := rc.Get().Namespace(namespace).Resource("pods").
				VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(list)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			body, err := rc.Get().Namespace(namespace).Resource("pods").
				VersionedParams(&opts, metav1.ParameterCodec).Stream(ctx)
			if err != nil {
				return nil, err
			}
			return newWireWatch(ctx, newPodEvents(body, lists)), nil
		},
	}, nil
}

// NewPodClient is a RESTClient for core/v1 that accepts only protobuf and
// decodes with podCodec.
func NewPodClient(cfg *rest.Config, lists *mem.StringLists) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.ContentType = protobufMediaType
	c.AcceptContentTypes = protobufMediaType
	c.NegotiatedSerializer = readOnlySerializers{runtime.SerializerInfo{
		MediaType:        protobufMediaType,
		MediaTypeType:    "application",
		MediaTypeSubType: "vnd.kubernetes.protobuf",
		Serializer:       podCodec{lists: lists},
	}}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("building the Pod client: %w", err)
	}
	return rc, nil
}

// VersionedPod is a decoded Pod on its way through client-go's reflector,
// which reads its resourceVersion (and, on a bookmark, whether it ends the
// initial events); model.Pod keeps neither. The fleet watch's transform
// unwraps it (Watcher.slimPod).
type VersionedPod struct {
	*model.Pod
	resourceVersion  string
	initialEventsEnd bool
}

// GetResourceVersion returns the resourceVersion the watch event carried.
func (p *VersionedPod) GetResourceVersion() string { return p.resourceVersion }

// GetAnnotations returns the initial-events-end annotation on the bookmark
// that ends a watch's initial events, and nothing otherwise.
func (p *VersionedPod) GetAnnotations() map[string]string {
	if p.initialEventsEnd {
		return map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return nil
}

// DeepCopyObject copies the Pod and its resourceVersion.
func (p *VersionedPod) DeepCopyObject() runtime.Object {
	out := *p
	out.Pod = p.Pod.DeepCopyObject().(*model.Pod)
	return &out
}

// UnwrapPod is the Pod watch's transform: it hands the fleet the model.Pod
// a VersionedPod carries, once the reflector has read its version (nothing
// else will). Anything else passes through: client-go may transform an
// object twice.
func UnwrapPod(obj any) (any, error) {
	if p, ok := obj.(*VersionedPod); ok {
		return p.Pod, nil
	}
	return obj, nil
}

// PodList is a PodList as the reflector needs it: the list NewPodClient
// decodes into.
type PodList = modelList[*model.Pod]

// podCodec decodes an enveloped Pod, PodList or Status. It only reads: the
// client never sends a body.
type podCodec struct{ lists *mem.StringLists }

func (podCodec) Identifier() runtime.Identifier { return "sandscope-pod-protobuf" }

func (podCodec) Encode(runtime.Object, io.Writer) error {
	return errors.New("the Pod client only reads")
}

// Decode fills into when it is a *PodList and the data is a PodList, and
// otherwise returns a new *VersionedPod, or a *metav1.Status when the server
// sent one (an error response).
func (c podCodec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	apiVersion, kind, raw, err := decodeEnvelope(data)
	if err != nil {
		return nil, nil, err
	}
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	switch kind {
	case "PodList":
		list, ok := into.(*PodList)
		if !ok {
			list = &PodList{}
		}
		items, meta, err := decodePodList(raw, c.lists)
		if err != nil {
			return nil, nil, err
		}
		list.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
		list.ListMeta, list.Items = meta, items
		return list, &gvk, nil
	case "Pod":
		p, rv, err := decodePod(raw, c.lists, nil) // one Pod: nothing to repeat
		if err != nil {
			return nil, nil, err
		}
		return &VersionedPod{Pod: p, resourceVersion: rv}, &gvk, nil
	case "Status":
		status := &metav1.Status{}
		if err := status.Unmarshal(raw); err != nil {
			return nil, nil, fmt.Errorf("decoding a Status: %w", err)
		}
		status.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
		return status, &gvk, nil
	default:
		return nil, nil, fmt.Errorf("the Pod client got a %q, want a Pod, PodList or Status", gvk)
	}
}

// podEvents decodes a protobuf watch stream of Pods: length-delimited
// frames, each a WatchEvent whose object is an enveloped Pod (a bookmark:
// a Pod with only metadata) or, for ERROR, a Status.
type podEvents struct {
	frames streaming.Decoder
	lists  *mem.StringLists
}

func newPodEvents(body io.ReadCloser, lists *mem.StringLists) *podEvents {
	e := &podEvents{lists: lists}
	e.frames = streaming.NewDecoder(framer.NewLengthDelimitedFrameReader(body), podFrameDecoder{lists: lists, intern: &internCache{}})
	return e
}

// Decode returns the next event.
func (e *podEvents) Decode() (watch.EventType, runtime.Object, error) {
	obj, _, err := e.frames.Decode(nil, nil)
	if err != nil {
		return "", nil, err // io.EOF included: the stream watcher ends quietly on it
	}
	ev, ok := obj.(*podWatchEvent)
	if !ok {
		return "", nil, fmt.Errorf("pod watch: decoded a %T, want an event", obj)
	}
	return ev.Type, ev.Object, nil
}

func (e *podEvents) Close() { _ = e.frames.Close() }

// podWatchEvent is one decoded frame of a Pod watch. It passes from
// podFrameDecoder to podEvents only, so that the frame buffer, which the
// streaming decoder reuses, is read before the next frame overwrites it.
type podWatchEvent struct {
	Type   watch.EventType
	Object runtime.Object
}

func (*podWatchEvent) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (e *podWatchEvent) DeepCopyObject() runtime.Object {
	out := *e
	out.Object = e.Object.DeepCopyObject()
	return &out
}

// podFrameDecoder decodes one watch frame into a *podWatchEvent.
type podFrameDecoder struct {
	lists  *mem.StringLists
	intern *internCache // the stream's
}

func (d podFrameDecoder) Decode(frame []byte, _ *schema.GroupVersionKind, _ runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	typ, object, err := decodeWatchEvent(frame)
	if err != nil {
		return nil, nil, err
	}
	ev := &podWatchEvent{Type: watch.EventType(typ)}
	_, kind, raw, err := decodeEnvelope(object)
	if err != nil {
		return nil, nil, fmt.Errorf("decoding a %s event's object: %w", typ, err)
	}
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		if kind != "Pod" {
			return nil, nil, fmt.Errorf("a %s event carries a %q, want a Pod", typ, kind)
		}
		p, rv, err := decodePod(raw, d.lists, d.intern)
		if err != nil {
			return nil, nil, err
		}
		ev.Object = &VersionedPod{Pod: p, resourceVersion: rv}
	case watch.Bookmark:
		// Only metadata, and rare: the generated decoder is fine here.
		var p corev1.Pod
		if err := p.Unmarshal(raw); err != nil {
			return nil, nil, fmt.Errorf("decoding a bookmark: %w", err)
		}
		ev.Object = &VersionedPod{Pod: &model.Pod{}, resourceVersion: p.ResourceVersion,
			initialEventsEnd: p.Annotations[metav1.InitialEventsAnnotationKey] == "true"}
	case watch.Error:
		status := &metav1.Status{}
		if err := status.Unmarshal(raw); err != nil {
			return nil, nil, fmt.Errorf("decoding an ERROR event's Status: %w", err)
		}
		ev.Object = status
	default:
		return nil, nil, fmt.Errorf("got invalid watch event type: %v", typ)
	}
	return ev, nil, nil
}
