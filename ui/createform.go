package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// createForm collects a create request. One field is edited at a time;
// the footer shows it with its position, so the form fits any width.
// Enter hands the request to the App (createSubmitted), which runs the
// create in the background.
type createForm struct {
	keys   createKeys
	fields [len(createFieldLabels)]textinput.Model
	focus_ int
	err    string                           // why the last enter was not accepted
	known  [len(createFieldLabels)][]string // values offered per field (images, pools)
	// contexts are the contexts in view when there are several: the form
	// then asks in which one to create. nil: the one there is, only.
	contexts []string
	only     string
	// cycle is where ctrl+n/ctrl+p stand among the known values of the
	// field in focus that start with what was typed; it holds while the
	// field keeps the value the last of them set.
	cycle knownCycle
}

// knownCycle is a walk through a field's known values.
type knownCycle struct {
	field int
	typed string // what was typed before the walk: the values shown start with it
	shown string // the value the walk set last
	at    int    // its index among the matching values
}

// The create form's fields, in tab order. The context is asked only with
// several contexts in view.
const (
	fieldContext = iota
	fieldNamespace
	fieldImage
	fieldCommand
	fieldPool
	fieldEnv
	fieldLifetime
	fieldCPU
	fieldMemory
)

var createFieldLabels = [...]string{"context: ", "namespace: ", "image: ", "entrypoint: ", "pool: ", "env: ", "expires after: ", "cpu: ", "memory: "}

// createKeys are the form's keys. The fields that offer known values
// (context, image, pool) cycle through them with NextKnown and PrevKnown
// and take one with Accept; every field is edited with bubbles' textinput
// keys.
type createKeys struct {
	Next, Prev           key.Binding // the next or previous field
	Submit, Cancel       key.Binding
	Enter                key.Binding // the next field, as in any form; on the last, create
	NextKnown, PrevKnown key.Binding // cycle through the known values that match what is typed
	Accept               key.Binding // take the known value shown
}

func defaultCreateKeys() createKeys {
	return createKeys{
		Next:      typedKey("tab", "next field", "tab"),
		Prev:      typedKey("shift+tab", "previous field", "shift+tab"),
		Submit:    typedKey("ctrl+s", "create", "ctrl+s"),
		Enter:     typedKey("enter", "next field; create on the last", "enter"),
		Cancel:    typedKey("esc", "cancel", "esc"),
		NextKnown: key.NewBinding(key.WithKeys("down", "ctrl+n"), key.WithHelp("ctrl+n", "next known value")),
		PrevKnown: key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("ctrl+p", "previous known value")),
		Accept:    key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "accepts")),
	}
}

// createSubmitted: create req in context (with one fleet in view, its
// context: "" for a plain Source).
type createSubmitted struct {
	req     CreateRequest
	context string
}

// newCreateForm opens the form; with several contexts in view it creates
// in ctx (the selected sandbox's) unless told otherwise.
func newCreateForm(c *shared, ctx string) *createForm {
	f := &createForm{keys: defaultCreateKeys()}
	for i := range f.fields {
		f.fields[i] = textinput.New()
		f.fields[i].Prompt = createFieldLabels[i]
	}
	ns := c.nsScope
	if ns == "" && !c.multi() {
		ns = c.opts.DefaultNamespace
	}
	f.fields[fieldNamespace].SetValue(ns)
	f.only = c.fleets[0].Context
	if c.multi() {
		f.contexts = c.contextsInView()
		if ctx == "" {
			ctx = f.contexts[0]
		}
		f.fields[fieldContext].SetValue(ctx)
		f.known[fieldContext] = f.contexts
		// Each context creates in its own namespace unless one is given.
		f.fields[fieldNamespace].Placeholder = "(empty: the context's namespace)"
	}
	f.fields[fieldImage].Placeholder = "registry/repo:tag"
	f.fields[fieldCommand].Placeholder = "(empty: the image's own ENTRYPOINT/CMD, read from the registry)"
	f.fields[fieldPool].Placeholder = "(optional) pool name"
	f.known[fieldImage] = knownImages(c)
	f.known[fieldPool] = knownPools(c)
	for _, i := range []int{fieldContext, fieldImage, fieldPool} {
		// Typing narrows the known values; ctrl+n/ctrl+p cycle, → accepts
		// (tab moves between the fields).
		f.fields[i].ShowSuggestions = true
		f.fields[i].KeyMap.AcceptSuggestion = f.keys.Accept
		f.fields[i].KeyMap.NextSuggestion, f.fields[i].KeyMap.PrevSuggestion = f.keys.NextKnown, f.keys.PrevKnown
		f.fields[i].SetSuggestions(f.known[i])
		if len(f.known[i]) > 0 && f.fields[i].Value() == "" {
			// The suggestion shows on the empty field too (→ takes it).
			f.fields[i].Placeholder = f.known[i][0] + "  (→ takes it)"
		}
	}
	f.fields[fieldEnv].Placeholder = "(optional) K=V K2=V2"
	f.fields[fieldLifetime].Placeholder = "(optional) e.g. 30m"
	f.fields[fieldCPU].Placeholder = "(optional) e.g. 500m"
	f.fields[fieldMemory].Placeholder = "(optional) e.g. 1Gi"
	f.focus_ = fieldImage
	return f
}

