package ui

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// readmeKeys is the README's "## Keys" section.
func readmeKeys(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	start := strings.Index(s, "## Keys\n")
	if start < 0 {
		t.Fatal("README has no ## Keys section")
	}
	s = s[start+len("## Keys\n"):]
	if end := strings.Index(s, "\n## "); end >= 0 {
		s = s[:end]
	}
	return s
}

var backticked = regexp.MustCompile("`([^`]+)`")

// The README's keys table, the help (?) and the key map agree: every
// binding is in the README, every key the table's first column names is
// bound (or read by the App itself: the number keys) and shown by help.
func TestREADMEKeysAgreeWithTheCode(t *testing.T) {
	section := readmeKeys(t)
	km := DefaultKeyMap()
	documented := func(k string) bool {
		switch k {
		case "up", "down":
			return strings.Contains(section, "arrows")
		case " ":
			return true // space pages down as pgdown does
		}
		return strings.Contains(section, "`"+k+"`")
	}
	for _, name := range actionNames(km.actions()) {
		b := km.actions()[name]
		if !slices.ContainsFunc(b.Keys(), documented) {
			t.Errorf("README's keys never name %s (%s)", name, strings.Join(b.Keys(), ", "))
		}
	}

	a := New(&fakeSource{snap: incidentSnapshot()}, fullBackend(), Options{Now: fixedNow}, km)
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	help := ansi.Strip(strings.Join(a.fullHelpLines(200), "\n"))
	bound := map[string]bool{}
	for _, b := range km.actions() {
		for _, k := range b.Keys() {
			bound[k] = true
		}
	}
	for _, k := range favoritesBinding.Keys() {
		bound[k] = true
	}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(line, "|---") || strings.TrimSpace(cells[1]) == "key" {
			continue
		}
		rows++
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			k := m[1]
			if !bound[k] {
				k = strings.ToLower(k) // Enter, Esc
			}
			if !bound[k] {
				t.Errorf("README's keys table names %q, which nothing binds", m[1])
			}
			if !strings.Contains(help, k) {
				t.Errorf("README's keys table names %q, which help does not show:\n%s", m[1], help)
			}
		}
	}
	if rows < 10 {
		t.Fatalf("read %d rows of the README's keys table", rows)
	}
	for _, e := range paletteCommands {
		if !strings.Contains(section, "`:"+e.names[0]) {
			t.Errorf("README's keys never name the :%s command", e.names[0])
		}
	}
}
