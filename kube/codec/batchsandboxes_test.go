package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
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

// The decoder must give the model the BatchSandbox the stock path
// (unstructured, then BatchSandboxFromUnstructured) makes of the same JSON.
func TestBatchSandboxCodecMatchesDynamicPath(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"full":    wireBSBX,
		"pooled":  `{"kind":"BatchSandbox","metadata":{"name":"p","namespace":"n","annotations":{"sandbox.opensandbox.io/alloc-status":"{\"pods\":[\"pool-a-1\",\"pool-a-2\"]}","sandbox.opensandbox.io/alloc-released":"{\"pods\":[\"pool-a-1\"]}"}},"spec":{"poolRef":"pool-a","replicas":1}}`,
		"bad-ann": `{"kind":"BatchSandbox","metadata":{"name":"b","namespace":"n","annotations":{"sandbox.opensandbox.io/endpoints":"not json"}},"spec":{}}`,
		// The template is free-form in the CRD: a command of the wrong type
		// is skipped, like the dynamic path skips it.
		"wrong-types": `{"kind":"BatchSandbox","metadata":{"name":"w","namespace":"n"},"spec":{"template":{"spec":{"containers":[{"name":"sandbox","image":"img:1","command":"sleep infinity"}]}}}}`,
		"no-spec":     `{"kind":"BatchSandbox","metadata":{"name":"e","namespace":"n"}}`,
		// A pooled sandbox running a task, with failed tasks and a late Ready.
		"tasks": `{"kind":"BatchSandbox","metadata":{"name":"t","namespace":"n","creationTimestamp":"2026-11-29T17:00:00Z"},
		  "spec":{"poolRef":"pool-a","replicas":1,"taskTemplate":{"spec":{"process":{"command":["python","-m","eval"],"args":["--fast"],"env":[{"name":"A","value":"b"}]}}}},
		  "status":{"phase":"Succeed","replicas":1,"allocated":1,"ready":1,"taskRunning":1,"taskSucceed":2,"taskFailed":3,"taskPending":4,"taskUnknown":5,
		    "conditions":[{"type":"Ready","status":"True","reason":"PodsReady","message":"Sandbox is running","lastTransitionTime":"2026-11-29T17:12:00Z"}]}}`,
		// taskTemplate is free-form in the real CRD (preserve-unknown-fields).
		"task-wrong-types":         `{"kind":"BatchSandbox","metadata":{"name":"v","namespace":"n"},"spec":{"taskTemplate":{"spec":{"process":{"command":["python",7,"x"],"args":"--fast"}}}},"status":{"taskFailed":"two"}}`,
		"task-command-string":      `{"kind":"BatchSandbox","metadata":{"name":"w","namespace":"n"},"spec":{"taskTemplate":{"spec":{"process":{"command":"python -m eval"}}}}}`,
		"task-template-no-command": `{"kind":"BatchSandbox","metadata":{"name":"u","namespace":"n"},"spec":{"taskTemplate":{}},"status":{}}`,
		"early-ready":              `{"kind":"BatchSandbox","metadata":{"name":"r","namespace":"n","creationTimestamp":"2026-11-29T17:00:00Z"},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T17:00:05Z"}]}}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			got := decodeBatchSandbox(t, doc)
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(doc)); err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion != u.GetResourceVersion() {
				t.Errorf("decoded resourceVersion %q, want %q: the reflector reads it from the decoded object", got.ResourceVersion, u.GetResourceVersion())
			}
			// What the fleet is handed: the decoded object through the
			// watch's transform.
			slimmed, _ := SlimBatchSandbox(got)
			got = slimmed.(*model.BatchSandbox)
			if want := model.BatchSandboxFromUnstructured(u); !reflect.DeepEqual(want, got) {
				t.Fatalf("typed decode differs from the dynamic path:\ndynamic: %+v\ntyped:   %+v", want, got)
			}
		})
	}
}

// On random BatchSandboxes, as a server may send them, the decoder gives
// the model what the stock path makes of the same JSON. The generator draws
// every case BatchSandboxFromUnstructured tells apart: each field present or
// absent, the engine's annotations valid or malformed, the free-form parts
// (task template, counters, conditions) of the wrong type. Metadata is valid
// and spec, status and taskTemplate are objects: the server enforces that.
// The initial-events-end annotation, which only a bookmark carries and only
// the decoder reads, is left out (TestBatchSandboxCodecKeepsInitialEventsEnd).
func TestBatchSandboxCodecRandomObjects(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		doc, err := json.Marshal(randomBatchSandbox(r, i))
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := batchSandboxCodec{}.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("Decode: %v\n%s", err, doc)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(doc); err != nil {
			t.Fatal(err)
		}
		slimmed, _ := SlimBatchSandbox(obj)
		if want := model.BatchSandboxFromUnstructured(u); !reflect.DeepEqual(want, slimmed) {
			t.Fatalf("object %d: the decoder differs from the stock path: %s\n%s", i,
				firstDiff("BatchSandbox", reflect.ValueOf(want).Elem(), reflect.ValueOf(slimmed).Elem()), doc)
		}
	}
}

// randomBatchSandbox draws a BatchSandbox (see TestBatchSandboxCodecRandomObjects).
func randomBatchSandbox(r *rand.Rand, i int) map[string]any {
	pick := func(vs ...any) any { return vs[r.IntN(len(vs))] }
	maybe := func(m map[string]any, key string, v func() any) {
		if r.IntN(3) > 0 {
			m[key] = v()
		}
	}
	anyJSON := func() any { return pick(nil, "x", 7, 1.5, true, []any{"a", 3}, map[string]any{"k": "v"}) }
	ts := func() any {
		return time.Date(2026, 11, 29, r.IntN(24), r.IntN(60), r.IntN(60), 0, time.UTC).Format(time.RFC3339)
	}
	argv := func() any {
		return pick([]any{"python", "-m", "eval"}, []any{}, []any{"sh", 7}, "python -m eval", anyJSON())
	}
	name := fmt.Sprintf("sbx-%d", i)

	meta := map[string]any{"name": name, "namespace": pick("team-a", "eval"), "uid": fmt.Sprintf("uid-%d", i),
		"resourceVersion": strconv.Itoa(r.IntN(1e6)), "creationTimestamp": ts()}
	maybe(meta, "deletionTimestamp", ts)
	maybe(meta, "finalizers", func() any { return pick([]any{"batch-sandbox.sandbox.opensandbox.io/finalizer"}, []any{"a", "b"}) })
	maybe(meta, "labels", func() any {
		return map[string]any{"app": pick("rl", "eval"), osv1.LabelSandboxID: pick(name, "other")}
	})
	ann := map[string]any{}
	maybe(ann, osv1.AnnotationEndpoints, func() any {
		return pick(`["10.0.0.1",""]`, `[]`, `not json`, `["10.0.0.1","10.0.0.2"]`, `["not-an-ip"]`)
	})
	maybe(ann, osv1.AnnotationAllocStatus, func() any {
		return pick(`{"pods":["pool-a-1","pool-a-2"]}`, `{"pods":[]}`, `{`, `{"pods":"x"}`)
	})
	maybe(ann, osv1.AnnotationAllocReleased, func() any { return pick(`{"pods":["pool-a-1"]}`, `x`) })
	maybe(ann, corev1.LastAppliedConfigAnnotation, func() any { return `{"big":true}` })
	maybe(meta, "annotations", func() any { return ann })
	maybe(meta, "managedFields", func() any {
		return []any{map[string]any{"manager": "controller", "operation": "Update", "fieldsV1": map[string]any{"f:status": map[string]any{}}}}
	})

	spec := map[string]any{}
	maybe(spec, "replicas", func() any { return pick(0, 1, 2, 64) })
	maybe(spec, "poolRef", func() any { return pick("", "pool-a") })
	maybe(spec, "expireTime", func() any { return pick(ts(), "", "tomorrow") })
	maybe(spec, "template", func() any {
		return map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "sandbox", "image": "img:1", "command": argv()}}}}
	})
	maybe(spec, "taskTemplate", func() any {
		process := map[string]any{}
		maybe(process, "command", argv)
		maybe(process, "args", argv)
		return pick(map[string]any{"spec": map[string]any{"process": process}}, map[string]any{}, map[string]any{"spec": anyJSON()})
	})
	status := map[string]any{}
	maybe(status, "phase", func() any { return pick("Succeed", "Pending", "Failed", "") })
	for _, k := range []string{"taskRunning", "taskSucceed", "taskFailed", "taskPending", "taskUnknown", "replicas", "ready"} {
		// Whole numbers only: the engine's CRD types them int32.
		maybe(status, k, func() any { return pick(0, 1, 3, "two", nil, true, []any{1}) })
	}
	maybe(status, "conditions", func() any {
		var conds []any
		n := r.IntN(4)
		if r.IntN(20) == 0 {
			n = model.MaxConditions + 6 // a Ready beyond the cap counts for neither
		}
		for range n {
			c := map[string]any{}
			maybe(c, "type", func() any { return pick("Ready", "Other", 7) })
			maybe(c, "status", func() any { return pick("True", "False") })
			maybe(c, "lastTransitionTime", func() any { return pick(ts(), "bad", "") })
			maybe(c, "reason", func() any { return "PodsReady" })
			conds = append(conds, pick(c, anyJSON()))
		}
		return conds
	})
	return map[string]any{"apiVersion": osv1.BatchSandboxes.GroupVersion().String(), "kind": "BatchSandbox",
		"metadata": meta, "spec": spec, "status": status}
}

// The task template and counters, and a late Ready, reach the model the same
// way through both decoders (TestBatchSandboxCodecMatchesDynamicPath); this
// checks what they read.
func TestBatchSandboxCodecTasks(t *testing.T) {
	t.Parallel()
	doc := `{"kind":"BatchSandbox","metadata":{"name":"t","namespace":"n","creationTimestamp":"2026-11-29T17:00:00Z"},
	  "spec":{"poolRef":"pool-a","taskTemplate":{"spec":{"process":{"command":["python","-m","eval"],"args":["--fast"]}}}},
	  "status":{"taskRunning":1,"taskSucceed":2,"taskFailed":3,"taskPending":4,"taskUnknown":5,
	    "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T17:12:00Z"}]}}`
	b := decodeBatchSandbox(t, doc)
	task := b.Task()
	if task == nil || !task.HasTemplate || strings.Join(task.Command, " ") != "python -m eval --fast" ||
		task.Counts != (model.TaskCounts{Running: 1, Succeed: 2, Failed: 3, Pending: 4, Unknown: 5}) {
		t.Fatalf("task %+v", task)
	}
	if r := b.ReadySince(); r == nil || !r.Equal(time.Date(2026, 11, 29, 17, 12, 0, 0, time.UTC)) {
		t.Fatalf("ReadySince %v", r)
	}
	// No template and every counter 0: nothing kept, no rare part (the
	// comparison reads the unexported fields too).
	if b, want := decodeBatchSandbox(t, `{"kind":"BatchSandbox","metadata":{"name":"p","namespace":"n"},"status":{"taskRunning":0}}`), (&model.BatchSandbox{ObjectMeta: model.ObjectMeta{Name: "p", Namespace: "n"}}); !reflect.DeepEqual(b, want) {
		t.Fatalf("a sandbox without tasks decodes as %+v, want %+v", b, want)
	}
}

// decodeBatchSandbox decodes doc, failing t unless it is one BatchSandbox.
func decodeBatchSandbox(t *testing.T, doc string) *model.BatchSandbox {
	t.Helper()
	obj, _, err := batchSandboxCodec{}.Decode([]byte(doc), nil, nil)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	b, ok := obj.(*model.BatchSandbox)
	if !ok {
		t.Fatalf("Decode gave %T, want *model.BatchSandbox", obj)
	}
	return b
}

func TestBatchSandboxCodecFullObject(t *testing.T) {
	t.Parallel()
	b := decodeBatchSandbox(t, wireBSBX)
	if b.Replicas != 2 || b.Phase != "Succeed" ||
		len(b.Endpoints) != 2 || b.Endpoints[0] != "10.244.1.17" || b.ExpireTime == nil || b.DeletionTimestamp == nil ||
		len(b.Finalizers()) != 1 {
		t.Fatalf("decoded %+v", b)
	}
	if b.GetAnnotations() != nil || b.InitialEventsEnd {
		t.Fatalf("annotations %v kept; the model parses them once and drops them", b.GetAnnotations())
	}
}

func TestBatchSandboxCodecList(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	doc := `{"kind":"BatchSandbox","metadata":{"resourceVersion":"77","annotations":{"k8s.io/initial-events-end":"true"}}}`
	b := decodeBatchSandbox(t, doc)
	if b.ResourceVersion != "77" || b.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("bookmark decoded as %+v", b.ObjectMeta)
	}
}

func TestBatchSandboxCodecRejectsMalformedJSON(t *testing.T) {
	t.Parallel()
	_, _, err := batchSandboxCodec{}.Decode([]byte(`{"kind":"BatchSandbox","metadata":`), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "decoding a BatchSandbox") {
		t.Fatalf("err = %v, want a decoding error", err)
	}
}

func TestBatchSandboxDeepCopyObject(t *testing.T) {
	t.Parallel()
	b := decodeBatchSandbox(t, wireBSBX)
	c := b.DeepCopyObject().(*model.BatchSandbox)
	if !reflect.DeepEqual(b, c) {
		t.Fatalf("copy differs:\n%+v\n%+v", b, c)
	}
	// Labels are read only (no setter), so the copy may share them.
	c.Endpoints[0] = "changed"
	if b.Labels.Get("app") != "rl" || b.Endpoints[0] == "changed" {
		t.Fatal("the copy shares memory with the original")
	}
}

// A watch stream as the server sends it: events one after another, a
// bookmark, an ERROR carrying a Status; each event is read whole.
func TestBatchSandboxEvents(t *testing.T) {
	t.Parallel()
	compact := func(doc string) string {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	stream := `{"type":"ADDED","object":` + compact(wireBSBX) + "}\n" +
		// Whitespace between and inside events is allowed, as JSON allows it.
		"  {\"type\": \"MODIFIED\",\n \"object\": {\"kind\":\"BatchSandbox\",\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"9\"}," +
		`"spec":{"template":{"spec":{"containers":[{"name":"sandbox","command":"not a list"}]}}}}}` +
		`{"type":"BOOKMARK","object":{"kind":"BatchSandbox","metadata":{"resourceVersion":"10","annotations":{"k8s.io/initial-events-end":"true"}}}}` +
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (900)","reason":"Expired","code":410}}`
	d := newBatchSandboxEvents(io.NopCloser(strings.NewReader(stream)), mem.NewStringLists())
	next := func() (watch.EventType, runtime.Object) {
		t.Helper()
		typ, obj, err := d.Decode()
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		return typ, obj
	}
	if typ, obj := next(); typ != watch.Added || obj.(*model.BatchSandbox).Name != "sbx-a" || len(obj.(*model.BatchSandbox).Endpoints) != 2 {
		t.Fatalf("first event %s %+v", typ, obj)
	}
	// The template, which the model does not read, is skipped even with a
	// wrong-typed command in it; the rest of the object is read.
	if typ, obj := next(); typ != watch.Modified || obj.(*model.BatchSandbox).ResourceVersion != "9" {
		t.Fatalf("second event %s %+v", typ, obj)
	}
	if typ, obj := next(); typ != watch.Bookmark || !obj.(*model.BatchSandbox).InitialEventsEnd || obj.(*model.BatchSandbox).ResourceVersion != "10" {
		t.Fatalf("bookmark %s %+v", typ, obj)
	}
	typ, obj := next()
	st, ok := obj.(*metav1.Status)
	if typ != watch.Error || !ok || !apierrors.IsResourceExpired(apierrors.FromObject(st)) || st.Message == "" {
		t.Fatalf("error event %s %T %+v", typ, obj, obj)
	}
	if _, _, err := d.Decode(); err != io.EOF {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}

	for name, bad := range map[string]string{
		"truncated":    `{"type":"ADDED","object":{"metadata":`,
		"unknown type": `{"type":"RENAMED","object":{}}`,
		"not JSON":     `<html>`,
	} {
		if _, _, err := newBatchSandboxEvents(io.NopCloser(strings.NewReader(bad)), nil).Decode(); err == nil || err == io.EOF {
			t.Errorf("%s: decoded without error (%v)", name, err)
		}
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

// Whatever a watch stream carries, the event decoder returns events or an
// error, never panics, and never returns an event without an object.
func FuzzBatchSandboxEvents(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":` + wireBSBX + `}`))
	f.Add([]byte(`{"type":"ERROR","object":{"kind":"Status","status":"Failure","code":410,"details":{"causes":[{"type":7}]}}}`))
	f.Add([]byte(`{"type":"BOOKMARK","object":{"metadata":{"annotations":{"k8s.io/initial-events-end":"true"}}}}{"type":"DELETED"}`))
	f.Add([]byte(`{"type":"ADDED","object":{"spec":{"template":{"spec":{"containers":[{"command":[1,{}]}]}}}}}  [`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newBatchSandboxEvents(io.NopCloser(bytes.NewReader(data)), mem.NewStringLists())
		for range 64 {
			typ, obj, err := d.Decode()
			if err != nil {
				return
			}
			if typ == "" || obj == nil {
				t.Fatalf("event %q with object %v and no error", typ, obj)
			}
		}
	})
}

// BenchmarkBatchSandboxWatchDecode reads a watch stream of 10,000 added
// BatchSandboxes (the start-up of a streamed initial list) with
// batchSandboxEvents, and, as the reference in the same run, with client-go's
// pipeline (JSON framer, envelope serializer, then the object decoder).
//
//	go test ./kube/ -run '^$' -bench BatchSandboxWatchDecode -benchmem
func BenchmarkBatchSandboxWatchDecode(b *testing.B) {
	var one bytes.Buffer
	if err := json.Compact(&one, []byte(wireBSBX)); err != nil {
		b.Fatal(err)
	}
	const n = 10000
	var stream bytes.Buffer
	for range n {
		stream.WriteString(`{"type":"ADDED","object":`)
		stream.Write(one.Bytes())
		stream.WriteString("}\n")
	}
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	info, ok := runtime.SerializerInfoForMediaType(serializer.NewCodecFactory(scheme).SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		b.Fatal("no JSON serializer")
	}
	decoders := map[string]func(io.ReadCloser) watch.Decoder{
		"sandscope": func(body io.ReadCloser) watch.Decoder { return newBatchSandboxEvents(body, nil) },
		"client-go": func(body io.ReadCloser) watch.Decoder {
			frames := info.StreamSerializer.Framer.NewFrameReader(body)
			return restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), batchSandboxCodec{})
		},
	}
	for _, name := range []string{"client-go", "sandscope"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(stream.Len()))
			cpu0 := processCPU()
			for range b.N {
				d := decoders[name](io.NopCloser(bytes.NewReader(stream.Bytes())))
				for i := range n {
					if _, obj, err := d.Decode(); err != nil || obj.(*model.BatchSandbox).Name != "sbx-a" {
						b.Fatalf("event %d: %v", i, err)
					}
				}
			}
			// The machine may be shared: CPU time says more than wall time.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// A stream decodes every event into one struct: an object already handed on
