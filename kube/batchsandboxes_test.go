package kube

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/model"
)

// A BatchSandbox as the server sends it: managedFields, a full template, the
// engine's annotations.
const wireBSBX = `{
  "apiVersion": "sandbox.opensandbox.io/v1alpha1", "kind": "BatchSandbox",
  "metadata": {"name": "sbx-a", "namespace": "team-rl", "uid": "6f1c", "resourceVersion": "812",
    "generation": 2, "creationTimestamp": "2026-11-29T17:20:00Z",
    "deletionTimestamp": "2026-11-29T17:30:00Z", "deletionGracePeriodSeconds": 30,
    "finalizers": ["batch-sandbox.sandbox.opensandbox.io/finalizer"],
    "labels": {"app": "rl", "team": "a"},
    "annotations": {
      "sandbox.opensandbox.io/endpoints": "[\"10.244.1.17\",\"\"]",
      "kubectl.kubernetes.io/last-applied-configuration": "{\"big\":true}"},
    "managedFields": [{"manager": "controller", "operation": "Update", "fieldsV1": {"f:status": {"f:phase": {}}}}]},
  "spec": {"replicas": 2, "poolRef": "", "expireTime": "2026-11-29T18:20:00Z",
    "template": {"metadata": {"labels": {"x": "y"}}, "spec": {"containers": [
      {"name": "sidecar", "image": "envoy:1", "command": ["envoy"]},
      {"name": "sandbox", "image": "registry.local/rl/trainer:1", "command": ["/opt/execd/bootstrap.sh", "tail", "-f", "/dev/null"],
       "resources": {"limits": {"memory": "1Gi"}}, "env": [{"name": "A", "value": "b"}]}]}}},
  "status": {"phase": "Succeed", "replicas": 2, "allocated": 2, "ready": 1,
    "conditions": [{"type": "Ready", "status": "False", "reason": "PodFailed", "message": "x", "lastTransitionTime": "2026-11-29T17:24:44Z"}]}
}`

