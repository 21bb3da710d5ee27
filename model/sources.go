package model

// Pure converters from the objects the API server sends to the small forms
// the Fleet keeps. kube/ installs those of Pools and agent Sandboxes as
// informer transforms. BatchSandboxes reach the fleet through kube/'s JSON
// decoder instead (kube/codec/batchsandboxes.go); BatchSandboxFromUnstructured is
// the reference that decoder is tested against, and builds the fixtures of
// this package's tests.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/textsafe"
)

// Annotation and label names of OpenSandbox.
const (

// osv1.ContainerSandbox is the OpenSandbox main container; other engines use their first container.
// osv1.BootstrapPath is the engine bootstrap that starts execd before the user command.
)

// Limits on annotation values: anything bigger is malformed, not parsed.
const (
	maxAnnotationBytes   = 64 << 10
	maxAnnotationEntries = 1024
	maxAnnotationEntry   = 512
)

// slimMeta keeps the metadata the model reads from a custom resource.
func slimMeta(u *unstructured.Unstructured) ObjectMeta {
	m := ObjectMeta{
		Name:              u.GetName(),
		Namespace:         u.GetNamespace(),
		UID:               u.GetUID(),
		Labels:            labelsOf(u),
		DeletionTimestamp: u.GetDeletionTimestamp(),
	}
	m.SetCreated(u.GetCreationTimestamp().Time)
	m.SetFinalizers(u.GetFinalizers())
	return m
}

// labelsOf: an object's labels; those equal to its name share the string.
func labelsOf(u *unstructured.Unstructured) Labels {
	name := u.GetName()
	return LabelsFrom(u.GetLabels(), name)
}

// BatchSandboxFromUnstructured converts an OpenSandbox BatchSandbox. Malformed
// annotations become BAD_ANNOTATION notices, never panics. nil in, nil out.
// No production path uses it (see the top of this file).
func BatchSandboxFromUnstructured(u *unstructured.Unstructured) *BatchSandbox {
	if u == nil {
		return nil
	}
	obj := u.Object
	b := &BatchSandbox{ObjectMeta: slimMeta(u)}
	b.Replicas = int32(nestedInt(obj, "spec", "replicas"))
	b.SetPoolRef(nestedString(obj, "spec", "poolRef"))
	b.ExpireTime = nestedTime(obj, "spec", "expireTime")
	b.Phase = nestedString(obj, "status", "phase")
	_, hasTask := nestedField(obj, "spec", "taskTemplate")
	var taskCmd []string
	if hasTask {
		taskCmd = append(nestedArgv(obj, "spec", "taskTemplate", "spec", "process", "command"),
			nestedArgv(obj, "spec", "taskTemplate", "spec", "process", "args")...)
		if len(taskCmd) == 0 {
			taskCmd = nil
		}
	}
	b.SetTask(hasTask, taskCmd, TaskCounts{
		Running: int32(nestedInt(obj, "status", "taskRunning")), Succeed: int32(nestedInt(obj, "status", "taskSucceed")),
		Failed: int32(nestedInt(obj, "status", "taskFailed")), Pending: int32(nestedInt(obj, "status", "taskPending")),
		Unknown: int32(nestedInt(obj, "status", "taskUnknown")),
	})
	for _, c := range conditionsOf(obj) {
		if c.Type == "Ready" && c.Status == "True" {
			b.SetReady(c.LastTransitionTime)
		}
	}

	b.ReadAnnotations(u.GetAnnotations())
	return b
}

