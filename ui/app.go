package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
	"github.com/sandscope/sandscope/ui/screen"
)

// Live updates are coalesced: at most one snapshot refresh per period. The
// first change after a quiet period refreshes at once (a leading edge), so
// a lone update costs no waiting; changes that follow within the period wait
// for its end and are taken together. The period follows the cost of a
// refresh (three times the last one, so refreshing under constant churn
// takes at most a third of a core), between a frame at 60 fps and half a
// second: a small fleet shows each change within a frame, a huge one stays
// responsive to keys.
const (
	minRedrawEvery  = 16 * time.Millisecond
	maxRedrawEvery  = 500 * time.Millisecond
	redrawCostShare = 3
	// While a fleet's first list loads, a refresh is cheap (nothing is
	// listed yet) but the screen only shows progress: ten frames a second
	// say it moves, and every frame's garbage is a share of a collection
	// that marks the whole fleet loaded so far.
	loadingRedrawEvery = 100 * time.Millisecond
)

// Messages of the root model.
type (
	changedMsg struct{ sub int }
	refreshMsg struct{}
	clockMsg   struct{}
	actionDone struct {
		text string
		err  error
	}
	createStage struct {
		stage CreateStage
		ch    <-chan createEvent
	}
)

// App is the root bubbletea model: a stack of views over one shared context,
// plus the header and the footer, where a dialog (the prompt, the palette, a
// confirmation, the create form) takes the keys while it is open.
type App struct {
	c      *shared
	src    Source
	subCh  <-chan struct{}
	unsub  func()
	subGen int

	stack         []view
	width, height int
	// dialog has the keys while it is open (nil: the view on top has them).
	dialog        dialog
	showHelp      bool
	helpOffset    int // first line of the help shown (it scrolls on a short terminal)
	help          help.Model
	refreshQueued bool
	lastRefresh   time.Time     // wall clock of the last live refresh
	refreshCost   time.Duration // how long the last live refresh took

	flash      string
	flashIsErr bool
	flashAt    time.Time
	// flashSticky keeps the flash past its time until a key is pressed:
	// a configuration error must not vanish before anyone read it.
	flashSticky bool
	busiest     []string // the namespace favorites last ranked from a fleet of every namespace
	busiestOf   []Fleet  // the fleets busiest was ranked from

	// gated holds the mutating bindings as configured, so a key that read-only
	// mode (or a missing backend) disabled can still be recognised and refused.
	gated map[string]key.Binding

	// scr draws the frames when the App runs under NewProgram (nil under
	// bubbletea's own renderer, as in tests).
	scr *screen.Screen

	// frame is the last View, still true while frameOK: nothing but the
	// clock has come since, and no age on it reads differently yet.
	frame   string
	frameOK bool

	// one holds a plain Source's snapshot as the one fleet in view, so
	// that taking it allocates nothing.
	one [1]Fleet

	headerFleets []Fleet // the fleets counts was computed from
	headerNS     string
	counts       string
}

// New builds the root model. Tests drive it with teatest; Run wraps it in a program.
func New(src Source, be Backend, opts Options, keys KeyMap) *App {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &shared{now: opts.Now, keys: keys, st: newStyles(), opts: opts, be: be}
	a := &App{c: c, src: src, help: help.New(), width: 80, height: 24}
	a.takeSnapshot()
	a.gateKeys()
	a.stack = []view{newSandboxesView(c)}
	return a
}

// gateKeys disables (and so hides from help) every action that read-only mode
// forbids or that the backend does not offer.
func (a *App) gateKeys() {
	k := &a.c.keys
	// A MultiSource's contexts all offer what the first one does.
	be, ro := a.c.backendFor(a.c.fleets[0].Context), a.c.opts.ReadOnly
	a.gated = map[string]key.Binding{}
	gate := func(name string, b *key.Binding, mutating, available bool) {
		a.gated[name] = *b
		if (mutating && ro) || !available {
			b.SetEnabled(false)
		}
	}
	gate("shell", &k.Shell, true, be.Shell != nil)
	gate("exec", &k.Exec, true, be.Exec != nil)
	gate("create", &k.Create, true, be.Create != nil)
	gate("delete", &k.Delete, true, be.Delete != nil)
	gate("force delete", &k.ForceDelete, true, be.ForceDelete != nil)
	gate("port-forward", &k.Forward, true, be.Forward != nil)
	// A download changes nothing in the cluster: copy stays under
	// --readonly, whose Copier refuses uploads itself.
	gate("copy", &k.Copy, false, be.Copy != nil)
	gate("yaml", &k.YAML, false, be.YAML != nil)
	gate("logs", &k.Logs, false, be.Logs != nil)
	gate("previous logs", &k.Previous, false, be.Logs != nil)
}

