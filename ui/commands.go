package ui

import (
	"cmp"
	"context"
	"fmt"
	"github.com/charmbracelet/bubbles/key"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model/query"
)

// paletteHelp is what ctrl+a lists: every palette command with its aliases.
var paletteHelp = [][2]string{
	{":sb, :sandbox, :sandboxes [/TEXT | LABEL=VALUE]", "the sandboxes (optionally filtered)"},
	{":pods, :pod, :po [/TEXT | LABEL=VALUE]", "the Pods of the fleet"},
	{":pools, :pool", "the Pools"},
	{":ns, :namespace NAME | all", "show one namespace, or every one (0-9: favorites)"},
	{":ctx, :context [NAME | all]", "the contexts (enter shows one); NAME: show that one; all: every context sandscope was started with"},
	{":messages, :msg", "every message and refusal, whole, with its evidence"},
	{":pf, :portforward, :portforwards, :port-forwards", "the open port-forwards (F opens one); ctrl+d stops one"},
	{":help, :?", "the key bindings"},
	{":q, :quit", "quit"},
}

// commandsView lists the palette's commands and aliases (ctrl+a).
func (a *App) commandsView() *textView {
	v := newTextView(a.c, kindMessages, "Commands", pick{})
	v.status, v.follow = "", false
	width := 0
	for _, c := range paletteHelp {
		width = max(width, len(c[0]))
	}
	lines := make([]string, len(paletteHelp))
	for i, c := range paletteHelp {
		lines[i] = fmt.Sprintf("%-*s  %s", width, c[0], c[1])
	}
	v.setLines(lines)
	return v
}

// commandNames are the palette's verbs, for completion.
var commandNames = []string{"sandboxes", "sb", "pods", "pools", "ns ", "ctx ", "messages", "pf", "help", "q", "quit"}

func (a *App) commandSuggestions() []string {
	out := append([]string(nil), commandNames...)
	seen := map[string]bool{}
	var nss []string
	for _, sb := range a.c.sandboxes() {
		if ns := sb.Namespace(); !seen[ns] {
			seen[ns] = true
			nss = append(nss, ns)
		}
	}
	sort.Strings(nss)
	out = append(out, "ns all")
	for _, ns := range nss {
		out = append(out, "ns "+ns)
	}
	if a.c.be.ForContext != nil {
		out = append(out, "ctx all")
	}
	if a.c.be.Contexts != nil {
		for _, ctx := range a.c.be.Contexts() {
			out = append(out, "ctx "+ctx)
		}
	}
	return out
}

func (a *App) onCommandKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEsc:
		a.closeInput()
		return nil
	case tea.KeyEnter:
		line := a.input.Value()
		a.closeInput()
		return a.runCommand(line)
	}
	var cmd tea.Cmd
	a.input, cmd = a.input.Update(msg)
	return cmd
}

// runCommand executes one palette line: ":sb /text", ":sb app=x", ":pods",
// ":ns NAME", ":ctx NAME", ":q".
func (a *App) runCommand(line string) tea.Cmd {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil
	}
	verb, args := strings.ToLower(fields[0]), fields[1:]
	switch verb {
	case "q", "quit", "q!":
		return a.quit()
	case "help", "?":
		a.showHelp = true
	case "sb", "sandbox", "sandboxes":
		a.toRoot()
		return a.inlineFilter(args)
	case "pods", "pod", "po":
		a.switchTo(newPodsView(a.c))
		return a.inlineFilter(args)
	case "pools", "pool":
		a.switchTo(newPoolsView(a.c))
		return a.inlineFilter(args)
	case "messages", "msg", "messages!":
		a.switchTo(a.messagesView())
		return nil
	case "pf", "portforward", "portforwards", "port-forwards":
		v := newForwardsView(a.c)
		a.switchTo(v)
		return a.inlineFilter(args)
	case "ns", "namespace":
		if len(args) != 1 {
			a.setFlash(":ns needs one namespace (or all)", true)
			return nil
		}
		return a.switchNamespace(args[0])
	case "ctx", "context":
		switch {
		case len(args) == 0:
			a.switchTo(newContextsView(a.c))
			return nil
		case len(args) > 1:
			a.setFlash(":ctx takes one context name (or all)", true)
			return nil
		case args[0] == "all" || args[0] == "*" || args[0] == "-A":
			return a.switchContext("")
		}
		return a.switchContext(args[0])
	default:
		a.setFlash(fmt.Sprintf("unknown command %q (try :sb, :pods, :pools, :ns, :ctx, :q)", verb), true)
	}
	return nil
}