// ReadAnnotations fills what the engine records in annotations: the
// endpoints (slot i <-> pod index i) and, pooled, the allocated Pods minus
// the released ones. Malformed values become BAD_ANNOTATION notices.
func (b *BatchSandbox) ReadAnnotations(ann map[string]string) {
	var notices []Notice
	if v, ok := ann[osv1.AnnotationEndpoints]; ok {
		eps, problem := parseEndpoints(v)
		b.Endpoints = eps
		if problem != "" {
			notices = append(notices, BadAnnotation(osv1.AnnotationEndpoints, problem))
		}
	}
	var allocated, released []string
	if v, ok := ann[osv1.AnnotationAllocStatus]; ok {
		pods, problem := parseAllocPods(v)
		allocated = pods
		if problem != "" {
			notices = append(notices, BadAnnotation(osv1.AnnotationAllocStatus, problem))
		}
	}
	if v, ok := ann[osv1.AnnotationAllocReleased]; ok {
		pods, problem := parseAllocPods(v)
		released = pods
		if problem != "" {
			notices = append(notices, BadAnnotation(osv1.AnnotationAllocReleased, problem))
		}
	}
	if pods := minus(allocated, released); len(pods) > 0 {
		b.rareFields().allocatedPods = pods
	} else if b.rare != nil {
		b.rare.allocatedPods = nil
	}
	if notices != nil {
		r := b.rareFields()
		r.notices = append(r.notices, notices...)
	}
}

// AgentSandboxFromUnstructured converts a kubernetes-sigs agent-sandbox Sandbox
// read at the given served version. nil in, nil out.
func AgentSandboxFromUnstructured(u *unstructured.Unstructured, version string) *AgentSandbox {
	if u == nil {
		return nil
	}
	obj := u.Object
	s := &AgentSandbox{ObjectMeta: slimMeta(u), Version: version}
	s.OwnerReferences = ownerRefsOf(u.GetOwnerReferences())
	// v1beta1 pauses with operatingMode; v1alpha1's replicas 0 converts to it.
	s.Suspended = nestedString(obj, "spec", "operatingMode") == "Suspended"
	if _, ok := nestedField(obj, "spec", "replicas"); ok && nestedInt(obj, "spec", "replicas") == 0 {
		s.Suspended = true
	}
	s.Service = nestedString(obj, "status", "service") != "" || nestedString(obj, "status", "serviceFQDN") != ""
	s.ShutdownTime = nestedTime(obj, "spec", "shutdownTime")
	s.Selector = nestedString(obj, "status", "selector")
	if len(s.Selector) > maxAnnotationBytes {
		s.Notices = append(s.Notices, Notice{Code: CodeBadAnnotation, Severity: SeverityWarning,
			Message:  fmt.Sprintf("status.selector is %d bytes long; ignored", len(s.Selector)),
			Evidence: []Evidence{{Kind: Observed, Text: "status.selector longer than 64 KiB"}}})
		s.Selector = ""
	}
	s.PodIPs = nestedStrings(obj, "status", "podIPs")
	s.NodeName = nestedString(obj, "status", "nodeName")
	s.Conditions = conditionsOf(obj)
	return s
}

// PoolFromUnstructured converts an OpenSandbox Pool. nil in, nil out.
func PoolFromUnstructured(u *unstructured.Unstructured) *Pool {
	if u == nil {
		return nil
	}
	obj := u.Object
	return &Pool{
		ObjectMeta: slimMeta(u),
		Total:      int32(nestedInt(obj, "status", "total")),
		Allocated:  int32(nestedInt(obj, "status", "allocated")),
		Available:  int32(nestedInt(obj, "status", "available")),
		Revision:   nestedString(obj, "status", "revision"),
		BufferMin:  int32(nestedInt(obj, "spec", "capacitySpec", "bufferMin")),
		BufferMax:  int32(nestedInt(obj, "spec", "capacitySpec", "bufferMax")),
		PoolMin:    int32(nestedInt(obj, "spec", "capacitySpec", "poolMin")),
		PoolMax:    int32(nestedInt(obj, "spec", "capacitySpec", "poolMax")),
	}
}

// BadAnnotation is the BAD_ANNOTATION notice of a malformed annotation.
func BadAnnotation(name, problem string) Notice {
	return Notice{
		Code:     CodeBadAnnotation,
		Severity: SeverityWarning,
		Message:  fmt.Sprintf("annotation %s is malformed: %s", name, problem),
		Evidence: []Evidence{{Kind: Observed, Text: fmt.Sprintf("metadata.annotations[%q]: %s", name, problem)}},
	}
}

