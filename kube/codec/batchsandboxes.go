package codec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// BatchSandboxes are custom resources, so the server sends them as JSON only,
// and a dynamic informer turns each one into nested maps (the whole Pod
// template and managedFields included) before the transform keeps the few
// fields the model reads. At 20,000 sandboxes that decode was the largest
// single cost of start-up and the maps the largest garbage. This file reads
// them the way generated typed clients read custom resources, through a
// RESTClient, but decodes each object straight into model.BatchSandbox: the
// fields the model reads are filled and everything else is skipped without
// being allocated.

// NewBatchSandboxListWatch lists and watches BatchSandboxes in namespace
// ("" = all) as *model.BatchSandbox.
func NewBatchSandboxListWatch(cfg *rest.Config, namespace string, lists *mem.StringLists) (cache.ListerWatcher, error) {
	rc, err := newBatchSandboxClient(cfg, lists)
	if err != nil {
		return nil, err
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &batchSandboxList{}
			err := rc.Get().Namespace(namespace).Resource(osv1.BatchSandboxes.Resource).
				VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(list)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			body, err := rc.Get().Namespace(namespace).Resource(osv1.BatchSandboxes.Resource).
				VersionedParams(&opts, metav1.ParameterCodec).Stream(ctx)
			if err != nil {
				return nil, err
			}
			return newWireWatch(ctx, newBatchSandboxEvents(body, lists)), nil
		},
	}
	return lw, nil
}

// newBatchSandboxClient is a RESTClient for the BatchSandbox group version
// that speaks JSON and decodes with batchSandboxCodec.
func newBatchSandboxClient(cfg *rest.Config, lists *mem.StringLists) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	gv := osv1.BatchSandboxes.GroupVersion()
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	// Commands and finalizers are shared through lists (nil: copied).
	c.NegotiatedSerializer = readOnlySerializers{runtime.SerializerInfo{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       batchSandboxCodec{lists: lists},
	}}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("building the BatchSandbox client: %w", err)
	}
	return rc, nil
}

// batchSandboxList is a BatchSandboxList as the reflector needs it.
type batchSandboxList = modelList[*model.BatchSandbox]

// batchSandboxEvents decodes a JSON watch stream of BatchSandboxes in one
// pass per event. client-go's path frames the stream with a JSON scan, then
// decodes the envelope (validating it whole and copying the object out), then
// the object (validating it again): six passes over every byte, the largest
// CPU cost of reading the fleet at start-up. A json.Decoder reading the
// envelope with the object typed does one scan and one decode, and skips
// what the model does not read without allocating it.
type batchSandboxEvents struct {
	body  io.ReadCloser
	dec   *jsontext.Decoder
	lists *mem.StringLists
	ev    wireWatchEvent // one for the stream: see Decode
}

func newBatchSandboxEvents(body io.ReadCloser, lists *mem.StringLists) *batchSandboxEvents {
	return &batchSandboxEvents{body: body, dec: jsontext.NewDecoder(body, wireJSON), lists: lists}
}

// wireWatchEvent is a watch event whose object is a BatchSandbox, a bookmark
// (a BatchSandbox with only metadata) or, for ERROR, a Status.
type wireWatchEvent struct {
	Type   string           `json:"type"`
	Object wireBatchSandbox `json:"object"`
}

// Decode returns the next event. As batchSandboxCodec does, it skips a value
// of the wrong type where the server lets one through (wireJSON) and fails
// on malformed JSON, a value of the wrong type where the server types it,
// or an event type it does not know.
func (d *batchSandboxEvents) Decode() (watch.EventType, runtime.Object, error) {
	// The stream decodes every event into the same struct, emptied first
	// (see reset): a fresh struct each time was a heap allocation of half a
	// kilobyte per event, and its buffers a few more.
	ev := &d.ev
	ev.Object.reset()
	*ev = wireWatchEvent{Object: ev.Object}
	if err := json.UnmarshalDecode(d.dec, ev, wireJSON); err != nil {
		return "", nil, err // io.EOF included: the stream watcher ends quietly on it
	}
	switch t := watch.EventType(ev.Type); t {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		return t, ev.Object.toModel(d.lists), nil
	case watch.Error:
		return t, ev.Object.toStatus(), nil
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", ev.Type)
	}
}