func (f *createForm) focus() tea.Cmd {
	for i := range f.fields {
		f.fields[i].Blur()
	}
	return f.fields[f.focus_].Focus()
}

// firstField is the first field asked: the context only with several.
func (f *createForm) firstField() int {
	if f.contexts != nil {
		return fieldContext
	}
	return fieldNamespace
}

// move takes the focus to the next (d = 1) or previous (d = -1) field asked.
func (f *createForm) move(d int) {
	n := len(f.fields)
	f.focus_ = (f.focus_ + d + n) % n
	if f.focus_ < f.firstField() {
		f.focus_ = (f.focus_ + d*f.firstField() + n) % n
	}
}

// context is the context the create goes to.
func (f *createForm) context() string {
	if f.contexts == nil {
		return f.only
	}
	return strings.TrimSpace(f.fields[fieldContext].Value())
}

func (f *createForm) update(msg tea.KeyMsg) (tea.Cmd, tea.Msg, bool) {
	switch {
	case key.Matches(msg, f.keys.Cancel):
		return nil, nil, true
	case key.Matches(msg, f.keys.Next):
		f.move(1)
		return f.focus(), nil, false
	case key.Matches(msg, f.keys.Prev):
		f.move(-1)
		return f.focus(), nil, false
	case key.Matches(msg, f.keys.Enter) && f.focus_ < len(f.fields)-1:
		f.move(1)
		return f.focus(), nil, false
	case f.takeKnown(msg):
		return nil, nil, false
	case key.Matches(msg, f.keys.Submit) || key.Matches(msg, f.keys.Enter):
		req, err := f.request()
		if err != nil {
			f.err = err.Error()
			return nil, nil, false
		}
		f.err = ""
		return nil, createSubmitted{req: req, context: f.context()}, true
	}
	var cmd tea.Cmd
	f.fields[f.focus_], cmd = f.fields[f.focus_].Update(msg)
	return cmd, nil, false
}

// view is the field in focus, its place among the fields and a hint: the
// keys (from the key map), the known values, or why enter was refused.
// takeKnown fills a field with a known value when asked: → takes the one
// suggested on an empty field (bubbles suggests only once something is
// typed, and an empty field is where a suggestion helps most), and
// ctrl+n/ctrl+p step through the known values that start with what was
// typed, each put in the field. bubbles' own next and previous
// suggestion only move which suggestion it would complete, and on a
// field that holds a whole known value there is no other to move to: the
// field kept its value.
func (f *createForm) takeKnown(msg tea.KeyMsg) bool {
	known, in := f.known[f.focus_], &f.fields[f.focus_]
	if len(known) == 0 {
		return false
	}
	step := 0
	switch {
	case key.Matches(msg, f.keys.Accept):
		if in.Value() != "" {
			return false // bubbles completes what is typed
		}
		in.SetValue(known[0])
		in.CursorEnd()
		return true
	case key.Matches(msg, f.keys.NextKnown):
		step = 1
	case key.Matches(msg, f.keys.PrevKnown):
		step = -1
	default:
		return false
	}
	cy := &f.cycle
	if cy.field != f.focus_ || cy.shown == "" || in.Value() != cy.shown {
		// A new walk, from what is in the field now.
		*cy = knownCycle{field: f.focus_, typed: in.Value(), at: -1}
		if step < 0 {
			cy.at = 0
		}
	}
	var matching []string
	for _, v := range known {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(cy.typed)) {
			matching = append(matching, v)
		}
	}
	if len(matching) == 0 {
		return true // nothing known starts so: the field keeps what was typed
	}
	n := len(matching)
	cy.at = ((cy.at+step)%n + n) % n
	cy.shown = matching[cy.at]
	in.SetValue(cy.shown)
	in.CursorEnd()
	return true
}