// refusal explains why a gated key did nothing.
func (a *App) refusal(msg tea.KeyMsg) (string, bool) {
	for _, name := range []string{"shell", "exec", "create", "delete", "force delete", "port-forward", "copy", "yaml", "logs", "previous logs"} {
		b := a.gated[name]
		if !key.Matches(msg, b) {
			continue
		}
		mutating := name == "shell" || name == "exec" || name == "create" || name == "delete" || name == "force delete" || name == "port-forward"
		if mutating && a.c.opts.ReadOnly {
			return fmt.Sprintf("refused (READ_ONLY): %s is disabled in read-only mode", name), true
		}
		return name + " is not available here", true
	}
	return "", false
}

func (a *App) takeSnapshot() {
	if ms, ok := a.src.(MultiSource); ok {
		if fleets := ms.Fleets(); len(fleets) > 0 {
			a.c.fleets, a.c.snap = fleets, fleets[0].Snap
			return
		}
	}
	if a.src != nil {
		if s := a.src.Snapshot(); s != nil {
			a.c.snap = s
		}
	}
	if a.c.snap == nil {
		a.c.snap = &fleet.Snapshot{}
	}
	a.one[0] = Fleet{Snap: a.c.snap}
	a.c.fleets = a.one[:]
}

// Init starts the clock and, when there is a source, subscribes to its changes.
func (a *App) Init() tea.Cmd {
	cmds := []tea.Cmd{tickClock()}
	if a.src != nil {
		a.subCh, a.unsub = a.src.Subscribe()
		a.subGen++
		cmds = append(cmds, waitChange(a.subCh, a.subGen))
	}
	return tea.Batch(cmds...)
}

func waitChange(ch <-chan struct{}, gen int) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return nil
		}
		return changedMsg{gen}
	}
}

func tickClock() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return clockMsg{} })
}

func (a *App) top() view { return a.stack[len(a.stack)-1] }

func (a *App) push(v view) { a.stack = append(a.stack, v) }

func (a *App) pop() {
	if len(a.stack) > 1 {
		a.top().close()
		a.stack = a.stack[:len(a.stack)-1]
		a.top().snapshotChanged(a.c)
	}
}

func (a *App) setFlash(s string, isErr bool) {
	a.flash, a.flashIsErr, a.flashAt, a.flashSticky = s, isErr, a.c.now(), false
	a.c.logMessage(s, isErr, nil)
}

func (a *App) flashErr(err error) {
	a.flash, a.flashIsErr, a.flashAt, a.flashSticky = errText(err), true, a.c.now(), false
	a.c.logError(err)
}

// messagesView lists the messages, newest first, with their evidence.
func (a *App) messagesView() *textView {
	v := newTextView(a.c, kindMessages, "Messages", pick{})
	v.status, v.follow = "", false
	var lines []string
	for i := len(a.c.messages) - 1; i >= 0; i-- {
		m := a.c.messages[i]
		mark := " "
		if m.isErr {
			mark = "✗"
		}
		// Wrapped at the screen's width: the point of the log is the whole text.
		width := max(a.width, 40)
		head := m.at.Local().Format("15:04:05") + " " + mark + " "
		lines = append(lines, strings.Split(ansi.Wrap(head+textsafe.Line(m.text), width, " "), "\n")...)
		for _, e := range m.evidence {
			for _, l := range strings.Split(ansi.Wrap(textsafe.Line(e), width-11, " "), "\n") {
				lines = append(lines, strings.Repeat(" ", 11)+l)
			}
		}
	}
	if len(lines) == 0 {
		lines = []string{"no messages yet"}
	}
	v.setLines(lines)
	return v
}

