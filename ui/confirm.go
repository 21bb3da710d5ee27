package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
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
	deleteConfirmed      struct{ target pick }
	stopForwardConfirmed struct{ addr string }
	// quitConfirmed: quit, stopping the open port-forwards.
	quitConfirmed struct{}
	// confirmCancelled: the answer was no to the action what.
	confirmCancelled struct{ what string }
)

// newDeleteConfirm asks before deleting target's sandbox object.
func newDeleteConfirm(target pick) *confirm {
	q := fmt.Sprintf("Delete %s %s? This cannot be undone.", target.sb.Engine(), target.label())
	if claim := target.sb.Claim(); claim != "" {
		q = fmt.Sprintf("Delete claim %s and its %s %s? This cannot be undone.", claim, target.sb.Engine(), target.label())
	}
	return &confirm{question: q,
		keys: defaultConfirmKeys(), yes: deleteConfirmed{target}, no: confirmCancelled{"delete"}}
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