// The typed decoder and the dynamic path (unstructured + transform) must
// give the model the same BatchSandbox.
func TestBatchSandboxCodecMatchesDynamicPath(t *testing.T) {
	docs := map[string]string{
		"full":    wireBSBX,
		"pooled":  `{"kind":"BatchSandbox","metadata":{"name":"p","namespace":"n","annotations":{"sandbox.opensandbox.io/alloc-status":"{\"pods\":[\"pool-a-1\",\"pool-a-2\"]}","sandbox.opensandbox.io/alloc-released":"{\"pods\":[\"pool-a-1\"]}"}},"spec":{"poolRef":"pool-a","replicas":1}}`,
		"bad-ann": `{"kind":"BatchSandbox","metadata":{"name":"b","namespace":"n","annotations":{"sandbox.opensandbox.io/endpoints":"not json"}},"spec":{}}`,
		// The template is free-form in the CRD: a command of the wrong type
		// is skipped, like the dynamic path skips it.
		"wrong-types": `{"kind":"BatchSandbox","metadata":{"name":"w","namespace":"n"},"spec":{"template":{"spec":{"containers":[{"name":"sandbox","image":"img:1","command":"sleep infinity"}]}}}}`,
		"no-spec":     `{"kind":"BatchSandbox","metadata":{"name":"e","namespace":"n"}}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			obj, _, err := batchSandboxCodec{}.Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			got, ok := obj.(*model.BatchSandbox)
			if !ok {
				t.Fatalf("Decode gave %T, want *model.BatchSandbox", obj)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(doc)); err != nil {
				t.Fatal(err)
			}
			want := model.BatchSandboxFromUnstructured(u)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("typed decode differs from the dynamic path:\ndynamic: %+v\ntyped:   %+v", want, got)
			}
		})
	}
}

func TestBatchSandboxCodecFullObject(t *testing.T) {
	obj, _, err := batchSandboxCodec{}.Decode([]byte(wireBSBX), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := obj.(*model.BatchSandbox)
	if b.MainImage != "registry.local/rl/trainer:1" || len(b.MainCommand) != 4 || b.Replicas != 2 || b.Phase != "Succeed" ||
		len(b.Endpoints) != 2 || b.Endpoints[0] != "10.244.1.17" || b.ExpireTime == nil || b.DeletionTimestamp == nil ||
		len(b.Finalizers) != 1 || len(b.Conditions) != 1 || b.Conditions[0].Reason != "PodFailed" {
		t.Fatalf("decoded %+v", b)
	}
	if b.GetAnnotations() != nil || b.InitialEventsEnd {
		t.Fatalf("annotations %v kept; the model parses them once and drops them", b.GetAnnotations())
	}
}

func TestBatchSandboxCodecList(t *testing.T) {
	doc := `{"apiVersion":"sandbox.opensandbox.io/v1alpha1","kind":"BatchSandboxList",
	  "metadata":{"resourceVersion":"900","continue":"tok","remainingItemCount":5},
	  "items":[` + wireBSBX + `,{"metadata":{"name":"b","namespace":"n"}}]}`
	into := &batchSandboxList{}
	obj, _, err := batchSandboxCodec{}.Decode([]byte(doc), nil, into)
	if err != nil {
		t.Fatal(err)
	}
	if obj != into {
		t.Fatalf("Decode returned %T, not the list it was given", obj)
	}
	if into.ResourceVersion != "900" || into.Continue != "tok" || into.RemainingItemCount == nil || *into.RemainingItemCount != 5 {
		t.Fatalf("list metadata %+v", into.ListMeta)
	}
	if len(into.Items) != 2 || into.Items[0].Name != "sbx-a" || into.Items[1].Name != "b" {
		t.Fatalf("items %+v", into.Items)
	}
	// An empty list is a list, not a BatchSandbox.
	obj, _, err = batchSandboxCodec{}.Decode([]byte(`{"kind":"BatchSandboxList","metadata":{"resourceVersion":"1"},"items":[]}`), nil, &batchSandboxList{})
	if l, ok := obj.(*batchSandboxList); err != nil || !ok || len(l.Items) != 0 || l.ResourceVersion != "1" {
		t.Fatalf("empty list: %T %+v %v", obj, obj, err)
	}
}

// Error responses and watch ERROR events carry a Status; client-go turns it
// into a typed API error only if the decoder returns *metav1.Status.
func TestBatchSandboxCodecStatus(t *testing.T) {
	doc := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (900)","reason":"Expired","code":410}`
	obj, _, err := batchSandboxCodec{}.Decode([]byte(doc), nil, &batchSandboxList{})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := obj.(*metav1.Status)
	if !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired || st.Status != metav1.StatusFailure {
		t.Fatalf("got %T %+v", obj, obj)
	}
}

// The bookmark that ends a streamed initial list is recognised by the
// reflector from an annotation, so that one annotation must survive.
func TestBatchSandboxCodecKeepsInitialEventsEnd(t *testing.T) {
	doc := `{"kind":"BatchSandbox","metadata":{"resourceVersion":"77","annotations":{"k8s.io/initial-events-end":"true"}}}`
	obj, _, err := batchSandboxCodec{}.Decode([]byte(doc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := obj.(*model.BatchSandbox)
	if b.ResourceVersion != "77" || b.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("bookmark decoded as %+v", b.ObjectMeta)
	}
}

func TestBatchSandboxCodecRejectsMalformedJSON(t *testing.T) {
	_, _, err := batchSandboxCodec{}.Decode([]byte(`{"kind":"BatchSandbox","metadata":`), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "decoding a BatchSandbox") {
		t.Fatalf("err = %v, want a decoding error", err)
	}
}

func TestBatchSandboxDeepCopyObject(t *testing.T) {
	obj, _, err := batchSandboxCodec{}.Decode([]byte(wireBSBX), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := obj.(*model.BatchSandbox)
	c := b.DeepCopyObject().(*model.BatchSandbox)
	if !reflect.DeepEqual(b, c) {
		t.Fatalf("copy differs:\n%+v\n%+v", b, c)
	}
	// Labels are read only (no setter), so the copy may share them.
	c.MainCommand[0] = "changed"
	c.Endpoints[0] = "changed"
	if b.Labels.Get("app") != "rl" || b.MainCommand[0] == "changed" || b.Endpoints[0] == "changed" {
		t.Fatal("the copy shares memory with the original")
	}
}

func TestWatchEventCodec(t *testing.T) {
	ev := &metav1.WatchEvent{}
	obj, _, err := watchEventCodec{}.Decode([]byte(`{"type":"ADDED","object":`+wireBSBX+`}`), nil, ev)
	if err != nil || obj != ev {
		t.Fatalf("Decode = %v, %v", obj, err)
	}
	if ev.Type != "ADDED" {
		t.Fatalf("type %q", ev.Type)
	}
	// The object is handed on whole, for the object codec.
	b, _, err := batchSandboxCodec{}.Decode(ev.Object.Raw, nil, nil)
	if err != nil || b.(*model.BatchSandbox).Name != "sbx-a" {
		t.Fatalf("object %v, %v", b, err)
	}
	if _, _, err := (watchEventCodec{}).Decode([]byte(`{"type":"ADDED","object":{`), nil, &metav1.WatchEvent{}); err == nil {
		t.Fatal("a truncated event decoded without error")
	}
	if _, _, err := (watchEventCodec{}).Decode([]byte(`{}`), nil, &metav1.Status{}); err == nil {
		t.Fatal("decoded into something other than a WatchEvent")
	}
}

// Whatever the server (or a man in the middle) sends, the codec returns an
// error or an object, never panics; a decoded BatchSandbox copies equal.
func FuzzBatchSandboxCodec(f *testing.F) {
	f.Add([]byte(wireBSBX))
	f.Add([]byte(`{"kind":"BatchSandboxList","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}}]}`))
	f.Add([]byte(`{"kind":"Status","status":"Failure","code":410}`))
	f.Add([]byte(`{"spec":{"template":{"spec":{"containers":[{"name":7,"command":{"a":1}}]}}},"status":{"conditions":[null,{"type":[]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, _, err := batchSandboxCodec{}.Decode(data, nil, nil)
		if err != nil {
			return
		}
		if b, ok := obj.(*model.BatchSandbox); ok {
			if c := b.DeepCopyObject(); !reflect.DeepEqual(b, c) {
				t.Fatalf("copy differs:\n%+v\n%+v", b, c)
			}
		}
	})
}