// Update applies one message (a key, a change, a finished action) and
// returns the command to run next.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case clockMsg, changedMsg:
		// The clock moves only ages (below); a change shows once a refresh
		// takes it (liveRefresh), and one that waits for the end of the
		// coalescing period leaves the frame as it is.
	default:
		a.frameOK = false // anything else may change what is shown
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		a.help.Width = msg.Width
		return a, nil
	case changedMsg:
		if msg.sub != a.subGen {
			return a, nil
		}
		next := waitChange(a.subCh, a.subGen)
		if a.refreshQueued {
			return a, next
		}
		wait := a.redrawEvery() - time.Since(a.lastRefresh)
		if wait <= 0 {
			a.liveRefresh()
			return a, next
		}
		a.refreshQueued = true
		return a, tea.Batch(next, tea.Tick(wait, func(time.Time) tea.Msg { return refreshMsg{} }))
	case refreshMsg:
		a.refreshQueued = false
		a.liveRefresh()
		return a, nil
	case clockMsg:
		// The clock only moves the ages on the screen and ends the flash:
		// when neither is due, the frame stands and View costs nothing.
		now := a.c.now()
		if a.flash != "" && !a.flashSticky && now.Sub(a.flashAt) > 8*time.Second {
			a.flash = ""
			a.frameOK = false
		}
		if !a.c.ageChange.IsZero() && !now.Before(a.c.ageChange) {
			a.frameOK = false
		}
		return a, tickClock()
	case asyncMsg:
		return a, a.route(msg)
	case actionDone:
		if msg.err != nil {
			a.flashErr(msg.err)
		} else if msg.text != "" {
			a.setFlash(msg.text, false)
		}
		return a, nil
	case forwardOpened:
		return a, a.onForwardOpened(msg.info)
	case forwardEnded:
		a.onForwardEnded(msg)
		return a, nil
	case createStage:
		a.setFlash("create: "+msg.stage.Line, msg.stage.Failed)
		return a, waitStage(msg.ch)
	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !(msg.Paste && a.dialog != nil) {
			// Keys that arrive together (a script, a laggy link, a paste
			// outside an input) come as one multi-rune key: each rune acts
			// in order, as if typed.
			cmds := make([]tea.Cmd, 0, len(msg.Runes))
			for _, r := range msg.Runes {
				cmds = append(cmds, a.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
			}
			return a, tea.Sequence(cmds...)
		}
		return a, a.onKey(msg)
	case tea.MouseMsg:
		return a, a.top().update(msg, a.c)
	case peekMsg:
		msg.frame <- ansi.Strip(a.View())
		return a, nil
	}
	return a, nil
}

// liveRefresh is refresh on a change notification, remembering when and
// what it cost.
func (a *App) liveRefresh() {
	a.lastRefresh = time.Now()
	a.frameOK = false
	a.refresh()
	a.refreshCost = time.Since(a.lastRefresh)
}

// redrawEvery is the current coalescing period.
func (a *App) redrawEvery() time.Duration {
	floor := minRedrawEvery
	if a.c.loading() {
		floor = loadingRedrawEvery
	}
	return min(max(redrawCostShare*a.refreshCost, floor), maxRedrawEvery)
}

// refresh takes the latest snapshot and lets every view catch up.
func (a *App) refresh() {
	a.takeSnapshot()
	for _, v := range a.stack {
		v.snapshotChanged(a.c)
	}
}

// route delivers an async reply to the view that asked, if it is still open
// and still waiting for that generation; anything else is stale and dropped.
func (a *App) route(msg asyncMsg) tea.Cmd {
	for _, v := range a.stack {
		if r, ok := v.(replier); ok && v.id() == msg.view {
			return r.onAsync(msg, a.c)
		}
	}
	return nil
}