func (d *batchSandboxEvents) Close() { _ = d.body.Close() }

// SlimBatchSandbox is the BatchSandbox watch's transform: it drops the
// resourceVersion the reflector has read, and nothing else will. The object
// is the decoder's own, so clearing it in place is safe.
func SlimBatchSandbox(obj any) (any, error) {
	if b, ok := obj.(*model.BatchSandbox); ok {
		b.ResourceVersion = ""
	}
	return obj, nil
}

// batchSandboxCodec decodes a BatchSandbox, a BatchSandboxList or a Status.
// It only reads: the client never sends a body.
// Commands and finalizers are shared through lists (nil: copied).
type batchSandboxCodec struct{ lists *mem.StringLists }

func (batchSandboxCodec) Identifier() runtime.Identifier { return "sandscope-batchsandbox-json" }

func (batchSandboxCodec) Encode(runtime.Object, io.Writer) error {
	return errors.New("the BatchSandbox client only reads")
}

// Decode fills into when it is a *batchSandboxList, and otherwise returns a
// new *model.BatchSandbox, or a *metav1.Status when the server sent one (an
// error response, a watch ERROR event). A value of the wrong type where the
// server lets one through is skipped like the dynamic path skips it (the
// task template is free-form in the CRD, so its command may be anything;
// wireJSON); malformed JSON, or the wrong type where the server types the
// field, is an error.
func (c batchSandboxCodec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	// The wire struct is reused from one call to the next, as a stream
	// reuses its own (see batchSandboxEvents.Decode): a new one for each
	// object was half a kilobyte of garbage, its label buffers more.
	doc := wireDocs.Get().(*wireBatchSandbox)
	defer func() {
		doc.reset()
		wireDocs.Put(doc)
	}()
	if err := json.Unmarshal(data, doc, wireJSON); err != nil {
		return nil, nil, fmt.Errorf("decoding a BatchSandbox: %w", err)
	}
	gvk := schema.FromAPIVersionAndKind(doc.APIVersion, doc.Kind)
	switch {
	case doc.Kind == "Status":
		status := &metav1.Status{}
		if err := json.Unmarshal(data, status, wireJSON); err != nil {
			return nil, nil, fmt.Errorf("decoding a Status: %w", err)
		}
		return status, &gvk, nil
	case doc.Items != nil || doc.Kind == "BatchSandboxList":
		list, ok := into.(*batchSandboxList)
		if !ok {
			list = &batchSandboxList{}
		}
		list.TypeMeta = metav1.TypeMeta{APIVersion: doc.APIVersion, Kind: doc.Kind}
		list.ListMeta = metav1.ListMeta{ResourceVersion: doc.Metadata.ResourceVersion,
			Continue: doc.Metadata.Continue, RemainingItemCount: doc.Metadata.RemainingItemCount}
		list.Items = make([]*model.BatchSandbox, len(doc.Items))
		for i := range doc.Items {
			list.Items[i] = doc.Items[i].toModel(c.lists)
		}
		return list, &gvk, nil
	}
	return doc.toModel(c.lists), &gvk, nil
}

// wireDocs are the wire structs batchSandboxCodec decodes into, empty.
var wireDocs = sync.Pool{New: func() any { return new(wireBatchSandbox) }}

// wireJSON is how BatchSandboxes are read: encoding/json/v2 (its module
// aliases the standard library's from Go 1.27), which skips what the model
// does not read without allocating it, reuses its decoder's state, and
// decodes a stream's events straight from the body. With the semantics of
// encoding/json where the dynamic path had them too: in the parts the
// server does not type (the task template, free-form in the CRD), the
// status (an ERROR event's is a string) and the counters, a value of the
// wrong type is skipped and the rest of the object still read (the types
// with an UnmarshalJSONFrom below); a repeated name is not an error, and
// invalid UTF-8 reads as U+FFFD.
//
// Not through the v1 option ReportErrorsWithLegacySemantics, which skips a
// value of the wrong type anywhere but first validates each event whole, a
// second pass over every byte before the decoding one: at 50,000 sandboxes
// 14 % of the client's CPU profile to a synced table. Without it the decode
// stops at its first error, so every error is one. Nor through an
// unmarshaler option for every type: its lookup for every value decoded
// cost about what the second pass did.
var wireJSON = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// objectOnly decodes an object into v and skips any other value, leaving v
// as it is (v must not be the type whose method calls objectOnly).
func objectOnly(dec *jsontext.Decoder, v any) error {
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	return json.UnmarshalDecode(dec, v)
}