func (f *createForm) view(_ *shared, _ int) string {
	k := f.keys
	keyOf := func(b key.Binding) string { return b.Help().Key }
	hint := fmt.Sprintf("(%s/%s/%s: field, %s: create, %s: cancel)", keyOf(k.Enter), keyOf(k.Next), keyOf(k.Prev), keyOf(k.Submit), keyOf(k.Cancel))
	if known := f.known[f.focus_]; len(known) > 0 {
		hint = fmt.Sprintf("(%d known: %s/%s, %s %s)", len(known), keyOf(k.NextKnown), keyOf(k.PrevKnown), keyOf(k.Accept), k.Accept.Help().Desc)
		if f.fields[f.focus_].Value() != "" { // else the field shows the first as its placeholder
			hint = strings.TrimSuffix(hint, ")") + "; e.g. " + textsafe.Line(known[0]) + ")"
		}
	}
	if f.err != "" {
		hint = "✗ " + textsafe.Line(f.err)
	}
	what := "create"
	if ctx := f.context(); f.contexts != nil && f.focus_ != fieldContext {
		what += " in " + textsafe.Line(ctx) // where it goes stays in sight
	}
	first := f.firstField()
	return fmt.Sprintf("%s [%d/%d] %s   %s", what, f.focus_+1-first, len(f.fields)-first, f.fields[f.focus_].View(), hint)
}

// request validates the form; the error names the field that is wrong.
func (f *createForm) request() (CreateRequest, error) {
	val := func(i int) string { return strings.TrimSpace(f.fields[i].Value()) }
	command, err := shellWords(val(fieldCommand))
	if err != nil {
		return CreateRequest{}, fmt.Errorf("command: %w", err)
	}
	env, err := shellWords(val(fieldEnv))
	if err != nil {
		return CreateRequest{}, fmt.Errorf("env: %w", err)
	}
	req := CreateRequest{
		Namespace: val(fieldNamespace),
		Image:     val(fieldImage),
		Command:   command,
		Pool:      val(fieldPool),
		CPU:       val(fieldCPU),
		Memory:    val(fieldMemory),
	}
	if req.Image == "" && req.Pool == "" {
		return req, fmt.Errorf("an image (or a pool) is required")
	}
	if f.contexts != nil && !slices.Contains(f.contexts, f.context()) {
		return req, fmt.Errorf("context: %q is not in view (%s)", f.context(), strings.Join(f.contexts, ", "))
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return req, fmt.Errorf("env: %q is not K=V", kv)
		}
		if req.Env == nil {
			req.Env = map[string]string{}
		}
		req.Env[k] = v
	}
	if d := val(fieldLifetime); d != "" {
		lifetime, err := time.ParseDuration(d)
		if err != nil || lifetime <= 0 {
			return req, fmt.Errorf("expires after: %q is not a positive duration such as 30m", d)
		}
		req.Lifetime = lifetime
	}
	return req, nil
}

// knownImages are the images the form offers: those the backend knows (the
// demo's registry), then those the fleet's sandboxes run, most used first.
func knownImages(c *shared) []string {
	count := map[string]int{}
	for _, sb := range c.sandboxes() {
		if sl := sb.PrimarySlot(); sl != nil && sl.Pod != nil {
			if m, _ := sl.Pod.Main(); m != nil && m.Image != "" {
				count[m.Image]++
			}
		}
	}
	fleet := make([]string, 0, len(count))
	for img := range count {
		fleet = append(fleet, img)
	}
	slices.SortFunc(fleet, func(x, y string) int { return cmp.Or(count[y]-count[x], strings.Compare(x, y)) })
	out := slices.Clone(c.opts.Images)
	for _, img := range fleet {
		if !slices.Contains(out, img) {
			out = append(out, img)
		}
	}
	return out[:min(len(out), 50)]
}

// knownPools are the Pools of the fleets shown.
func knownPools(c *shared) []string {
	var out []string
	for _, f := range c.fleets {
		for _, p := range f.Snap.Pools {
			if c.nsScope == "" || p.Namespace == c.nsScope {
				if !slices.Contains(out, p.Name) {
					out = append(out, p.Name)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