func (a *App) onKey(msg tea.KeyMsg) tea.Cmd {
	if a.flashSticky { // seen: it may expire now, as any other
		a.flashSticky, a.flashAt = false, a.c.now()
	} else if a.dialog == nil {
		// A message belongs to the action that made it: the next key
		// starts another, and it leaves (:messages keeps it).
		a.flash = ""
	}
	if a.dialog != nil {
		return a.onDialogKey(msg)
	}
	k := a.c.keys
	if msg.String() == "ctrl+c" {
		return a.quit(false)
	}
	if a.showHelp {
		return a.onHelpKey(msg)
	}
	cur := a.top()
	if o, ok := cur.(keyOwner); ok {
		if cmd, mine := o.ownKey(msg, a); mine {
			return cmd
		}
	}
	if r := msg.Runes; msg.Type == tea.KeyRunes && len(r) == 1 && r[0] >= '0' && r[0] <= '9' && !msg.Alt {
		return a.favorite(int(r[0] - '0'))
	}
	sel := a.selected()
	picked := sel.sb != nil
	if !picked && a.actsOnSandbox(msg) {
		if l, ok := cur.(interface{ lostCursor() string }); ok && l.lostCursor() != "" {
			// The sandbox under the cursor went: the key acts on nothing,
			// never on the row that took its place.
			a.setFlash(fmt.Sprintf("no sandbox under the cursor (%s left the view): move the cursor to choose one", l.lostCursor()), true)
			return nil
		}
	}
	switch {
	case key.Matches(msg, k.Quit) && len(a.stack) > 1:
		a.pop() // as k9s: q leaves a sub-view; it quits from the top one
	case key.Matches(msg, k.Quit):
		return a.quit(false)
	case key.Matches(msg, k.Help):
		a.showHelp = true
	case key.Matches(msg, k.Commands):
		a.switchTo(a.commandsView())
	case key.Matches(msg, k.Filter):
		if f, ok := cur.(filterable); ok {
			a.dialog = newFilterPrompt(f.currentFilter().String())
		} else if t, ok := cur.(searchable); ok {
			a.dialog = newSearchPrompt(t.searchText())
		}
	case key.Matches(msg, k.Command):
		a.dialog = newPalette(paletteSuggestions(a.c))
	case key.Matches(msg, k.Back):
		if f, ok := cur.(filterable); ok && (f.currentFilter().Text != "" || f.currentFilter().Invert || f.currentFilter().Selector != nil) {
			f.setFilter(query.Filter{}, a.c)
			return nil
		}
		if t, ok := cur.(searchable); ok && t.searchText() != "" {
			t.setSearch("")
			return nil
		}
		a.pop()
	case key.Matches(msg, k.Detail):
		if ch, ok := cur.(chooser); ok {
			return ch.choose(a)
		}
		if picked {
			d := newDetailView(a.c, sel)
			d.snapshotChanged(a.c)
			a.push(d)
			return d.start(a.c)
		}
	default:
		if cmd, ok := a.onActionKey(msg, sel); ok {
			return cmd
		}
		if why, refused := a.refusal(msg); refused {
			a.setFlash(why, true)
			return nil
		}
		return cur.update(msg, a.c)
	}
	return nil
}

// onHelpKey scrolls or closes the help screen: every key is its own there.
func (a *App) onHelpKey(msg tea.KeyMsg) tea.Cmd {
	k := a.c.keys
	switch {
	case key.Matches(msg, k.Help) || key.Matches(msg, k.Back) || key.Matches(msg, k.Quit):
		a.showHelp, a.helpOffset = false, 0
	case key.Matches(msg, k.Down):
		a.helpOffset++
	case key.Matches(msg, k.Up):
		a.helpOffset = max(a.helpOffset-1, 0)
	case key.Matches(msg, k.PageDown):
		a.helpOffset += 10
	case key.Matches(msg, k.PageUp):
		a.helpOffset = max(a.helpOffset-10, 0)
	case key.Matches(msg, k.Top):
		a.helpOffset = 0
	}
	return nil
}

// onActionKey handles the keys that act on the sandbox under the cursor,
// and create; ok says the key was one of them.
func (a *App) onActionKey(msg tea.KeyMsg, sel pick) (cmd tea.Cmd, ok bool) {
	k := a.c.keys
	picked := sel.sb != nil
	switch {
	case key.Matches(msg, k.YAML) && picked:
		return a.openText(kindYAML, "YAML "+sel.label(), sel, false), true
	case key.Matches(msg, k.Logs) && picked:
		return a.openText(kindLogs, "Logs "+sel.label(), sel, false), true
	case key.Matches(msg, k.Previous) && picked:
		return a.openText(kindLogs, "Previous logs "+sel.label(), sel, true), true
	case key.Matches(msg, k.Events) && picked:
		if a.c.backendFor(sel.ctx).Events == nil {
			a.setFlash("events are not available here", true)
			return nil, true
		}
		return a.openText(kindEvents, "Events "+sel.label(), sel, false), true
	case key.Matches(msg, k.Shell) && picked:
		a.flash = ""
		ex, err := a.c.backendFor(sel.ctx).Shell(sel.sb)
		if err != nil {
			a.flashErr(err)
			return nil, true
		}
		if a.scr != nil {
			ex = a.scr.HandOver(ex)
		}
		return tea.Exec(ex, func(err error) tea.Msg { return actionDone{text: "shell ended", err: err} }), true
	case key.Matches(msg, k.Exec) && picked:
		a.flash = "" // a message belongs to the action that made it
		a.dialog = newExecPrompt(sel)
	case key.Matches(msg, k.Forward) && picked:
		a.flash = ""
		a.dialog = newForwardPrompt(sel)
	case key.Matches(msg, k.Copy) && picked:
		a.flash = ""
		a.dialog = newCopyPrompt(sel)
	case key.Matches(msg, k.Create):
		a.flash = ""
		form := newCreateForm(a.c, sel.ctx)
		a.dialog = form
		return form.focus(), true
	case key.Matches(msg, k.Delete) && picked:
		a.flash = ""
		a.dialog = newDeleteConfirm(sel, false)
	case key.Matches(msg, k.ForceDelete) && picked:
		a.dialog = newDeleteConfirm(sel, true)
	default:
		return nil, false
	}
	return nil, true
}