// wireCount is a count the model reads: a whole number in int32's range, as
// encoding/json reads one; anything else (1.5, 1e10, "two") is skipped.
type wireCount int32

func (c *wireCount) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '0' {
		return dec.SkipValue()
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if n, err := strconv.ParseInt(string(raw), 10, 32); err == nil {
		*c = wireCount(n)
	}
	return nil
}

// wireArgv is a command or its arguments: a list of strings, where an
// element of the wrong type reads as "" and a list of the wrong type is
// skipped, as encoding/json reads them.
type wireArgv []string

func (a *wireArgv) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '[' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	argv := []string{}
	for {
		switch dec.PeekKind() {
		case ']':
			_, err := dec.ReadToken()
			*a = argv
			return err
		case '"':
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			argv = append(argv, tok.String())
		default: // the wrong type, or an error SkipValue returns
			if err := dec.SkipValue(); err != nil {
				return err
			}
			argv = append(argv, "")
		}
	}
}

// wireBatchSandbox is the part of a BatchSandbox (or of a list of them) the
// model reads. encoding/json skips every other field without allocating it.
type wireBatchSandbox struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Metadata   wireMeta           `json:"metadata"`
	Spec       wireBatchSpec      `json:"spec"`
	Status     wireBatchStatus    `json:"status"`
	Items      []wireBatchSandbox `json:"items"` // a BatchSandboxList
	// A Status (an ERROR watch event) has these beside its "status" string,
	// which does not fit Status above and is skipped.
	Code    int32                 `json:"code"`
	Reason  metav1.StatusReason   `json:"reason"`
	Message string                `json:"message"`
	Details *metav1.StatusDetails `json:"details"`
}

// reset empties w for the next object, all but the buffers of its labels,
// annotations and conditions, which are kept for the next ones to fill
// (toModel copies what it keeps of them). The rest is zeroed, not reused:
// a decode into a non-nil pointer or slice would write into what a model
// object already holds (a deletion time, a list's items).
func (w *wireBatchSandbox) reset() {
	labels, annotations := w.Metadata.Labels.emptied(), w.Metadata.Annotations.emptied()
	conditions := w.Status.Conditions[:0]
	*w = wireBatchSandbox{}
	w.Metadata.Labels, w.Metadata.Annotations = labels, annotations
	w.Status.Conditions = conditions
}

// toStatus reads a Status sent as an ERROR watch event.
func (w *wireBatchSandbox) toStatus() *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: w.APIVersion, Kind: w.Kind}, Status: metav1.StatusFailure,
		Code: w.Code, Reason: w.Reason, Message: w.Message, Details: w.Details}
}

type wireMeta struct {
	Name              string          `json:"name"`
	Namespace         string          `json:"namespace"`
	UID               string          `json:"uid"`
	ResourceVersion   string          `json:"resourceVersion"`
	Generation        int64           `json:"generation"`
	Labels            wireLabels      `json:"labels"`      // read without a map
	Annotations       wireAnnotations `json:"annotations"` // only those the model reads
	CreationTimestamp wireMetaTime    `json:"creationTimestamp"`
	DeletionTimestamp *wireMetaTime   `json:"deletionTimestamp"`
	Finalizers        []string        `json:"finalizers"`
	ManagedFields     skipped         `json:"managedFields"`
	// A list's metadata.
	Continue           string `json:"continue"`
	RemainingItemCount *int64 `json:"remainingItemCount"`
}

// skipped is a large part of the object the model does not read (the
// managedFields, the Pod template: three quarters of a BatchSandbox's
// bytes), named so that it is skipped as one value: the decoder skips an
// unknown member token by token, which at 150,000 sandboxes was 2.24 s of
// the BatchSandboxes' 5.16 s in the client's CPU profile.
type skipped struct{}

func (skipped) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	_, err := dec.ReadValue()
	return err
}