// toRoot closes every view above the sandboxes view.
func (a *App) toRoot() {
	for len(a.stack) > 1 {
		a.pop()
	}
}

// switchTo shows v above the sandboxes view, so "-" returns to the fleet.
func (a *App) switchTo(v view) {
	a.toRoot()
	a.push(v)
}

func (a *App) inlineFilter(args []string) tea.Cmd {
	if len(args) == 0 {
		return nil
	}
	f, ok := a.top().(filterable)
	if !ok {
		return nil
	}
	var text string
	var sels []string
	for _, arg := range args {
		switch {
		case strings.HasPrefix(arg, "@"):
			return a.switchContext(arg[1:])
		case strings.HasPrefix(arg, "/"):
			text = strings.TrimSpace(text + " " + arg[1:])
		case strings.ContainsAny(arg, "=!") && !strings.HasPrefix(arg, "!"):
			sels = append(sels, arg)
		default:
			text = strings.TrimSpace(text + " " + arg)
		}
	}
	spec := text
	if len(sels) > 0 {
		spec += " -l " + strings.Join(sels, ",")
	}
	parsed, err := query.ParseFilter(spec)
	if err != nil {
		a.flashErr(err)
		return nil
	}
	f.setFilter(parsed, a.c)
	return nil
}

func (a *App) switchNamespace(ns string) tea.Cmd {
	if ns == "all" || ns == "-A" || ns == "*" {
		ns = ""
	}
	if sw := a.c.be.SwitchNamespace; sw != nil {
		if err := sw(ns); err != nil {
			a.flashErr(fmt.Errorf("switching namespace: %w", err))
			return nil
		}
	}
	hint := a.unseenNamespace(ns)
	a.c.nsScope = ns
	a.rebuildAll()
	switch {
	case ns == "":
		a.setFlash("namespace: all", false)
	case hint != "":
		a.setFlash("namespace: "+ns+" — "+hint, true)
	default:
		a.setFlash("namespace: "+ns, false)
	}
	return nil
}

// unseenNamespace says, when the fleet shown so far has no sandbox in ns,
// that it has none, and which namespace differs only in case (namespaces
// are case-sensitive); "" when ns holds sandboxes or nothing can be said.
func (a *App) unseenNamespace(ns string) string {
	if ns == "" || a.c.nsScope != "" || a.c.scoped() || slices.ContainsFunc(a.c.fleets, func(f Fleet) bool { return !f.Snap.Status.Synced }) {
		return "" // only fleets of every namespace can say where sandboxes are
	}
	var like string
	for _, sb := range a.c.sandboxes() {
		switch got := sb.Namespace(); {
		case got == ns:
			return ""
		case strings.EqualFold(got, ns):
			like = got
		}
	}
	if like != "" {
		return fmt.Sprintf("no sandboxes seen there; namespaces are case-sensitive: did you mean %s?", like)
	}
	return "no sandboxes seen there (is the name right?)"
}

// switchContext shows context name, or every context the Source was
// started with when name is "".
func (a *App) switchContext(name string) tea.Cmd {
	sw := a.c.be.SwitchContext
	if sw == nil {
		a.setFlash("switching context is not available here", true)
		return nil
	}
	what := "context " + name
	if name == "" {
		what = "every context"
	}
	a.setFlash("switching to "+what+"…", false)
	return func() tea.Msg {
		if err := sw(name); err != nil {
			return actionDone{err: fmt.Errorf("switching to %s: %w", what, err)}
		}
		return actionDone{text: "showing " + what}
	}
}

