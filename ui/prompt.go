package ui

import (
	"strconv"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// prompt is the footer's input line: "/" filters a list or searches a text
// view as it is typed, "x" asks for the command to exec, "F" for the port
// to forward, and the palette (":") is one too. The line is edited with
// bubbles' textinput keys (cursor moves, ctrl+u, ctrl+w, ctrl+v pastes);
// enter and esc are the prompt's own. What the line means is up to the
// functions it was opened with, which turn it into tagged messages.
type prompt struct {
	input textinput.Model
	keys  promptKeys
	// edited is what each edit of the line means, when it means something
	// before enter (the filter and the search follow the text as typed).
	edited func(line string) tea.Msg
	// accepted is what enter means: a message, or an error that keeps the
	// line open, to be mended, with the reason beside it. nil: nothing.
	accepted func(line string) (tea.Msg, error)
	// cancelled is what esc means (nil: nothing).
	cancelled tea.Msg
	err       string // why the line was not accepted; the next key clears it
	// runes is the line's length, and last the line edited last saw: a
	// key beyond maxPromptRunes, or one that changes nothing, costs no
	// pass over the line.
	runes int
	last  string
}

// maxPromptRunes bounds a prompt's line (a filter, a command, a port): a
// paste arriving key by key (a terminal without bracketed paste, a
// script) stops growing it there, and every key past it is dropped
// without reading the line, so the cost of a key never grows with what
// was pasted.
const maxPromptRunes = 2048

// promptKeys are the prompt's own keys.
type promptKeys struct {
	Accept, Cancel key.Binding
}

func defaultPromptKeys() promptKeys {
	return promptKeys{
		Accept: typedKey("enter", "accept", "enter"),
		Cancel: typedKey("esc", "cancel", "esc"),
	}
}

// Messages of the prompts.
type (
	// filterEdited: the filter line of the list on top now reads text.
	filterEdited struct{ text string }
	// filterCleared: the filter was dropped (esc).
	filterCleared struct{}
	// searchEdited: the search of the text view on top now reads text
	// ("" drops it).
	searchEdited struct{ text string }
	// execEntered: run argv in target, in a view of its own.
	execEntered struct {
		target pick
		argv   []string
	}
	// forwardEntered: forward local (0: a free port) to remote of
	// target's Pod.
	forwardEntered struct {
		target        pick
		local, remote int
	}
)

// newPrompt opens a line labelled label, holding value.
func newPrompt(label, value string) *prompt {
	p := &prompt{input: textinput.New(), keys: defaultPromptKeys()}
	p.input.ShowSuggestions = true
	p.input.Prompt = label
	p.input.CharLimit = maxPromptRunes
	p.input.SetValue(value)
	p.input.CursorEnd()
	p.input.Focus()
	p.last = p.input.Value()
	p.runes = utf8.RuneCountInString(p.last)
	return p
}

func (p *prompt) update(msg tea.KeyMsg) (tea.Cmd, tea.Msg, bool) {
	p.err = ""
	switch {
	case key.Matches(msg, p.keys.Cancel):
		return nil, p.cancelled, true
	case key.Matches(msg, p.keys.Accept):
		if p.accepted == nil {
			return nil, nil, true
		}
		out, err := p.accepted(p.input.Value())
		if err != nil {
			p.err = err.Error()
			return nil, nil, false
		}
		return nil, out, true
	}
	if p.runes >= maxPromptRunes && (msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace) {
		p.err = "the line holds " + strconv.Itoa(maxPromptRunes) + " characters at most"
		return nil, nil, false
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	line := p.input.Value()
	p.runes = utf8.RuneCountInString(line)
	if p.edited == nil || line == p.last {
		return cmd, nil, false
	}
	p.last = line
	return cmd, p.edited(line), false
}

// fit makes the input show only what fits in width beside its label (and
// the error, when there is one), so drawing a long line costs what is
// visible. A line that fits anyway is drawn whole, unpadded.
func (p *prompt) fit(width int) {
	avail := width - ansi.StringWidth(p.input.Prompt) - 1 // the cursor's cell
	if p.err != "" {
		avail -= min(ansi.StringWidth(p.err)+4, avail/2)
	}
	avail = max(avail, 1)
	w := 0
	if 2*p.runes > avail { // a rune is at most two columns
		w = avail
	}
	if p.input.Width != w {
		p.input.Width = w
		p.input.SetCursor(p.input.Position()) // scroll the window to the cursor
	}
}

func (p *prompt) view(c *shared, width int) string {
	p.fit(width)
	line := p.input.View()
	if p.err != "" {
		line += "  " + c.st.flashErr.Render(fitLine("✗ "+p.err, max(width-ansi.StringWidth(line)-2, 0)))
	}
	return line
}

// newFilterPrompt is "/" over a list: the filter follows the line, esc
// drops it, enter keeps it.
func newFilterPrompt(current string) *prompt {
	p := newPrompt("/", current)
	p.edited = func(line string) tea.Msg { return filterEdited{line} }
	p.cancelled = filterCleared{}
	return p
}

// newSearchPrompt is "/" over a text view: the view follows the text as
// it is typed; enter keeps it (n/N move between matches), esc drops it.
func newSearchPrompt(current string) *prompt {
	p := newPrompt("/", current)
	p.edited = func(line string) tea.Msg { return searchEdited{line} }
	p.cancelled = searchEdited{""}
	return p
}

// newExecPrompt asks for the command to run in target, split as a shell
// would (an unterminated quote keeps the line open).
func newExecPrompt(target pick) *prompt {
	// The short id leaves the line for the command on a narrow terminal.
	where := target.sb.Namespace() + "/" + shortIDs(target.sb.Name())
	if target.ctx != "" {
		where = target.ctx + ":" + where
	}
	return newWordsPrompt("exec "+textsafe.Line(where)+"> ", func(argv []string) (tea.Msg, error) {
		return execEntered{target: target, argv: argv}, nil
	})
}

// newWordsPrompt is a prompt whose line is split as a shell would (an
// unterminated quote keeps it open) and handed to entered; an empty line
// does nothing.
func newWordsPrompt(label string, entered func(words []string) (tea.Msg, error)) *prompt {
	p := newPrompt(label, "")
	p.accepted = func(line string) (tea.Msg, error) {
		words, err := shellWords(line)
		if err != nil || len(words) == 0 {
			return nil, err
		}
		return entered(words)
	}
	return p
}

// newForwardPrompt asks for the port of a forward to target: PORT or
// LOCAL:PORT, execd's port first.
func newForwardPrompt(target pick) *prompt {
	p := newPrompt("forward "+textsafe.Line(target.label())+" [LOCAL:]PORT> ", strconv.Itoa(execdPort))
	p.accepted = func(line string) (tea.Msg, error) {
		local, remote, err := parsePorts(line)
		if err != nil {
			return nil, err
		}
		return forwardEntered{target: target, local: local, remote: remote}, nil
	}
	return p
}