// actsOnSandbox reports whether msg is a key that acts on the sandbox
// under the cursor.
func (a *App) actsOnSandbox(msg tea.KeyMsg) bool {
	k := a.c.keys
	for _, b := range []key.Binding{k.Detail, k.YAML, k.Logs, k.Previous, k.Events, k.Shell, k.Exec, k.Forward, k.Delete, k.ForceDelete} {
		if key.Matches(msg, b) {
			return true
		}
	}
	return false
}

func (a *App) selected() pick {
	if s, ok := a.top().(selecter); ok {
		return s.selectedSandbox(a.c)
	}
	return pick{}
}

// quit ends the program, once the user agreed to stop the port-forwards
// still open (force: they did, or said so with ":q!").
func (a *App) quit(force bool) tea.Cmd {
	if n := len(a.c.forwards); n > 0 && !force && a.c.be.StopForward != nil {
		addrs := make([]string, n)
		for i, f := range a.c.forwards {
			addrs[i] = f.LocalAddr
		}
		a.dialog = &confirm{question: fmt.Sprintf("Quit and stop %d port-forward(s) (%s)?", n, strings.Join(addrs, ", ")),
			keys: defaultConfirmKeys(), yes: quitConfirmed{}, no: confirmCancelled{"quit"}}
		return nil
	}
	for _, v := range a.stack {
		v.close()
	}
	if a.unsub != nil {
		a.unsub()
	}
	if stop := a.stopAllForwards(); stop != nil {
		return tea.Sequence(stop, tea.Quit)
	}
	return tea.Quit
}

func (a *App) openText(kind textKind, title string, sb pick, previous bool) tea.Cmd {
	v := newTextView(a.c, kind, title, sb)
	v.previous = previous
	a.push(v)
	return v.start(a.c)
}

// onFilterEdited makes the filter line the filter of the list on top,
// once it parses; until then the footer says what is wrong with it.
func (a *App) onFilterEdited(line string) tea.Cmd {
	f, ok := a.top().(filterable)
	if !ok {
		return nil
	}
	parsed, err := query.ParseFilter(line)
	if err != nil {
		// The filter in force stays until the line parses again: a line
		// on its way to "-l app=x" never filters by "-". Not logged: the
		// next key usually mends it.
		if p, ok := a.dialog.(*prompt); ok {
			p.err = err.Error() // beside the line being typed: the footer is the prompt's
		} else {
			a.flash, a.flashIsErr, a.flashAt, a.flashSticky = err.Error(), !errors.Is(err, query.ErrIncomplete), a.c.now(), false
		}
		return nil
	}
	a.flash = ""
	f.setFilter(parsed, a.c)
	return nil
}

// startExec runs argv in target, in an exec view of its own.
func (a *App) startExec(target pick, argv []string) tea.Cmd {
	v := newTextView(a.c, kindExec, "Exec "+target.label()+": "+shellQuote(argv), target)
	a.push(v)
	return v.startExec(a.c, argv)
}

// deleteSandbox deletes target's sandbox object in the background; the
// footer says when the API server accepted it.
func (a *App) deleteSandbox(target pick, force bool) tea.Cmd {
	sb, name, del := target.sb, target.label(), a.c.backendFor(target.ctx).Delete
	if force {
		del = a.c.backendFor(target.ctx).ForceDelete
	}
	a.setFlash("deleting "+name+"…", false)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := del(ctx, sb); err != nil {
			return actionDone{err: fmt.Errorf("delete %s: %w", name, err)}
		}
		// The API server accepted the deletion; the object goes once its
		// finalizers are removed, and stays Terminating in the table until then.
		text := "delete requested for " + name
		if force {
			text = "force delete requested for " + name + " and its Pods"
		}
		if f := sb.Finalizers(); len(f) > 0 {
			text += " (finalizers " + strings.Join(f, ", ") + ": it stays Terminating until they are removed)"
		}
		return actionDone{text: text}
	}
}