// parseEndpoints reads the endpoints annotation: a JSON array of strings.
// It returns what it could read and a description of what was wrong, if anything.
func parseEndpoints(v string) ([]string, string) {
	if len(v) > maxAnnotationBytes {
		return nil, fmt.Sprintf("value is %d bytes, more than the %d allowed; ignored", len(v), maxAnnotationBytes)
	}
	// The usual value, an array of strings, decodes in one pass with
	// encoding/json/v2, which reuses its decoder's state and reads the
	// string in place (encoding/json allocated both for every sandbox: two
	// fifths of what decoding a BatchSandbox allocated), from v's own bytes:
	// a reader and a streaming decoder around v cost two more objects per
	// sandbox, and Unmarshal only reads its input. Anything else, an
	// entry of another type or text v2 is stricter about (invalid UTF-8),
	// is read again with encoding/json, entry by entry, to say which entry.
	var entries []string
	var notString []bool // nil when every entry is a string
	if jsonv2.Unmarshal(unsafe.Slice(unsafe.StringData(v), len(v)), &entries) != nil {
		entries = nil
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(v), &raw); err != nil {
			return nil, fmt.Sprintf("not a JSON array of strings: %s", shortErr(err))
		}
		entries, notString = make([]string, len(raw)), make([]bool, len(raw))
		for i, r := range raw {
			if json.Unmarshal(r, &entries[i]) != nil {
				entries[i], notString[i] = "", true
			}
		}
	}
	if entries == nil {
		entries = []string{} // null reads as no endpoints, not as absent
	}
	var problems []string
	if len(entries) > maxAnnotationEntries {
		problems = append(problems, fmt.Sprintf("%d entries, only the first %d kept", len(entries), maxAnnotationEntries))
		entries = entries[:maxAnnotationEntries]
	}
	for i, s := range entries {
		switch {
		case notString != nil && notString[i]:
			problems = append(problems, fmt.Sprintf("entry %d is not a string", i))
		case len(s) > maxAnnotationEntry:
			problems = append(problems, fmt.Sprintf("entry %d is %d bytes long", i, len(s)))
			entries[i] = ""
		case s != "" && !isIP(s):
			// Dropped: the model keys IP indexes and history by these, and
			// the UI shows them; a tenant may write anything here. Quoted
			// sanitised, so the notice shows it without obeying it.
			problems = append(problems, fmt.Sprintf("entry %d %s is not an IP address; dropped", i, strconv.Quote(textsafe.Line(s))))
			entries[i] = ""
		}
	}
	return entries, joinProblems(problems)
}

// isIP: an address, without an IPv6 zone (a zone is free text).
func isIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

// parseAllocPods reads {"pods":["<pod>",...]}.
func parseAllocPods(v string) ([]string, string) {
	if len(v) > maxAnnotationBytes {
		return nil, fmt.Sprintf("value is %d bytes, more than the %d allowed; ignored", len(v), maxAnnotationBytes)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &doc); err != nil {
		return nil, fmt.Sprintf(`not a JSON object {"pods":[...]}: %s`, shortErr(err))
	}
	rawPods, ok := doc["pods"]
	if !ok {
		return nil, `no "pods" field`
	}
	if string(rawPods) == "null" {
		return nil, ""
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(rawPods, &raw); err != nil {
		return nil, `"pods" is not an array of strings`
	}
	var problems []string
	if len(raw) > maxAnnotationEntries {
		problems = append(problems, fmt.Sprintf("%d pods, only the first %d kept", len(raw), maxAnnotationEntries))
		raw = raw[:maxAnnotationEntries]
	}
	out := make([]string, 0, len(raw))
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			problems = append(problems, fmt.Sprintf("pods[%d] is not a string", i))
			continue
		}
		if s == "" || len(s) > 253 {
			problems = append(problems, fmt.Sprintf("pods[%d] is not a Pod name", i))
			continue
		}
		out = append(out, s)
	}
	return out, joinProblems(problems)
}

