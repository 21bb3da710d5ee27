package ui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// paletteEntry is one command of the palette.
type paletteEntry struct {
	// names are the command's names, the first one the command's own (the
	// verb of paletteCommand), the others its aliases; hidden are aliases
	// that neither ctrl+a nor completion offer.
	names, hidden []string
	args, help    string // as ctrl+a shows them
	// complete are what tab completes to, in the order offered.
	complete []string
}

// paletteCommands are the palette's commands: what ":" accepts, completes
// and ctrl+a lists.
var paletteCommands = []paletteEntry{
	{names: []string{"sb", "sandbox", "sandboxes"}, args: "[/TEXT | LABEL=VALUE]", help: "the sandboxes (filtered; alone: every one, the filter cleared)",
		complete: []string{"sandboxes", "sb"}},
	{names: []string{"pods", "pod", "po"}, args: "[/TEXT | LABEL=VALUE]", help: "the Pods of the fleet", complete: []string{"pods"}},
	{names: []string{"pools", "pool"}, help: "the Pools and warm pools", complete: []string{"pools"}},
	{names: []string{"claims", "claim"}, help: "the agent-sandbox claims (enter: the claimed sandbox)", complete: []string{"claims"}},
	{names: []string{"ns", "namespace"}, args: "[NAME | all]", help: "the namespaces (enter shows one); NAME: show that one, all: every one (0-9: favorites)",
		complete: []string{"ns "}},
	{names: []string{"ctx", "context"}, args: "[NAME | all]",
		help:     "the contexts (enter shows one); NAME: show that one; all: every context sandscope was started with",
		complete: []string{"ctx "}},
	{names: []string{"messages", "msg"}, hidden: []string{"messages!"}, help: "every message and refusal, whole, with its evidence",
		complete: []string{"messages"}},
	{names: []string{"pf", "portforward", "portforwards", "port-forwards"},
		help: "the open port-forwards (F opens one); ctrl+d stops one", complete: []string{"pf"}},
	{names: []string{"help", "?"}, help: "the key bindings", complete: []string{"help"}},
	{names: []string{"q", "quit"}, hidden: []string{"q!"}, help: "quit", complete: []string{"q", "quit"}},
}

// paletteCommand is a palette line to carry out.
type paletteCommand struct {
	verb  string // the command's own name, whichever alias was typed; "" when no command has that name
	typed string // the name as typed, lower-cased
	args  []string
}

// palette is the ":" command line: a prompt whose tab completes the
// commands, the namespaces in view and the contexts, and whose enter names
// the command typed (paletteCommand) for the App to carry out.
type palette struct {
	*prompt
	keys paletteKeys
}

// paletteKeys are the palette's keys: the prompt's, and tab completing the
// suggestion shown.
type paletteKeys struct {
	promptKeys
	Complete key.Binding
}

func defaultPaletteKeys() paletteKeys {
	return paletteKeys{promptKeys: defaultPromptKeys(), Complete: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete"))}
}

// newPalette opens the palette, offering suggestions (paletteSuggestions).
func newPalette(suggestions []string) *palette {
	p := &palette{prompt: newPrompt(":", ""), keys: defaultPaletteKeys()}
	p.prompt.keys = p.keys.promptKeys
	p.input.KeyMap.AcceptSuggestion = p.keys.Complete
	p.input.SetSuggestions(suggestions)
	p.accepted = func(line string) (tea.Msg, error) { return parseCommand(line), nil }
	return p
}

// parseCommand reads a palette line: ":sb /text", ":sb app=x", ":pods",
// ":ns NAME", ":ctx NAME", ":q". An empty line is nothing (nil).
func parseCommand(line string) tea.Msg {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil
	}
	cmd := paletteCommand{typed: strings.ToLower(fields[0]), args: fields[1:]}
	for _, e := range paletteCommands {
		for _, names := range [][]string{e.names, e.hidden} {
			for _, name := range names {
				if name == cmd.typed {
					cmd.verb = e.names[0]
					return cmd
				}
			}
		}
	}
	return cmd
}

// paletteSuggestions are what the palette completes: its commands, then
// the namespaces of the fleets in view and the contexts.
func paletteSuggestions(c *shared) []string {
	var out []string
	for _, e := range paletteCommands {
		out = append(out, e.complete...)
	}
	seen := map[string]bool{}
	var nss []string
	for _, sb := range c.sandboxes() {
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
	if c.be.ForContext != nil {
		out = append(out, "ctx all")
	}
	if c.be.Contexts != nil {
		for _, ctx := range c.be.Contexts() {
			out = append(out, "ctx "+ctx)
		}
	}
	return out
}

// paletteHelpLines are what ctrl+a lists: every command with its aliases
// and what it does.
func paletteHelpLines() []string {
	usage := make([]string, len(paletteCommands))
	width := 0
	for i, e := range paletteCommands {
		usage[i] = ":" + strings.Join(e.names, ", :")
		if e.args != "" {
			usage[i] += " " + e.args
		}
		width = max(width, len(usage[i]))
	}
	lines := make([]string, len(paletteCommands))
	for i, e := range paletteCommands {
		lines[i] = fmt.Sprintf("%-*s  %s", width, usage[i], e.help)
	}
	return lines
}