// peekMsg asks the running program for its current frame (tests only use it;
// it costs nothing otherwise).
type peekMsg struct{ frame chan<- string }

// favorite switches to namespace favorite n (1-9), or to every namespace (0),
// as k9s's number keys do.
func (a *App) favorite(n int) tea.Cmd {
	if n == 0 {
		return a.switchNamespace("")
	}
	favs := a.favorites()
	if n > len(favs) {
		a.setFlash(fmt.Sprintf("no namespace favorite %d (favorites: %s; set them in config.yaml's favorites)", n, strings.Join(favs, ", ")), true)
		return nil
	}
	return a.switchNamespace(favs[n-1])
}

// favorites are the configured namespaces, else the nine namespaces with
// the most sandboxes (most first).
func (a *App) favorites() []string {
	if len(a.c.opts.Favorites) > 0 {
		return a.c.opts.Favorites
	}
	if a.c.nsScope != "" || a.c.scoped() {
		return a.busiest // only a fleet of every namespace can rank them
	}
	// Ranking is a pass over the whole fleet, and the header asks on every
	// frame after a change: at 150,000 sandboxes that pass was nearly all
	// of a status change's frame, and of the idle CPU. The fleets are
	// recorded either way: the next check compares against the latest.
	if !a.sameNamespaceCounts() {
		a.busiest = a.rankNamespaces()
	}
	a.busiestOf = append(a.busiestOf[:0], a.c.fleets...)
	return a.busiest
}

// rankNamespaces is the nine namespaces in view with the most sandboxes,
// most first.
func (a *App) rankNamespaces() []string {
	count := map[string]int{}
	for _, f := range a.c.fleets {
		countNamespaces(f.Snap, count)
	}
	names := make([]string, 0, len(count))
	for ns := range count {
		names = append(names, ns)
	}
	slices.SortFunc(names, func(x, y string) int { return cmp.Or(count[y]-count[x], strings.Compare(x, y)) })
	return names[:min(len(names), 9)]
}

// shellQuote writes argv as a shell would read it back: a word of plain
// characters as it is, any other in single quotes (so the title of
// `sh -c 'exit 7'` says three words, not four).
func shellQuote(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		plain := w != "" && strings.IndexFunc(w, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:=@%+,", r))
		}) < 0
		if plain {
			words[i] = w
		} else {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

// countNamespaces adds to count how many sandboxes each namespace holds in
// snap. A snapshot is sorted by Key, "<engine>/<namespace>/<name>", so one
// engine's sandboxes of one namespace stand together, and a binary search
// finds where each such run ends: the count costs a few probes a namespace
// where reading every sandbox cost 15 ms at 150,000, on every frame after a
// sandbox came or went. A key of any other form counts its sandbox alone.
func countNamespaces(snap *fleet.Snapshot, count map[string]int) {
	n := snap.NumSandboxes()
	for i := 0; i < n; {
		sb := snap.SandboxAt(i)
		ns := sb.Namespace()
		end := i + 1
		if e, keyNS, _, ok := model.ParseSandboxKey(sb.Key); ok && keyNS == ns {
			prefix := sb.Key[:len(e)+1+len(ns)+1]
			end += sort.Search(n-end, func(k int) bool { return !strings.HasPrefix(snap.SandboxAt(end+k).Key, prefix) })
		}
		count[ns] += end - i
		i = end
	}
}

// sameNamespaceCounts reports whether the fleets in view hold as many
// sandboxes per namespace as those busiest was ranked from: the same
// contexts, each with the same sandboxes, or only some replaced in place
// (Snapshot.ChangedSince: none added or removed, and a sandbox's key,
// which holds its namespace, never changes).
func (a *App) sameNamespaceCounts() bool {
	if a.busiest == nil || !sameContexts(a.busiestOf, a.c.fleets) {
		return false
	}
	for p, f := range a.c.fleets {
		was := a.busiestOf[p].Snap
		if f.Snap == was || f.Snap.SameSandboxes(was) {
			continue
		}
		if _, ok := f.Snap.ChangedSince(was); !ok {
			return false
		}
	}
	return true
}
