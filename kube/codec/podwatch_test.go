package codec

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// A Pod watch stream as the apiserver writes it reads as the reflector needs
// it: Pods as *VersionedPod with their resourceVersion (the type the fleet
// watch expects of every event), the initial-events-end bookmark with its
// annotation, an ERROR as its Status, and the end of the stream as io.EOF.
func TestPodEventsDecodeAServerStream(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	pods, evs := serverWatchEvents(t)
	stream := encodeWatchStream(t, info, evs)

	events := newPodEvents(io.NopCloser(bytes.NewReader(stream)), mem.NewStringLists())
	defer events.Close()
	for i, want := range []struct {
		typ watch.EventType
		pod *corev1.Pod
	}{{watch.Added, pods[0]}, {watch.Modified, pods[1]}, {watch.Deleted, pods[0]}} {
		typ, obj, err := events.Decode()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		vp, ok := obj.(*VersionedPod)
		if typ != want.typ || !ok {
			t.Fatalf("event %d: %s %T, want %s *VersionedPod", i, typ, obj, want.typ)
		}
		if vp.GetResourceVersion() != want.pod.ResourceVersion || !reflect.DeepEqual(vp.Pod, model.SlimPod(want.pod)) {
			t.Fatalf("event %d: resourceVersion %q (want %q)\n%s", i, vp.GetResourceVersion(), want.pod.ResourceVersion, podDiff(model.SlimPod(want.pod), vp.Pod))
		}
		key, err := cache.MetaNamespaceKeyFunc(vp)
		if err != nil || key != want.pod.Namespace+"/"+want.pod.Name {
			t.Fatalf("event %d: key %q, %v", i, key, err)
		}
	}

	typ, obj, err := events.Decode()
	vp, ok := obj.(*VersionedPod)
	if err != nil || typ != watch.Bookmark || !ok {
		t.Fatalf("bookmark: %s %T %v", typ, obj, err)
	}
	if vp.GetResourceVersion() != "4009999" || vp.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("bookmark: resourceVersion %q annotations %v", vp.GetResourceVersion(), vp.GetAnnotations())
	}

	typ, obj, err = events.Decode()
	status, ok := obj.(*metav1.Status)
	if err != nil || typ != watch.Error || !ok || status.Code != 410 || status.Reason != metav1.StatusReasonExpired {
		t.Fatalf("error event: %s %#v %v", typ, obj, err)
	}

	if _, _, err := events.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
}

// A watch frame that is not a Pod event is an error for the stream watcher
// to report, not a panic or a silently dropped event.
func TestPodEventsRejectOtherObjects(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "5"}}
	stream := encodeWatchStream(t, info, []watch.Event{{Type: watch.Added, Object: node}})
	events := newPodEvents(io.NopCloser(bytes.NewReader(stream)), nil)
	if _, obj, err := events.Decode(); err == nil {
		t.Fatalf("an ADDED Node decoded as %T", obj)
	}
}

// The Pod client's codec reads a PodList into the reflector's list type and
// a Status (an error response) as a Status.
func TestPodCodecListAndStatus(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	var list corev1.PodList
	for _, p := range simulatorCorePods(t, 3) {
		list.Items = append(list.Items, *p)
	}
	list.ResourceVersion, list.Continue = "4010000", "next-page"
	codec := podCodec{lists: mem.NewStringLists()}

	into := &PodList{}
	obj, _, err := codec.Decode(encodeObject(t, info.Serializer, &list), nil, into)
	if err != nil || obj != into {
		t.Fatalf("PodList: %T %v, want it decoded into the given list", obj, err)
	}
	if into.ResourceVersion != "4010000" || into.Continue != "next-page" || len(into.Items) != 3 {
		t.Fatalf("PodList: resourceVersion %q continue %q, %d items", into.ResourceVersion, into.Continue, len(into.Items))
	}
	for i := range list.Items {
		if want := model.SlimPod(&list.Items[i]); !reflect.DeepEqual(into.Items[i], want) {
			t.Fatalf("item %d:\n%s", i, podDiff(want, into.Items[i]))
		}
	}

	denied := &metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "pods is forbidden"}
	obj, _, err = codec.Decode(encodeObject(t, info.Serializer, denied), nil, nil)
	if s, ok := obj.(*metav1.Status); err != nil || !ok || s.Code != 403 || s.Message != denied.Message {
		t.Fatalf("Status: %#v %v", obj, err)
	}
}
