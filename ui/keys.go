package ui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"sigs.k8s.io/yaml"
)

// KeyMap is every binding of the UI. Field names (lower-cased) are the action
// names of keys.yaml.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Filter, Problems, Command, Back, Help   key.Binding
	Detail, YAML, Logs, Previous, Events    key.Binding
	Follow                                  key.Binding
	// In a log or output view: line wrap, the kubelet's timestamps, the
	// next and previous search match, save to a file.
	Wrap, Timestamps, NextMatch, PrevMatch, Save key.Binding
	// In a log view: the next container of the Pod (init ones first).
	Container                    key.Binding
	Shell, Exec, Create, Delete  key.Binding
	ForceDelete                  key.Binding // k9s's kill
	Forward, Copy                key.Binding
	SortName, SortAge, SortState key.Binding
	SortRestarts, Wide, Commands key.Binding
	Quit                         key.Binding
}

// DefaultKeyMap follows k9s habits.
func DefaultKeyMap() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKeys(keys), help))
	}
	return KeyMap{
		Up:           b("up", "up", "k"),
		Down:         b("down", "down", "j"),
		PageUp:       b("page up", "pgup", "ctrl+b"),
		PageDown:     b("page down", "pgdown", "ctrl+f", " "),
		Top:          b("top", "g", "home"),
		Bottom:       b("bottom", "G", "end"),
		Filter:       b("filter (!inv, -l k=v)", "/"),
		Problems:     b("problems only", "z"),
		Command:      b("command", ":"),
		Back:         b("back/clear", "esc", "-"),
		Help:         b("help", "?"),
		Detail:       b("detail", "d", "enter"),
		YAML:         b("yaml", "y"),
		Logs:         b("logs", "l"),
		Previous:     b("previous logs", "p"),
		Events:       b("events", "e"),
		Follow:       b("follow", "f"),
		Wrap:         b("wrap lines", "w"),
		Timestamps:   b("timestamps", "t"),
		NextMatch:    b("next match", "n"),
		PrevMatch:    b("previous match", "N"),
		Save:         b("save to file", "ctrl+s"),
		Container:    b("logs: next container (init ones too)", "C"),
		Shell:        b("shell", "s"),
		Exec:         b("exec", "x"),
		Create:       b("create", "c"),
		Forward:      b("port-forward", "F"),
		Copy:         b("copy files", "o"),
		Delete:       b("delete", "ctrl+d"),
		ForceDelete:  b("force delete (no grace)", "ctrl+k"),
		SortName:     b("sort name", "N"),
		SortAge:      b("sort age", "A"),
		SortState:    b("sort state", "S"),
		SortRestarts: b("sort restarts", "R"),
		Wide:         b("wide: every column", "ctrl+w"),
		Commands:     b("commands and aliases", "ctrl+a"),
		Quit:         b("quit", "q", "ctrl+c"),
	}
}

// actions maps keys.yaml names to bindings.
func (k *KeyMap) actions() map[string]*key.Binding {
	return map[string]*key.Binding{
		"up": &k.Up, "down": &k.Down, "pageup": &k.PageUp, "pagedown": &k.PageDown,
		"top": &k.Top, "bottom": &k.Bottom, "filter": &k.Filter, "problems": &k.Problems,
		"command": &k.Command, "back": &k.Back, "help": &k.Help, "detail": &k.Detail,
		"yaml": &k.YAML, "logs": &k.Logs, "previous": &k.Previous, "events": &k.Events,
		"follow": &k.Follow, "shell": &k.Shell, "exec": &k.Exec, "create": &k.Create,
		"delete": &k.Delete, "forcedelete": &k.ForceDelete, "forward": &k.Forward, "copy": &k.Copy, "sortname": &k.SortName, "sortage": &k.SortAge,
		"sortstate": &k.SortState, "sortrestarts": &k.SortRestarts, "wide": &k.Wide, "commands": &k.Commands, "quit": &k.Quit,
		"wrap": &k.Wrap, "timestamps": &k.Timestamps, "nextmatch": &k.NextMatch, "prevmatch": &k.PrevMatch,
		"save": &k.Save, "container": &k.Container,
	}
}

// textOnly and listOnly are the actions of a log/output view and of a
// list only: a key may serve one of each (N sorts a list by name and goes to
// the previous match in a log), as the view on top decides.
var (
	textOnly = map[string]bool{"wrap": true, "timestamps": true, "nextmatch": true, "prevmatch": true, "save": true, "container": true}
	listOnly = map[string]bool{"sortname": true, "sortage": true, "sortstate": true, "sortrestarts": true, "wide": true, "problems": true}
)

// yieldsToFile are the actions whose default keys a key map file may give
// to another action without a collision error: they lose those keys.
var yieldsToFile = map[string]bool{"forcedelete": true}

// sharesKeys reports whether actions a and b may be bound to one key.
func sharesKeys(a, b string) bool {
	return (textOnly[a] && listOnly[b]) || (listOnly[a] && textOnly[b])
}

