package ui

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Tab and shift+tab go round the fields, the context only with several
// contexts in view; the hint is the form's keys, or the known values of
// the field in focus.
func TestCreateFormFields(t *testing.T) {
	a := New(&fakeSource{snap: incidentSnapshot()}, Backend{}, Options{Now: fixedNow, Images: []string{"img:1"}}, DefaultKeyMap())
	f := openCreateForm(a.c, "")
	at := func() string { return f.view(a.c, 200) }
	if v := at(); !strings.HasPrefix(v, "create [2/8] image: ") || !strings.HasSuffix(v, "(1 known: ctrl+n/ctrl+p, → accepts)") || !strings.Contains(v, "img:1  (→ takes it)") {
		t.Fatalf("the form opens on %q", v)
	}
	press(t, f, "tab")
	if v := at(); !strings.HasPrefix(v, "create [3/8] entrypoint: ") || !strings.HasSuffix(v, "(enter/tab/shift+tab: field, ctrl+s: create, esc: cancel)") {
		t.Fatalf("after tab: %q", v)
	}
	press(t, f, "shift+tab", "shift+tab", "shift+tab")
	if v := at(); !strings.HasPrefix(v, "create [8/8] memory: ") {
		t.Fatalf("shift+tab past the namespace: %q, want the last field", v)
	}

	two := New(twoContexts(), Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	f = openCreateForm(two.c, "staging")
	press(t, f, "shift+tab", "shift+tab")
	if v := f.view(two.c, 200); !strings.HasPrefix(v, "create [1/9] context: staging") {
		t.Fatalf("with two contexts: %q", v)
	}
}

// Enter hands a valid request to the App and closes the form; an invalid
// one keeps it, the reason in place of the hint; esc closes it with
// nothing.
func TestCreateFormSubmits(t *testing.T) {
	a := New(&fakeSource{snap: incidentSnapshot()}, Backend{}, Options{Now: fixedNow, DefaultNamespace: "team-rl"}, DefaultKeyMap())
	f := openCreateForm(a.c, "")
	if outs, done := press(t, f, "ctrl+s"); done || last(outs) != nil || !strings.HasSuffix(f.view(a.c, 200), "✗ an image (or a pool) is required") {
		t.Fatalf("no image: %v (closed %v), %q", outs, done, f.view(a.c, 200))
	}
	outs, done := press(t, f, "img:1", "tab", "tab", "tab", "tab", "20m", "ctrl+s")
	want := createSubmitted{req: CreateRequest{Namespace: "team-rl", Image: "img:1", Lifetime: 20 * time.Minute}}
	if !done || !reflect.DeepEqual(last(outs), want) {
		t.Fatalf("submitted %+v (closed %v), want %+v", last(outs), done, want)
	}
	if outs, done := press(t, openCreateForm(a.c, ""), "img", "esc"); !done || last(outs) != nil {
		t.Fatalf("esc: %v (closed %v)", outs, done)
	}

	two := New(twoContexts(), Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	f = openCreateForm(two.c, "")
	outs, _ = press(t, f, "img:2", "ctrl+s")
	if got := last(outs).(createSubmitted); got.context != "prod" || got.req.Image != "img:2" {
		t.Fatalf("with two contexts, from the table's first: %+v", got)
	}
	f = openCreateForm(two.c, "")
	press(t, f, "shift+tab", "shift+tab", "ctrl+u", "dev", "tab", "tab", "img:3", "ctrl+s")
	if v := f.view(two.c, 200); !strings.Contains(v, `✗ context: "dev" is not in view (prod, staging)`) {
		t.Fatalf("a context not in view: %q", v)
	}
}

// openCreateForm opens the form as the App does: focused on its first field.
func openCreateForm(c *shared, ctx string) *createForm {
	f := newCreateForm(c, ctx)
	f.focus()
	return f
}

// Enter on an unfinished form moves to the next field, as in any form;
// it creates only on the last field (ctrl+s creates from any).
func TestCreateFormEnterMovesOn(t *testing.T) {
	a := New(&fakeSource{snap: incidentSnapshot()}, Backend{}, Options{Now: fixedNow, DefaultNamespace: "team-rl"}, DefaultKeyMap())
	f := openCreateForm(a.c, "")
	outs, done := press(t, f, "img:1", "enter")
	if done || last(outs) != nil || !strings.HasPrefix(f.view(a.c, 200), "create [3/8] entrypoint: ") {
		t.Fatalf("enter on the image field: %v (closed %v), %q", outs, done, f.view(a.c, 200))
	}
	outs, done = press(t, f, "enter", "enter", "enter", "enter", "enter")
	if done || !strings.HasPrefix(f.view(a.c, 200), "create [8/8] memory: ") {
		t.Fatalf("enter through the fields: %v (closed %v), %q", outs, done, f.view(a.c, 200))
	}
	outs, done = press(t, f, "enter")
	if got, ok := last(outs).(createSubmitted); !done || !ok || got.req.Image != "img:1" {
		t.Fatalf("enter on the last field: %+v (closed %v)", last(outs), done)
	}
}

// ctrl+n and ctrl+p step through the known values, as the hint says, each
// put in the field: from an empty field through all of them, round at
// either end, and after something typed through those that start with it.
func TestCreateFormCyclesKnownValues(t *testing.T) {
	images := []string{"reg/a:1", "reg/b:1", "other/c:1"}
	a := New(&fakeSource{snap: incidentSnapshot()}, Backend{}, Options{Now: fixedNow, Images: images}, DefaultKeyMap())
	f := openCreateForm(a.c, "")
	image := func() string { return f.fields[fieldImage].Value() }
	known := f.known[fieldImage]
	if len(known) < 3 || !slices.Equal(known[:3], images) {
		t.Fatalf("the form knows %v", known)
	}
	n := len(known)
	var seen []string
	for range n + 1 {
		press(t, f, "ctrl+n")
		seen = append(seen, image())
	}
	if want := append(slices.Clone(known), known[0]); !slices.Equal(seen, want) {
		t.Errorf("ctrl+n from the empty field put %v, want %v", seen, want)
	}
	press(t, f, "ctrl+p")
	if got := image(); got != known[n-1] {
		t.Errorf("ctrl+p on the first: %q, want the last known %q", got, known[n-1])
	}
	press(t, f, "ctrl+u", "reg/")
	seen = nil
	for range 3 {
		press(t, f, "ctrl+n")
		seen = append(seen, image())
	}
	if want := []string{"reg/a:1", "reg/b:1", "reg/a:1"}; !slices.Equal(seen, want) {
		t.Errorf("ctrl+n after typing reg/ put %v, want %v", seen, want)
	}
	press(t, f, "ctrl+p")
	if got := image(); got != "reg/b:1" {
		t.Errorf("ctrl+p after typing reg/: %q, want reg/b:1", got)
	}
	press(t, f, "x")
	if got := image(); got != "reg/b:1x" {
		t.Errorf("typing after a known value: %q", got)
	}
}
