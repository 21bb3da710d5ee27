package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model/query"
)

// commandsView lists the palette's commands and aliases (ctrl+a), as
// k9s's alias view does: enter runs the command under the cursor.
type commandsView struct{ *listView }

var commandsCols = []column{
	{Title: "COMMAND", Max: 50},
	{Title: "ARGUMENTS", Drop: 1, Max: 30},
	{Title: "WHAT IT DOES"},
}

func (a *App) commandsView() *commandsView {
	return &commandsView{newCellsList(a.c, "Commands", commandsCols, 0, func(*shared) []listRow {
		rows := make([]listRow, 0, len(paletteCommands))
		for _, e := range paletteCommands {
			rows = append(rows, listRow{key: e.names[0], cells: []string{":" + strings.Join(e.names, ", :"), e.args, e.help}})
		}
		return rows
	})}
}

// choose implements chooser: Enter runs the command under the cursor.
func (v *commandsView) choose(a *App) tea.Cmd {
	if name := v.selectedCommand(); name != "" {
		return a.runCommand(paletteCommand{verb: name, typed: name})
	}
	return nil
}

// selectedCommand is the name of the command under the cursor ("" with none).
func (v *commandsView) selectedCommand() string {
	if !v.onRow(len(v.visible)) {
		return ""
	}
	return v.rows[v.visible[v.cursor]].key
}

// selectedSandbox: the rows are commands (their key is a command's name,
// not a sandbox's).
func (v *commandsView) selectedSandbox(*shared) pick { return pick{} }

func (v *commandsView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	run := key.NewBinding(key.WithKeys(k.Detail.Keys()...), key.WithHelp(k.Detail.Help().Key, "run command"))
	return []key.Binding{run, k.Filter, k.Command, k.Back, k.Help, k.Quit}
}

// runCommand carries out a palette line: ":sb /text", ":sb app=x",
// ":pods", ":ns NAME", ":ctx NAME", ":q".
func (a *App) runCommand(cmd paletteCommand) tea.Cmd {
	args := cmd.args
	switch cmd.verb {
	case "q":
		return a.quit(cmd.typed == "q!")
	case "help":
		a.showHelp = true
	case "sb":
		a.toRoot()
		if len(args) == 0 {
			// ":sb" alone is the whole fleet again: no text, no labels.
			if f, ok := a.top().(filterable); ok {
				f.setFilter(query.Filter{}, a.c)
			}
			return nil
		}
		return a.inlineFilter(args)
	case "pods":
		a.switchTo(newPodsView(a.c))
		return a.inlineFilter(args)
	case "pools":
		a.switchTo(newPoolsView(a.c))
		return a.inlineFilter(args)
	case "claims":
		a.switchTo(newClaimsView(a.c))
		return a.inlineFilter(args)
	case "messages":
		a.switchTo(a.messagesView())
		return nil
	case "pf":
		v := newForwardsView(a.c)
		a.switchTo(v)
		return a.inlineFilter(args)
	case "ns":
		switch len(args) {
		case 0:
			a.switchTo(a.newNamespacesView())
			return nil
		case 1:
		default:
			a.setFlash(":ns takes one namespace (or all)", true)
			return nil
		}
		return a.switchNamespace(args[0])
	case "ctx":
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
		a.setFlash(fmt.Sprintf("unknown command %q (try :sb, :pods, :pools, :claims, :ns, :ctx, :q)", cmd.typed), true)
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
	if ns == "" || a.c.nsScope != "" || a.c.scoped() || a.c.loading() {
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

// startCreate runs the create in the background and streams its stage
// line. The outcome travels on the same channel, after the last stage, so
// that it is always what the footer shows last.
func (a *App) startCreate(req CreateRequest, kctx string) tea.Cmd {
	create := a.c.backendFor(kctx).Create
	where := req.Namespace
	if kctx != "" {
		where = kctx + "/" + textsafe.OrDash(where)
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