// keeps its own labels, task command, annotations' findings and deletion
// time when the next event fills the struct again, and the next object
// inherits none of them.
func TestBatchSandboxEventsDoNotShareState(t *testing.T) {
	stream := `{"type":"ADDED","object":{"kind":"BatchSandbox","metadata":{"name":"a","labels":{"team":"red","x":"1"},` +
		`"deletionTimestamp":"2026-01-02T03:04:05Z","annotations":{"sandbox.opensandbox.io/endpoints":"[\"10.0.0.1\"]"}},` +
		`"spec":{"taskTemplate":{"spec":{"process":{"command":["run","a"],"args":["--x"]}}}}}}` + "\n" +
		`{"type":"ADDED","object":{"kind":"BatchSandbox","metadata":{"name":"b","labels":{"team":"blue"}},` +
		`"spec":{"taskTemplate":{"spec":{"process":{"command":["other"]}}}}}}`
	d := newBatchSandboxEvents(io.NopCloser(strings.NewReader(stream)), mem.NewStringLists())
	_, first, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	_, second, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.(*model.BatchSandbox), second.(*model.BatchSandbox)
	if got := a.Labels.String(); got != "team=red,x=1" {
		t.Errorf("a's labels after the next event: %q", got)
	}
	if task := a.Task(); task == nil || !slices.Equal(task.Command, []string{"run", "a", "--x"}) {
		t.Errorf("a's task after the next event: %+v", task)
	}
	if len(a.Endpoints) != 1 || a.DeletionTimestamp == nil || !a.DeletionTimestamp.Time.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("a's endpoints %v, deletion %v after the next event", a.Endpoints, a.DeletionTimestamp)
	}
	if got := b.Labels.String(); got != "team=blue" || len(b.Endpoints) != 0 || b.DeletionTimestamp != nil {
		t.Errorf("b has labels %q, endpoints %v, deletion %v: want only its own", got, b.Endpoints, b.DeletionTimestamp)
	}
	if task := b.Task(); task == nil || !slices.Equal(task.Command, []string{"other"}) {
		t.Errorf("b's task: %+v", task)
	}
}

