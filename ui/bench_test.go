package ui

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
)

// BenchmarkFilterKeystroke measures keystroke-to-frame in process: one
// Update for a key typed into the "/" filter plus the View that follows.
// narrow: a character added to an existing pattern (the common case);
// first: the first character of a fresh filter (a whole-fleet search).
// Target: < 16 ms at 50,000 rows.
func BenchmarkFilterKeystroke(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		for _, tc := range []struct {
			name, before, key string
		}{{"narrow", "sandbox-00", "1"}, {"first", "", "s"}} {
			b.Run(fmt.Sprintf("rows=%d/%s", n, tc.name), func(b *testing.B) {
				app := New(&fakeSource{snap: bigSnapshot(n)}, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
				app.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
				app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
				sv := app.top().(*sandboxesView)
				key := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(tc.key)}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					f, _ := model.ParseFilter(tc.before)
					sv.setFilter(f, app.c)
					app.input.SetValue(tc.before)
					app.input.CursorEnd()
					b.StartTimer()
					app.Update(key)
					_ = app.View()
				}
				b.StopTimer()
				if len(sv.visible) == 0 {
					b.Fatal("filter matched nothing")
				}
			})
		}
	}
}

// BenchmarkLiveUpdate measures taking a new snapshot version in which 1% of
// the sandboxes changed (row cache reuse, resort, refilter) plus one frame.
func BenchmarkLiveUpdate(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			src := &fakeSource{snap: bigSnapshot(n)}
			app := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
			app.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				prev := src.snap
				next := model.Snapshot{Version: prev.Version + 1, Status: prev.Status,
					Sandboxes: append([]*model.Sandbox(nil), prev.Sandboxes...)}
				for j := i % 100; j < n; j += 100 {
					c := *next.Sandboxes[j]
					c.Restarts++
					next.Sandboxes[j] = &c
				}
				src.snap = &next
				b.StartTimer()
				app.Update(refreshMsg{})
				_ = app.View()
			}
		})
	}
}