type wireBatchSpec struct {
	Replicas     wireCount         `json:"replicas"`
	PoolRef      string            `json:"poolRef"`
	ExpireTime   string            `json:"expireTime"`
	TaskTemplate *wireTaskTemplate `json:"taskTemplate"`
	Template     skipped           `json:"template"`
}

// wireTaskTemplate is spec.taskTemplate: only the process it runs.
type wireTaskTemplate struct {
	Spec wireTaskSpec `json:"spec"`
}

func (t *wireTaskTemplate) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain wireTaskTemplate
	return objectOnly(dec, (*plain)(t))
}

type wireTaskSpec struct {
	Process wireProcess `json:"process"`
}

func (s *wireTaskSpec) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain wireTaskSpec
	return objectOnly(dec, (*plain)(s))
}

type wireProcess struct {
	Command wireArgv `json:"command"`
	Args    wireArgv `json:"args"`
}

func (p *wireProcess) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain wireProcess
	return objectOnly(dec, (*plain)(p))
}

type wireBatchStatus struct {
	Phase string `json:"phase"`
	// The task counters: taskFailed > 0 is a finding.
	TaskRunning wireCount `json:"taskRunning"`
	TaskSucceed wireCount `json:"taskSucceed"`
	TaskFailed  wireCount `json:"taskFailed"`
	TaskPending wireCount `json:"taskPending"`
	TaskUnknown wireCount `json:"taskUnknown"`
	// Of the conditions only Ready's transition time is read (a late one is
	// evidence of a re-created Pod); the replica counts are skipped.
	Conditions []wireCondition `json:"conditions"`
}

// An ERROR event's object is a Status, whose "status" is a string.
func (s *wireBatchStatus) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain wireBatchStatus
	return objectOnly(dec, (*plain)(s))
}

// wireCondition reads a condition without allocating its strings: only
// whether it is Ready=True, and when it last changed.
type wireCondition struct {
	Type               isWord   `json:"type"`
	Status             isWord   `json:"status"`
	LastTransitionTime wireTime `json:"lastTransitionTime"`
}

func (c *wireCondition) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type plain wireCondition
	return objectOnly(dec, (*plain)(c))
}

// isWord keeps the JSON string it was given only as "is it Ready" / "is it
// True": a comparison of the raw bytes allocates nothing.
type isWord struct{ isReady, isTrue bool }

func (w *isWord) UnmarshalJSON(b []byte) error {
	w.isReady, w.isTrue = string(b) == `"Ready"`, string(b) == `"True"`
	return nil
}

// wireTime is an RFC 3339 time; a malformed one reads as zero, as the
// dynamic path's nestedTime reads it.
type wireTime struct{ time.Time }

func (t *wireTime) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' {
		return nil
	}
	t.Time, _ = time.Parse(time.RFC3339, string(b[1:len(b)-1]))
	return nil
}

// wireMetaTime reads a metav1.Time as metav1.Time.UnmarshalJSON does (RFC
// 3339, in local time; null is zero), without first decoding the JSON
// string through json.Unmarshal, which allocated a decoder's state for
// every timestamp: a timestamp has nothing to unescape.
type wireMetaTime struct{ metav1.Time }

func (t *wireMetaTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = metav1.Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil // the wrong type, skipped as encoding/json skips it
	}
	pt, err := time.Parse(time.RFC3339, string(b[1:len(b)-1]))
	if err != nil {
		return err
	}
	t.Time = metav1.NewTime(pt.Local())
	return nil
}

// metaTime is the time t holds, nil when t is.
func (t *wireMetaTime) metaTime() *metav1.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

