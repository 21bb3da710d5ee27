package model

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/labels"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Short values (tenants, apps, hashes) repeat across the fleet and are kept
// once; a long one not repeated within its object keeps its own copy.
func TestLabelsFromInternsShortValues(t *testing.T) {
	id := "5b0c29f4-61a9-4c64-9a7e-2f3f31e0c8aa" // longer than maxInternedLabelValue
	a := LabelsFrom(map[string]string{"tenant": strings.Clone("team-agents"), "id": strings.Clone(id)})
	b := LabelsFrom(map[string]string{"tenant": strings.Clone("team-agents"), "id": strings.Clone(id)})
	ta, _ := a.Lookup("tenant")
	tb, _ := b.Lookup("tenant")
	if unsafe.StringData(ta) != unsafe.StringData(tb) {
		t.Error("two objects keep separate copies of the short value team-agents")
	}
	ia, _ := a.Lookup("id")
	ib, _ := b.Lookup("id")
	if ia != id || ib != id {
		t.Fatalf("id labels %q, %q; want %q", ia, ib, id)
	}
	if unsafe.StringData(ia) == unsafe.StringData(ib) {
		t.Error("a long value was interned across objects")
	}
}

// Equal label values, and a value equal to the owner's name, share one string.
func TestLabelsFromSharesEqualValues(t *testing.T) {
	owner := strings.Clone("0033f9d5-118c-4d5e-973f-be1e3dc471df")
	m := map[string]string{
		osv1.LabelBatchSandboxName: strings.Clone(owner),
		osv1.LabelSandboxID:        strings.Clone(owner),
		"tenant":                   "team-agents",
	}
	got := LabelsFrom(m, owner)
	if !maps.Equal(got.Map(), m) {
		t.Fatalf("labels changed: %v", got)
	}
	for _, k := range []string{osv1.LabelBatchSandboxName, osv1.LabelSandboxID} {
		v, _ := got.Lookup(k)
		if unsafe.StringData(v) != unsafe.StringData(owner) {
			t.Errorf("label %s keeps its own copy of the owner's name", k)
		}
	}
	if !LabelsFrom(nil).IsZero() || LabelsFrom(nil).Map() != nil {
		t.Error("nil labels are not empty")
	}
}

func TestLabelsLookup(t *testing.T) {
	m := map[string]string{"a": "1", "b.io/x": "", "c": "3", "zz": "last", "app": "rl"}
	l := LabelsFrom(m)
	if l.Len() != len(m) {
		t.Fatalf("Len %d, want %d", l.Len(), len(m))
	}
	for k, want := range m {
		if v, ok := l.Lookup(k); !ok || v != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q, true", k, v, ok, want)
		}
	}
	for _, k := range []string{"", "0", "b", "b.io/y", "zzz", "ap"} {
		if l.Has(k) {
			t.Errorf("Has(%q) for a label that is not set", k)
		}
	}
	var keys []string
	for k := range l.All() {
		keys = append(keys, k)
	}
	if got := strings.Join(keys, " "); got != "a app b.io/x c zz" {
		t.Errorf("All yields %q, want keys in order", got)
	}
	if got := l.String(); got != "a=1,app=rl,b.io/x=,c=3,zz=last" {
		t.Errorf("String %q", got)
	}
}

// A selector reads Labels directly, as it reads a labels.Set.
func TestLabelsMatchSelectors(t *testing.T) {
	m := map[string]string{"app": "rl", "tier": "gpu"}
	l := LabelsFrom(m)
	for _, expr := range []string{"app=rl", "app in (rl,web)", "tier", "!missing", "app=rl,tier!=cpu", "app=web", "missing", "tier notin (gpu)"} {
		sel, err := labels.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sel.Matches(l), sel.Matches(labels.Set(m)); got != want {
			t.Errorf("%q matches Labels: %v, labels.Set: %v", expr, got, want)
		}
	}
}

// JSON output keeps the API's shape: an object, left out when empty.
func TestLabelsJSON(t *testing.T) {
	type wrap struct {
		Labels Labels `json:"labels,omitzero"`
	}
	data, err := json.Marshal(wrap{Labels: LabelsFrom(map[string]string{"b": "2", "a": "1"})})
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"labels":{"a":"1","b":"2"}}` {
		t.Errorf("marshal: %s", data)
	}
	var back wrap
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Labels.String() != "a=1,b=2" {
		t.Errorf("round trip: %v", back.Labels)
	}
	if data, _ := json.Marshal(wrap{}); string(data) != `{}` {
		t.Errorf("empty labels marshal to %s", data)
	}
}

// An object keeps beside the shared set only its long values, each once
// (an ID repeated in two labels and its owner's name is one string): the
// short ones are in the set, which objects with the same keys and short
// values share.
func TestLabelsKeepOnlyLongValuesApart(t *testing.T) {
	id := "6f1c2d3e-0000-4000-8000-00000000000a"
	other := "6f1c2d3e-0000-4000-8000-00000000000b"
	pairs := func(id string) []LabelPair {
		return []LabelPair{{"opensandbox.io/tenant", "rl"}, {"batch-sandbox-name", id}, {"opensandbox.io/id", id},
			{"pod-index", "0"}, {"app", ""}}
	}
	a, b := LabelsFromPairs(pairs(id), id), LabelsFrom(map[string]string{"opensandbox.io/tenant": "rl",
		"batch-sandbox-name": other, "opensandbox.io/id": other, "pod-index": "0", "app": ""})
	for _, c := range []struct {
		l  Labels
		id string
	}{{a, id}, {b, other}} {
		if len(c.l.kv) != 2 || c.l.kv[1] != c.id {
			t.Fatalf("kept apart: %q, want the set and %q", c.l.kv, c.id)
		}
		if c.l.Len() != 5 || c.l.Get("opensandbox.io/id") != c.id || c.l.Get("batch-sandbox-name") != c.id ||
			c.l.Get("pod-index") != "0" || !c.l.Has("app") || c.l.Has("zz") {
			t.Fatalf("reads %v", c.l)
		}
	}
	if unsafe.StringData(a.kv[1]) != unsafe.StringData(id) {
		t.Error("the ID is a copy, not the owner's string")
	}
	if unsafe.StringData(a.kv[0]) != unsafe.StringData(b.kv[0]) {
		t.Error("two objects with the same keys and short values do not share their set")
	}
}
