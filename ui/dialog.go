package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/query"
)

// dialog is an input component of the footer that has the keys while it is
// open: the prompt (the "/" filter or search, the exec and port prompts),
// the palette (":"), a y/N confirmation, the create form. Each has its own
// key map and says what a key meant as a tagged message (filterEdited,
// deleteConfirmed, createSubmitted, ...); the App routes keys to the one
// open and acts on those messages, and any work that waits on the network
// goes on in tea.Cmds.
type dialog interface {
	// update handles one key. out is what the key meant to the App, if
	// anything; the App acts on it before it reads the next key, so that
	// keys typed ahead (a paste, a script) act on the screen it left.
	// done: the key closed the dialog. cmd is the work its text inputs
	// ask for (the cursor's blink, a paste from the clipboard).
	update(msg tea.KeyMsg) (cmd tea.Cmd, out tea.Msg, done bool)
	// view is the footer line while the dialog is open.
	view(c *shared, width int) string
}

// typedKey is a dialog key matched whatever the alt modifier: a quick
// second Esc (or an Esc then Enter) reaches the program as alt+esc (alt+enter),
// and it must still close the dialog, or accept it.
func typedKey(help, desc string, keys ...string) key.Binding {
	all := append(make([]string, 0, 2*len(keys)), keys...)
	for _, k := range keys {
		all = append(all, "alt+"+k)
	}
	return key.NewBinding(key.WithKeys(all...), key.WithHelp(help, desc))
}

// onDialogKey gives a key to the dialog that is open and acts at once on
// what it answered.
func (a *App) onDialogKey(msg tea.KeyMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		// ctrl+c closes a prompt as esc does (a second one quits), and
		// answers a question no.
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	}
	cmd, out, done := a.dialog.update(msg)
	if done {
		a.dialog = nil
	}
	if out == nil {
		return cmd
	}
	if then := a.onDialogMsg(out); then != nil {
		return tea.Batch(cmd, then)
	}
	return cmd
}

// stillThere checks, as a confirmation is answered, that target is still
// the sandbox the key that opened it was pressed on: the same object (UID)
// in the same context, with the same Pod (if it had one). A sandbox
// deleted, re-created under its name, or given another Pod in between is
// not what the user agreed to act on.
func (a *App) stillThere(target pick) error {
	snap := a.c.snapOf(target.ctx)
	if snap == nil {
		return fmt.Errorf("%s: its context is no longer in view", target.label())
	}
	now := snap.Sandbox(target.sb.Key)
	if now == nil {
		return fmt.Errorf("%s is gone since you asked", target.label())
	}
	if was, is := target.sb.UID(), now.UID(); was != is {
		return fmt.Errorf("%s was re-created since you asked (uid %s, now %s)", target.label(), textsafe.OrDash(string(was)), textsafe.OrDash(string(is)))
	}
	if was, is := primaryPodUID(target.sb), primaryPodUID(now); was != "" && was != is {
		return fmt.Errorf("%s has another Pod since you asked (Pod uid %s, now %s)", target.label(), textsafe.OrDash(was), textsafe.OrDash(is))
	}
	return nil
}

// primaryPodUID is the UID of the sandbox's first Pod ("" with none).
func primaryPodUID(sb *model.Sandbox) string {
	if sl := sb.PrimarySlot(); sl != nil && sl.Pod != nil {
		return string(sl.Pod.UID)
	}
	return ""
}

// onTarget runs act, an action named what on target, unless target's
// sandbox is gone or another since it was chosen: the action is then
// refused, and the footer says why.
func (a *App) onTarget(what string, target pick, act func() tea.Cmd) tea.Cmd {
	if err := a.stillThere(target); err != nil {
		a.flashErr(fmt.Errorf("%s refused: %w", what, err))
		return nil
	}
	return act()
}

// onDialogMsg acts on what a dialog's key meant.
func (a *App) onDialogMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case filterEdited:
		return a.onFilterEdited(msg.text)
	case filterCleared:
		if f, ok := a.top().(filterable); ok {
			f.setFilter(query.Filter{}, a.c)
		}
	case searchEdited:
		if t, ok := a.top().(searchable); ok {
			t.setSearch(msg.text)
		}
	case execEntered:
		return a.onTarget("exec", msg.target, func() tea.Cmd { return a.startExec(msg.target, msg.argv) })
	case forwardEntered:
		return a.onTarget("port-forward", msg.target, func() tea.Cmd { return a.startForward(msg.target, msg.local, msg.remote) })
	case copyEntered:
		return a.onTarget("copy", msg.target, func() tea.Cmd { return a.startCopy(msg.target, msg.req) })
	case paletteCommand:
		return a.runCommand(msg)
	case deleteConfirmed:
		what := "delete"
		if msg.force {
			what = "force delete"
		}
		return a.onTarget(what, msg.target, func() tea.Cmd { return a.deleteSandbox(msg.target, msg.force) })
	case stopForwardConfirmed:
		return a.stopForward(msg.addr)
	case quitConfirmed:
		return a.quit(true)
	case confirmCancelled:
		a.setFlash(msg.what+" cancelled", false)
	case createSubmitted:
		return a.startCreate(msg.req, msg.context)
	}
	return nil
}