// toModel converts to the slim model form, parsing the engine's annotations.
// Annotations are not kept, except the one that marks the end of a streamed
// initial list on a bookmark: the reflector reads it from the object.
func (w *wireBatchSandbox) toModel(lists *mem.StringLists) *model.BatchSandbox {
	m := &w.Metadata
	b := &model.BatchSandbox{
		ObjectMeta: model.ObjectMeta{
			Name: m.Name, Namespace: mem.Intern(m.Namespace), UID: types.UID(m.UID),
			DeletionTimestamp: m.DeletionTimestamp.metaTime(), Labels: m.Labels.toModel(m.Name),
		},
		ResourceVersion: m.ResourceVersion,
		Replicas:        int32(w.Spec.Replicas),
		ExpireTime:      model.ParseTime(w.Spec.ExpireTime),
		Phase:           mem.Intern(w.Status.Phase),
	}
	b.SetCreated(m.CreationTimestamp.Time.Time)
	b.SetSharedFinalizers(lists.ShareRef(m.Finalizers))
	b.SetPoolRef(w.Spec.PoolRef)
	var taskCmd []string
	if t := w.Spec.TaskTemplate; t != nil {
		taskCmd = append(t.Spec.Process.Command, t.Spec.Process.Args...)
		if len(taskCmd) == 0 {
			taskCmd = nil
		}
	}
	st := &w.Status
	b.SetTask(w.Spec.TaskTemplate != nil, taskCmd, model.TaskCounts{Running: int32(st.TaskRunning), Succeed: int32(st.TaskSucceed),
		Failed: int32(st.TaskFailed), Pending: int32(st.TaskPending), Unknown: int32(st.TaskUnknown)})
	for i, c := range st.Conditions {
		if i >= model.MaxConditions {
			break
		}
		if c.Type.isReady && c.Status.isTrue {
			b.SetReady(c.LastTransitionTime.Time)
		}
	}
	ann := &w.Metadata.Annotations
	b.InitialEventsEnd = ann.initialEventsEnd
	engine := make(map[string]string, len(ann.engine)) // on the stack: ReadAnnotations only reads it
	for i, a := range ann.engine {
		if a.set {
			engine[engineAnnotations[i]] = a.value
		}
	}
	b.ReadAnnotations(engine)
	return b
}

// Labels and annotations are read as a map[string]string is (a later entry
// replaces an earlier one of its key, null reads as "", a second object
// adds to the first, null empties them; a value of another type is the
// error the map gives), without the map: the map and its strings were
// garbage of every BatchSandbox decoded, toModel keeps the labels in
// model.Labels' own form and reads only the engine's annotations.

// wireLabels holds the labels, unquoted, until toModel builds model.Labels
// of them: keys and values back to back in buf, ends[2i] where key i ends
// and ends[2i+1] where its value does.
type wireLabels struct {
	buf  []byte
	ends []int
}

func (l *wireLabels) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readStringObject(dec, func() { *l = l.emptied() }, func(key jsontext.Value) error {
		if l.ends == nil {
			// Room for the usual labels at once: grown from nothing, the
			// first buffers would be garbage, the smallest of them in the
			// blocks the allocator packs the fleet's short strings into.
			l.buf, l.ends = make([]byte, 0, 256), make([]int, 0, 16)
		}
		l.buf = appendUnquoted(l.buf, key)
		l.ends = append(l.ends, len(l.buf))
		var err error
		if l.buf, err = appendStringValue(dec, l.buf); err != nil {
			return err
		}
		l.ends = append(l.ends, len(l.buf))
		return nil
	})
}

// UnmarshalJSON reads the labels for encoding/json as for encoding/json/v2.
func (l *wireLabels) UnmarshalJSON(b []byte) error {
	return l.UnmarshalJSONFrom(jsontext.NewDecoder(bytes.NewReader(b), wireJSON))
}

// emptied is l without labels, its buffers kept for the next ones.
func (l *wireLabels) emptied() wireLabels { return wireLabels{buf: l.buf[:0], ends: l.ends[:0]} }

// toModel is the labels as model.Labels, a value equal to name sharing
// name's string.
func (l *wireLabels) toModel(name string) model.Labels {
	if len(l.ends) == 0 {
		return model.Labels{}
	}
	var buf [16]model.LabelPair // scratch: an object has a handful of labels
	pairs := buf[:0]
	start := 0
	for i := 0; i+1 < len(l.ends); i += 2 {
		k, v := l.ends[i], l.ends[i+1]
		// Views of buf: LabelsFromPairs copies what it keeps.
		pairs = append(pairs, model.LabelPair{Key: viewString(l.buf[start:k]), Value: viewString(l.buf[k:v])})
		start = v
	}
	return model.LabelsFromPairs(pairs, name)
}

// engineAnnotations are the annotations model.BatchSandbox.ReadAnnotations
// reads, the only ones kept of the object's.
var engineAnnotations = [...]string{osv1.AnnotationEndpoints, osv1.AnnotationAllocStatus, osv1.AnnotationAllocReleased}

