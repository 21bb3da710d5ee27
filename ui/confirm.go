package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// confirm is a y/N question in the footer: y answers yes, any other key
// no, as the capital N says. Either answer closes it.
type confirm struct {
	question string
	keys     confirmKeys
	yes, no  tea.Msg // what each answer means to the App
}

// confirmKeys are a confirmation's keys; No is there for its help (the
// "N" of "[y/N]"): every key but Yes answers no.
type confirmKeys struct {
	Yes, No key.Binding
}

func defaultConfirmKeys() confirmKeys {
	return confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("N", "no")),
	}
}

// Messages of the confirmations.
type (
	deleteConfirmed struct {
		target pick
		force  bool // no grace period, the Pods too (k9s's kill)
	}
	stopForwardConfirmed struct{ addr string }
	// quitConfirmed: quit, stopping the open port-forwards.
	quitConfirmed struct{}
	// confirmCancelled: the answer was no to the action what.
	confirmCancelled struct{ what string }
)

// newDeleteConfirm asks before deleting target's sandbox object; a force
// delete also names the finalizers that will still hold it.
func newDeleteConfirm(target pick, force bool) *confirm {
	q := fmt.Sprintf("Delete %s %s? This cannot be undone.", target.sb.Engine(), target.label())
	if claim := target.sb.Claim(); claim != "" {
		q = fmt.Sprintf("Delete claim %s and its %s %s? This cannot be undone.", claim, target.sb.Engine(), target.label())
	}
	what := "delete"
	if force {
		what = "force delete"
		q = fmt.Sprintf("Force delete %s %s and its Pods, no grace period? This cannot be undone.", target.sb.Engine(), target.label())
		if f := target.sb.Finalizers(); len(f) > 0 {
			q += " Finalizers " + strings.Join(f, ", ") + " still hold it until their controllers remove them."
		}
	}
	return &confirm{question: textsafe.Line(q), keys: defaultConfirmKeys(), yes: deleteConfirmed{target, force}, no: confirmCancelled{what}}
}

// newStopForwardConfirm asks before stopping the forward listening on addr.
func newStopForwardConfirm(addr string) *confirm {
	return &confirm{question: fmt.Sprintf("Stop port-forward %s?", addr),
		keys: defaultConfirmKeys(), yes: stopForwardConfirmed{addr}, no: confirmCancelled{"stop"}}
}

func (c *confirm) update(msg tea.KeyMsg) (tea.Cmd, tea.Msg, bool) {
	if key.Matches(msg, c.keys.Yes) {
		return nil, c.yes, true
	}
	return nil, c.no, true
}

func (c *confirm) view(sh *shared, width int) string {
	// The answer keys first: a long id must not push them off a narrow terminal.
	q := fmt.Sprintf("[%s/%s] %s", c.keys.Yes.Help().Key, c.keys.No.Help().Key, c.question)
	return sh.st.flashErr.Render(fitLine(q, width))
}