// KeysPath is where the key map lives: $XDG_CONFIG_HOME/sandscope/keys.yaml,
// falling back to ~/.config/sandscope/keys.yaml.
func KeysPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "sandscope", "keys.yaml")
}

// LoadKeyMap reads the key map file (path "" = KeysPath()). A missing file is
// not an error. A bad file returns the defaults and an error that names the
// file and the problem, so the UI can show it and keep working.
//
// Format: action: [keys...] (or a single string), e.g.
//
//	delete: ctrl+k
//	shell: [s, ctrl+o]
func LoadKeyMap(path string) (KeyMap, error) {
	def := DefaultKeyMap()
	if path == "" {
		path = KeysPath()
	}
	if path == "" {
		return def, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return def, fmt.Errorf("key map %s: %w (using default keys)", path, err)
	}
	km, err := parseKeyMap(data)
	if err != nil {
		return def, fmt.Errorf("key map %s: %w (using default keys)", path, err)
	}
	return km, nil
}

func parseKeyMap(data []byte) (KeyMap, error) {
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return KeyMap{}, fmt.Errorf("not YAML: %w", err)
	}
	km := DefaultKeyMap()
	acts := km.actions()
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		b, ok := acts[strings.ToLower(name)]
		if !ok {
			return KeyMap{}, fmt.Errorf("unknown action %q (known: %s)", name, strings.Join(actionNames(acts), ", "))
		}
		var keys []string
		switch v := raw[name].(type) {
		case string:
			keys = []string{v}
		case []any:
			for _, k := range v {
				s, ok := k.(string)
				if !ok || s == "" {
					return KeyMap{}, fmt.Errorf("action %q: keys must be non-empty strings", name)
				}
				keys = append(keys, s)
			}
		default:
			return KeyMap{}, fmt.Errorf("action %q: want a key or a list of keys", name)
		}
		if len(keys) == 0 || keys[0] == "" {
			return KeyMap{}, fmt.Errorf("action %q: no keys", name)
		}
		for _, k := range keys {
			if !validKey(k) {
				return KeyMap{}, fmt.Errorf("action %q: %q is not a key (a character, or a name such as enter, esc, tab, pgdown, f5, ctrl+k, alt+x)", name, k)
			}
		}
		b.SetKeys(keys...)
		b.SetHelp(helpKeys(keys), b.Help().Desc)
	}
	// A key the file gives to an action is taken from a default that
	// yields (force delete's ctrl+k, which "delete: ctrl+k" files written
	// before it existed give to delete), so that such a file stays valid.
	given := map[string]string{}
	for _, name := range names {
		for _, k := range acts[strings.ToLower(name)].Keys() {
			given[k] = strings.ToLower(name)
		}
	}
	for _, name := range actionNames(acts) {
		if _, configured := raw[name]; configured || !yieldsToFile[name] {
			continue
		}
		b := acts[name]
		keep := slices.DeleteFunc(slices.Clone(b.Keys()), func(k string) bool {
			owner, taken := given[k]
			return taken && owner != name && !sharesKeys(owner, name)
		})
		if len(keep) != len(b.Keys()) {
			b.SetKeys(keep...)
			b.SetHelp(helpKeys(keep), b.Help().Desc)
		}
	}
	// One key, one action: a collision would silently shadow an action.
	owner := map[string][]string{}
	for _, name := range actionNames(acts) {
		for _, k := range acts[name].Keys() {
			for _, prev := range owner[k] {
				if !sharesKeys(prev, name) {
					return KeyMap{}, fmt.Errorf("key %q bound to both %q and %q", k, prev, name)
				}
			}
			owner[k] = append(owner[k], name)
		}
	}
	return km, nil
}

func actionNames(m map[string]*key.Binding) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// keyNames are the names bubbletea gives the keys it reports (enter, esc,
// ctrl+k, pgdown, f5, ...): a key map binding any other word never matches.
var keyNames = func() map[string]bool {
	names := map[string]bool{}
	for t := tea.KeyType(-512); t < 512; t++ {
		if n := t.String(); n != "" && n != "runes" {
			names[n] = true
		}
	}
	return names
}()

// validKey reports whether s names a key bubbletea can report: one
// printable character or a key name, either optionally with alt+.
func validKey(s string) bool {
	s = strings.TrimPrefix(s, "alt+")
	if keyNames[s] {
		return true
	}
	r := []rune(s)
	return len(r) == 1 && unicode.IsPrint(r[0]) && r[0] != ' '
}

// helpKeys is how help shows a binding's keys: every one of them (j and
// down both move), a space as "space".
func helpKeys(keys []string) string {
	shown := make([]string, len(keys))
	for i, k := range keys {
		switch k {
		case " ":
			k = "space"
		case "up":
			k = "↑"
		case "down":
			k = "↓"
		}
		shown[i] = k
	}
	return strings.Join(shown, "/")
}