// wireJSON reads the wire types as encoding/json does where the server
// lets a value of the wrong type through (the task template, free-form in
// the CRD) or sends one (an ERROR event's status), and in the counters: it
// is skipped, an int with a fraction or out of range too, and the rest of
// the document read. encoding/json is the reference here, on the random
// documents of TestBatchSandboxCodecRandomObjects and on such mismatches.
func TestWireJSONSkipsWhatEncodingJSONSkips(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{"kind":"BatchSandbox","metadata":{"name":"a"},
		  "spec":{"replicas":3000000000,"taskTemplate":{"spec":{"process":{"command":[1,"b",null,{}],"args":{"a":1}}}}},
		  "status":{"phase":"Running","taskRunning":1e2,"taskSucceed":-4,"taskFailed":"3","taskPending":true,"taskUnknown":-2147483649,
		    "conditions":[7,{"type":"Ready","status":"True","lastTransitionTime":5},null,"x",{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T17:12:00Z"}]}}`,
		`{"kind":"BatchSandbox","metadata":{"name":"b","creationTimestamp":7},"spec":{"replicas":1.5,"taskTemplate":"x"},"status":7}`,
		`{"kind":"BatchSandbox","spec":{"replicas":null,"taskTemplate":{"spec":[1]}},"status":null}`,
		`{"kind":"BatchSandbox","spec":{"taskTemplate":{"spec":{"process":"x"}}},"status":{"taskFailed":2147483647}}`,
		`{"kind":"BatchSandbox","spec":{"taskTemplate":{"spec":{"process":{"command":"sh -c x","args":[]}}}}}`,
		`{"kind":"BatchSandboxList","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"c"}},{"spec":{"replicas":"2"}}]}`,
		`{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired","message":"gone","details":{"name":"x","retryAfterSeconds":1,"causes":[{"reason":"x","message":"y"}]}}`,
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		doc, err := json.Marshal(randomBatchSandbox(r, i))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	for _, doc := range docs {
		var want, got wireBatchSandbox
		var typeErr *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(doc), &want); err != nil && !errors.As(err, &typeErr) {
			t.Fatalf("encoding/json: %v\n%s", err, doc)
		}
		if err := jsonv2.Unmarshal([]byte(doc), &got, wireJSON); err != nil {
			t.Fatalf("wireJSON: %v\n%s", err, doc)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("wireJSON read\n%+v\nencoding/json read\n%+v\nfrom %s", got, want, doc)
		}
	}
}

// The types that skip a value of the wrong type skip every kind of JSON
// value, and read null as nothing.
func TestWireTypesSkipEveryMismatch(t *testing.T) {
	t.Parallel()
	types := []any{new(wireCount), new(wireArgv), new(wireTaskTemplate), new(wireTaskSpec), new(wireProcess),
		new(wireBatchStatus), new(wireCondition), new(isWord), new(wireTime)}
	for _, v := range types {
		for _, doc := range []string{`"x"`, `7`, `1.5`, `1e10`, `true`, `null`, `[1]`, `{"a":1}`} {
			if err := jsonv2.Unmarshal([]byte(doc), v, wireJSON); err != nil {
				t.Errorf("%T from %s: %v", v, doc, err)
			}
		}
	}
}

// processCPU is this process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The labels and annotations are read without a map but as a
// map[string]string is: the same entries (the last of a key, null as "",
// escapes undone, invalid UTF-8 as U+FFFD, a second object added to the
// first, null emptying them), and an error where the map has one.
func TestWireLabelsAndAnnotationsReadAsMaps(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{}`,
		`{"labels":{},"annotations":{}}`,
		`{"labels":null,"annotations":null}`,
		`{"labels":{"a":"1","b":"2","a":"3"},"annotations":{"sandbox.opensandbox.io/endpoints":"[\"10.0.0.1\"]","other":"x"}}`,
		`{"labels":{"a":null},"annotations":{"sandbox.opensandbox.io/endpoints":null,"k8s.io/initial-events-end":null}}`,
		`{"labels":{"a":"1"},"labels":{"b":"2"},"annotations":{"sandbox.opensandbox.io/alloc-status":"s"},"annotations":{"sandbox.opensandbox.io/alloc-released":"r"}}`,
		`{"labels":{"a":"1"},"labels":null,"annotations":{"sandbox.opensandbox.io/alloc-status":"s"},"annotations":null}`,
		`{"labels":{"a":"1"},"labels":null,"labels":{"c":"3"},"annotations":{"k8s.io/initial-events-end":"true"},"annotations":null,"annotations":{"x":"y"}}`,
		`{"labels":{"a\u0041":"\u00e9\ud800x","\"q\"":"\\"},"annotations":{"sandbox.opensandbox.io\/endpoints":"[\"10.0.0.\u0031\"]","k8s.io/initial-events-end":"tru\u0065"}}`,
		"{\"labels\":{\"a\xff\":\"b\xfe\"},\"annotations\":{\"sandbox.opensandbox.io/alloc-status\":\"\xff\"}}",
		`{"labels":{"long":"` + strings.Repeat("é", 100) + `"},"annotations":{"sandbox.opensandbox.io/endpoints":"` + strings.Repeat(`\u00e9`, 100) + `"}}`,
		`{"labels":{"a":7}}`,
		`{"labels":{"a":"1","b":true}}`,
		`{"labels":"x"}`,
		`{"labels":[]}`,
		`{"annotations":{"other":{}}}`,
		`{"annotations":{"other":[1]}}`,
		`{"annotations":{"sandbox.opensandbox.io/endpoints":1.5}}`,
		`{"annotations":7}`,
		`{"labels":{"a":"1"`,
		`{"annotations":{"a":`,
		`{"labels":{"a" "1"}}`,
	}
	for _, doc := range docs {
		checkStringObjectsAsMaps(t, []byte(doc))
	}
}

// checkStringObjectsAsMaps decodes the metadata doc with maps and with
// wireMeta and fails when they differ.
func checkStringObjectsAsMaps(t *testing.T, doc []byte) {
	t.Helper()
	var want struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	}
	wantErr := jsonv2.Unmarshal(doc, &want, wireJSON)
	var got wireMeta
	gotErr := jsonv2.Unmarshal(doc, &got, wireJSON)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: error %v, with maps %v", doc, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	labels := map[string]string{}
	start := 0
	for i := 0; i+1 < len(got.Labels.ends); i += 2 {
		k, v := got.Labels.ends[i], got.Labels.ends[i+1]
		labels[string(got.Labels.buf[start:k])] = string(got.Labels.buf[k:v])
		start = v
	}
	if len(want.Labels) == 0 {
		want.Labels = map[string]string{}
	}
	if !maps.Equal(labels, want.Labels) {
		t.Errorf("%q: labels %q, with a map %q", doc, labels, want.Labels)
	}
	if model.LabelsFrom(want.Labels).String() != got.Labels.toModel("").String() {
		t.Errorf("%q: model labels %q, from the map %q", doc, got.Labels.toModel("").String(), model.LabelsFrom(want.Labels).String())
	}
	for i, k := range engineAnnotations {
		v, ok := want.Annotations[k]
		if a := got.Annotations.engine[i]; a.set != ok || a.value != v {
			t.Errorf("%q: annotation %s %q (%v), with a map %q (%v)", doc, k, a.value, a.set, v, ok)
		}
	}
	if end := want.Annotations[metav1.InitialEventsAnnotationKey] == "true"; got.Annotations.initialEventsEnd != end {
		t.Errorf("%q: initial events end %v, with a map %v", doc, got.Annotations.initialEventsEnd, end)
	}
}

func FuzzWireLabelsAndAnnotations(f *testing.F) {
	f.Add([]byte(`{"labels":{"a":"1","a":null},"annotations":{"sandbox.opensandbox.io/endpoints":"[]"}}`))
	f.Add([]byte(`{"labels":{"a\u0041":"\ud800"},"labels":null,"annotations":{"k8s.io/initial-events-end":"true","x":7}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkStringObjectsAsMaps(t, doc)
	})
}

// A stream reuses its conditions' array from one event to the next: an
// event without conditions inherits none.
func TestBatchSandboxEventsConditions(t *testing.T) {
	stream := `{"type":"ADDED","object":{"metadata":{"name":"a","creationTimestamp":"2026-11-29T17:00:00Z"},` +
		`"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T18:00:00Z"}]}}}` + "\n" +
		`{"type":"ADDED","object":{"metadata":{"name":"b","creationTimestamp":"2026-11-29T17:00:00Z"},"status":{"phase":"Running"}}}` + "\n" +
		`{"type":"ADDED","object":{"metadata":{"name":"c","creationTimestamp":"2026-11-29T17:00:00Z"},` +
		`"status":{"conditions":[{"type":"Other","status":"True","lastTransitionTime":"2026-11-29T19:00:00Z"}]}}}`
	d := newBatchSandboxEvents(io.NopCloser(strings.NewReader(stream)), mem.NewStringLists())
	var got []*time.Time
	for range 3 {
		_, obj, err := d.Decode()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, obj.(*model.BatchSandbox).ReadySince())
	}
	if got[0] == nil || !got[0].Equal(time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)) || got[1] != nil || got[2] != nil {
		t.Errorf("ready since %v, want 18:00 for a only", got)
	}
}

// The codec decodes every object into a wire struct it reuses: an object
// already returned keeps its own labels, task command, annotations'
// findings and deletion time when the next call fills the struct again,
// and the next object (or list) inherits none of them.
func TestBatchSandboxCodecDoesNotShareState(t *testing.T) {
	first := `{"kind":"BatchSandbox","metadata":{"name":"a","creationTimestamp":"2026-11-29T17:00:00Z","labels":{"team":"red","x":"1"},` +
		`"deletionTimestamp":"2026-01-02T03:04:05Z","annotations":{"sandbox.opensandbox.io/endpoints":"[\"10.0.0.1\"]"}},` +
		`"spec":{"taskTemplate":{"spec":{"process":{"command":["run","a"],"args":["--x"]}}}},` +
		`"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T18:00:00Z"}]}}`
	second := `{"kind":"BatchSandbox","metadata":{"name":"b","labels":{"team":"blue"},"deletionTimestamp":"2027-01-02T03:04:05Z"},` +
		`"spec":{"taskTemplate":{"spec":{"process":{"command":["other"]}}}}}`
	list := `{"kind":"BatchSandboxList","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"c"}}]}`
	c := batchSandboxCodec{lists: mem.NewStringLists()}
	decode := func(doc string) runtime.Object {
		t.Helper()
		obj, _, err := c.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	a := decode(first).(*model.BatchSandbox)
	b := decode(second).(*model.BatchSandbox)
	l := decode(list).(*batchSandboxList)
	if got := a.Labels.String(); got != "team=red,x=1" {
		t.Errorf("a's labels after the next object: %q", got)
	}
	if task := a.Task(); task == nil || !slices.Equal(task.Command, []string{"run", "a", "--x"}) {
		t.Errorf("a's task after the next object: %+v", task)
	}
	if len(a.Endpoints) != 1 || a.DeletionTimestamp == nil || !a.DeletionTimestamp.Time.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || a.ReadySince() == nil {
		t.Errorf("a's endpoints %v, deletion %v, ready since %v after the next object", a.Endpoints, a.DeletionTimestamp, a.ReadySince())
	}
	if got := b.Labels.String(); got != "team=blue" || len(b.Endpoints) != 0 || b.ReadySince() != nil {
		t.Errorf("b has labels %q, endpoints %v, ready since %v: want only its own", got, b.Endpoints, b.ReadySince())
	}
	if task := b.Task(); task == nil || !slices.Equal(task.Command, []string{"other"}) {
		t.Errorf("b's task: %+v", task)
	}
	if len(l.Items) != 1 || l.Items[0].Name != "c" || l.Items[0].Labels.Len() != 0 || l.Items[0].DeletionTimestamp != nil || l.Items[0].Task() != nil {
		t.Errorf("list after two objects: %+v", l.Items)
	}
	if _, _, err := c.Decode([]byte(`{"kind":"BatchSandbox","metadata":{"labels":{"a":7}}}`), nil, nil); err == nil {
		t.Fatal("a label of the wrong type decoded")
	}
	if got := decode(`{"kind":"BatchSandbox","metadata":{"name":"d"}}`).(*model.BatchSandbox); got.Labels.Len() != 0 {
		t.Errorf("labels %q left by a failed decode", got.Labels.String())
	}
}