func joinProblems(ps []string) string {
	if len(ps) > 3 {
		ps = append(ps[:3], fmt.Sprintf("and %d more", len(ps)-3))
	}
	return strings.Join(ps, "; ")
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func minus(a, b []string) []string {
	if len(a) == 0 {
		return nil
	}
	if len(b) == 0 {
		return a
	}
	drop := make(map[string]struct{}, len(b))
	for _, s := range b {
		drop[s] = struct{}{}
	}
	out := make([]string, 0, len(a))
	for _, s := range a {
		if _, ok := drop[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// MaxConditions caps the conditions kept per object: a misbehaving
// controller cannot grow the cache without bound.
const MaxConditions = 64

func conditionsOf(obj map[string]interface{}) []Condition {
	cs, ok := nestedSlice(obj, "status", "conditions")
	if !ok || len(cs) == 0 {
		return nil
	}
	if len(cs) > MaxConditions {
		cs = cs[:MaxConditions]
	}
	out := make([]Condition, 0, len(cs))
	for _, c := range cs {
		m, ok := c.(map[string]interface{})
		if !ok {
			continue
		}
		cond := Condition{Type: nestedString(m, "type"), Status: nestedString(m, "status"),
			Reason: nestedString(m, "reason"), Message: nestedString(m, "message")}
		if t := nestedTime(m, "lastTransitionTime"); t != nil {
			cond.LastTransitionTime = *t
		}
		out = append(out, cond)
	}
	return out
}

// The nested* helpers read an unstructured field and return the zero value
// for a missing field or one of the wrong type (the API server validates the
// schema; sandscope tolerates whatever arrives).

// nestedField is apimachinery's NestedFieldNoCopy without its error: a
// field of the wrong type reads as absent, never as a failed conversion.
func nestedField(obj map[string]interface{}, fields ...string) (interface{}, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(obj, fields...)
	return v, ok && err == nil
}

func nestedString(obj map[string]interface{}, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj, fields...)
	return s
}

// nestedInt reads a number however the object was decoded: int64 from
// apimachinery's JSON, float64 from encoding/json, json.Number, ...
// (unstructured.NestedInt64 accepts int64 only).
func nestedInt(obj map[string]interface{}, fields ...string) int64 {
	v, _ := nestedField(obj, fields...)
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case int:
		return int64(n)
	case float64:
		if n > -1<<31 && n < 1<<31 {
			return int64(n)
		}
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

func nestedSlice(obj map[string]interface{}, fields ...string) ([]interface{}, bool) {
	v, _ := nestedField(obj, fields...)
	s, ok := v.([]interface{})
	return s, ok
}

func nestedStrings(obj map[string]interface{}, fields ...string) []string {
	s, ok := nestedSlice(obj, fields...)
	if !ok || len(s) == 0 {
		return nil
	}
	out := make([]string, 0, len(s))
	for _, e := range s {
		if str, ok := e.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// nestedArgv reads a list of strings as encoding/json reads it into a
// []string (kube/'s wire decoder): an element of another type is kept as
// "", so both decoders of a free-form field agree.
func nestedArgv(obj map[string]interface{}, fields ...string) []string {
	s, ok := nestedSlice(obj, fields...)
	if !ok || len(s) == 0 {
		return nil
	}
	out := make([]string, len(s))
	for i, e := range s {
		out[i], _ = e.(string)
	}
	return out
}

func nestedTime(obj map[string]interface{}, fields ...string) *time.Time {
	return ParseTime(nestedString(obj, fields...))
}

// ParseTime reads an RFC 3339 time of an engine's object (a BatchSandbox's
// expireTime) as both decoders, this package's and kube/'s wire decoder,
// read it: nil when empty or malformed.
func ParseTime(s string) *time.Time {
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil
	}
	return &t
}