// wireAnnotations holds what toModel reads of the annotations: the engine's
// and whether the one that ends a streamed initial list says "true".
type wireAnnotations struct {
	engine [len(engineAnnotations)]struct {
		value string
		set   bool
	}
	initialEventsEnd bool
	scratch          []byte // a key or value being read
}

// initialEventsEnd is wireAnnotations.key's answer for that annotation.
const initialEventsEnd = len(engineAnnotations)

func (a *wireAnnotations) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readStringObject(dec, func() { *a = a.emptied() }, func(key jsontext.Value) error {
		i := a.key(key)
		if i < 0 { // not kept: only its type is checked
			return skipStringValue(dec)
		}
		var err error
		if a.scratch, err = appendStringValue(dec, a.scratch[:0]); err != nil {
			return err
		}
		if i == initialEventsEnd {
			a.initialEventsEnd = string(a.scratch) == "true"
		} else {
			a.engine[i].value, a.engine[i].set = string(a.scratch), true
		}
		return nil
	})
}

// key says which kept annotation the JSON string raw names: an index of
// engineAnnotations, initialEventsEnd, or -1 for any other.
func (a *wireAnnotations) key(raw []byte) int {
	k := raw[1 : len(raw)-1]
	if bytes.IndexByte(k, '\\') >= 0 {
		a.scratch = appendUnquoted(a.scratch[:0], raw)
		k = a.scratch
	}
	if string(k) == metav1.InitialEventsAnnotationKey {
		return initialEventsEnd
	}
	for i, name := range engineAnnotations {
		if string(k) == name {
			return i
		}
	}
	return -1
}

// UnmarshalJSON reads the annotations for encoding/json as for
// encoding/json/v2.
func (a *wireAnnotations) UnmarshalJSON(b []byte) error {
	return a.UnmarshalJSONFrom(jsontext.NewDecoder(bytes.NewReader(b), wireJSON))
}

// emptied is a without annotations, its scratch kept.
func (a *wireAnnotations) emptied() wireAnnotations { return wireAnnotations{scratch: a.scratch[:0]} }

// readStringObject reads a JSON object of strings as a map[string]string
// is read: a null calls null, an object calls member with each key in turn
// (member reads the key's value, and must use key first: it is the
// decoder's buffer), and any other value is the error the map gives.
func readStringObject(dec *jsontext.Decoder, null func(), member func(key jsontext.Value) error) error {
	switch dec.PeekKind() {
	case 'n':
		if err := dec.SkipValue(); err != nil {
			return err
		}
		null()
		return nil
	case '{':
	default:
		var m map[string]string
		return json.UnmarshalDecode(dec, &m)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		key, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// appendStringValue reads a string map's value and appends its text to
// dst: a JSON string unquoted as the decoder unquotes one, null as "". Any
// other value is the error the map gives.
func appendStringValue(dec *jsontext.Decoder, dst []byte) ([]byte, error) {
	switch dec.PeekKind() {
	case '"':
		raw, err := dec.ReadValue()
		if err != nil {
			return dst, err
		}
		return appendUnquoted(dst, raw), nil
	case 'n':
		return dst, dec.SkipValue()
	}
	return dst, stringValueError(dec)
}

// skipStringValue is appendStringValue for a value not kept.
func skipStringValue(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"', 'n':
		return dec.SkipValue()
	}
	return stringValueError(dec)
}

// stringValueError is the error a string map gives for the next value,
// one of another type than string (or an error reading it).
func stringValueError(dec *jsontext.Decoder) error {
	var s string
	if err := json.UnmarshalDecode(dec, &s); err != nil {
		return err
	}
	return errors.New("a JSON string read as not one") // not reached: the caller read strings
}

// appendUnquoted appends the text of the JSON string raw to dst as the
// decoder reads it into a Go string: escapes undone, invalid UTF-8 as
// U+FFFD.
func appendUnquoted(dst, raw []byte) []byte {
	if s := raw[1 : len(raw)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return append(dst, s...)
	}
	dst, _ = jsontext.AppendUnquote(dst, raw) // the error says raw had invalid UTF-8, now U+FFFD
	return dst
}
