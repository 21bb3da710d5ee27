package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// namedKeys are the keys the dialog tests press by name.
var namedKeys = map[string]tea.KeyMsg{
	"enter":     {Type: tea.KeyEnter},
	"alt+enter": {Type: tea.KeyEnter, Alt: true},
	"esc":       {Type: tea.KeyEsc},
	"alt+esc":   {Type: tea.KeyEsc, Alt: true},
	"tab":       {Type: tea.KeyTab},
	"shift+tab": {Type: tea.KeyShiftTab},
	"backspace": {Type: tea.KeyBackspace},
	"ctrl+c":    {Type: tea.KeyCtrlC},
	"ctrl+u":    {Type: tea.KeyCtrlU},
	"ctrl+s":    {Type: tea.KeyCtrlS},
	"ctrl+n":    {Type: tea.KeyCtrlN},
	"ctrl+p":    {Type: tea.KeyCtrlP},
	"right":     {Type: tea.KeyRight},
	"alt+y":     {Type: tea.KeyRunes, Runes: []rune("y"), Alt: true},
}

// press sends d each key in turn: a named key, or text typed a character
// at a time. It returns what the keys meant (nil where nothing) and fails
// when a key comes after the one that closed d.
func press(t *testing.T, d dialog, ks ...string) (outs []tea.Msg, done bool) {
	t.Helper()
	send := func(msg tea.KeyMsg) {
		if done {
			t.Fatalf("%q pressed in a closed dialog", msg)
		}
		var out tea.Msg
		_, out, done = d.update(msg)
		outs = append(outs, out)
	}
	for _, k := range ks {
		if msg, ok := namedKeys[k]; ok {
			send(msg)
			continue
		}
		for _, r := range k {
			send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		}
	}
	return outs, done
}

// last is the last of outs.
func last(outs []tea.Msg) tea.Msg { return outs[len(outs)-1] }

// testShared is the shared context a dialog's view reads (its styles).
func testShared() *shared { return &shared{st: newStyles(), now: fixedNow} }