// rebuildAll forces every view to rebuild from the snapshot (namespace scope changed).
func (a *App) rebuildAll() {
	for i, v := range a.stack {
		switch v := v.(type) {
		case *sandboxesView:
			nv := newSandboxesView(a.c)
			nv.sort, nv.filter = v.sort, v.filter
			nv.resort()
			a.stack[i] = nv
		case *listView:
			v.built = false
			v.snapshotChanged(a.c)
		}
	}
}

// createForm collects a create request. One field is edited at a time;
// the footer shows it with its position, so the form fits any width.
type createForm struct {
	fields [len(createFieldLabels)]textinput.Model
	focus_ int
	err    string                           // why the last enter was not accepted
	known  [len(createFieldLabels)][]string // values offered per field (images, pools)
	// contexts are the contexts in view when there are several: the form
	// then asks in which one to create. nil: the one there is, only.
	contexts []string
	only     string
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

// newCreateForm opens the form; with several contexts in view it creates
// in ctx (the selected sandbox's) unless told otherwise.
func newCreateForm(c *shared, ctx string) createForm {
	var f createForm
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
		f.fields[i].KeyMap.AcceptSuggestion = key.NewBinding(key.WithKeys("right"))
		f.fields[i].SetSuggestions(f.known[i])
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

func (f *createForm) view() string {
	hint := "(tab/shift+tab: field, enter: create, esc: cancel)"
	if k := f.known[f.focus_]; len(k) > 0 {
		hint = fmt.Sprintf("(%d known: ctrl+n/ctrl+p, → accepts; e.g. %s)", len(k), textsafe.Line(k[0]))
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

func (a *App) onCreateKey(msg tea.KeyMsg) tea.Cmd {
	f := &a.create
	switch msg.Type {
	case tea.KeyEsc:
		a.mode = modeNormal
		return nil
	case tea.KeyTab:
		f.move(1)
		return f.focus()
	case tea.KeyShiftTab:
		f.move(-1)
		return f.focus()
	case tea.KeyEnter:
		req, err := f.request()
		if err != nil {
			f.err = err.Error()
			return nil
		}
		f.err = ""
		a.mode = modeNormal
		return a.startCreate(req, f.context())
	}
	var cmd tea.Cmd
	f.fields[f.focus_], cmd = f.fields[f.focus_].Update(msg)
	return cmd
}

// startCreate runs the create in the background and streams its stage
// line. The outcome travels on the same channel, after the last stage, so
// that it is always what the footer shows last.
func (a *App) startCreate(req CreateRequest, kctx string) tea.Cmd {
	create := a.c.backendFor(kctx).Create
	where := req.Namespace
	if kctx != "" {
		where = kctx + "/" + orDash(where)
	}
	events := make(chan createEvent, 16)
	a.setFlash("create: queued", false)
	run := func() tea.Msg {
		defer close(events)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		key, err := create(ctx, req, func(s CreateStage) {
			select {
			case events <- createEvent{stage: s}:
			default: // a slow UI skips intermediate stages, never blocks the create
			}
		})
		done := actionDone{text: "created " + key}
		if err != nil {
			done = actionDone{err: fmt.Errorf("create in %s: %w", where, err)}
		}
		events <- createEvent{done: &done} // waitStage reads until this one
		return nil
	}
	return tea.Batch(run, waitStage(events))
}

// createEvent is a stage a create reached, or (done) its outcome.
type createEvent struct {
	stage CreateStage
	done  *actionDone
}

func waitStage(ch <-chan createEvent) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		switch {
		case !ok:
			return nil
		case ev.done != nil:
			return *ev.done
		}
		return createStage{stage: ev.stage, ch: ch}
	}
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
