package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// pasteKeys types n runes into the open dialog one key at a time, as a
// terminal without bracketed paste (or a script) delivers a paste, with a
// frame every frameEvery keys.
func pasteKeys(app *App, n, frameEvery int) {
	keys := []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune("a")}, {Type: tea.KeySpace, Runes: []rune(" ")}, {Type: tea.KeyRunes, Runes: []rune("é")}}
	for i := 0; i < n; i++ {
		app.Update(keys[i%len(keys)])
		if frameEvery > 0 && i%frameEvery == 0 {
			_ = app.View()
		}
	}
}

// A 200,000-character paste arriving key by key into the filter stops at
// maxPromptRunes, says so, and the footer shows the end of the line within
// the terminal's width.
func TestHugePasteIntoThePromptIsBounded(t *testing.T) {
	app := benchApp(&fakeSource{snap: bigSnapshot(100)})
	app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	p, ok := app.dialog.(*prompt)
	if !ok {
		t.Fatalf("/ opened %T, not the filter prompt", app.dialog)
	}
	pasteKeys(app, 200_000, 10_000)
	if n := len([]rune(p.input.Value())); n != maxPromptRunes || p.runes != maxPromptRunes {
		t.Fatalf("after a 200,000-key paste the line holds %d runes (counted %d), want %d", n, p.runes, maxPromptRunes)
	}
	footer := app.footerLines(160)[0]
	if w := ansi.StringWidth(footer); w > 160 || !strings.Contains(footer, "at most") {
		t.Errorf("footer is %d columns, want at most 160 and the limit said: %q", w, footer)
	}
	if f := p.view(app.c, 160); ansi.StringWidth(f) > 160 || !strings.Contains(ansi.Strip(f), "a éa éa é") {
		t.Errorf("the prompt does not show the end of its line within 160 columns: %q", f)
	}
	// The filter follows the bounded line.
	if sv := app.top().(*sandboxesView); len([]rune(sv.filter.Text)) > maxPromptRunes {
		t.Errorf("the list's filter is %d runes long", len([]rune(sv.filter.Text)))
	}
}

// BenchmarkPromptPasteKey is one key of a paste arriving key by key into
// the filter (1,000 rows), with the frame that follows, after n keys of
// it: the cost of a key stays flat however much was pasted before it
// (it grew with the line, quadratic over the paste, before the bound).
func BenchmarkPromptPasteKey(b *testing.B) {
	for _, n := range []int{100, 1000, 10_000, 200_000} {
		b.Run(fmt.Sprintf("after=%d", n), func(b *testing.B) {
			app := benchApp(&fakeSource{snap: bigSnapshot(1000)})
			app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
			pasteKeys(app, n, 0)
			key := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")}
			undo := tea.KeyMsg{Type: tea.KeyBackspace}
			full := app.dialog.(*prompt).runes >= maxPromptRunes
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				app.Update(key)
				_ = app.View()
				if !full {
					b.StopTimer()
					app.Update(undo) // the line keeps its length
					b.StartTimer()
				}
			}
		})
	}
}
