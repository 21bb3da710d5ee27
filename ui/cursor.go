package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// gapCursor is the cursor of the sandboxes and the other lists. When the
// row it is on leaves the view (deleted, or no longer matching), it stays on
// nothing, a marked gap before visible[cursor] named by lost, until the
// user moves it: it never slides onto another row that the next key would
// act on.
type gapCursor struct {
	cursor int
	lost   string // the row that left from under the cursor; "" when on a row (or on none, there being none)
}

// lostCursor names the row that left from under the cursor ("" when the
// cursor is on a row, or on none because there are none).
func (g *gapCursor) lostCursor() string { return g.lost }

// onRow reports whether the cursor is on one of n visible rows.
func (g *gapCursor) onRow(n int) bool { return g.cursor < n && g.lost == "" }

// found puts the cursor on visible row i, its row found again.
func (g *gapCursor) found(i int) { g.cursor, g.lost = i, "" }

// left puts the cursor on the gap its row, named label, left among n
// visible rows: where it was, or after the last.
func (g *gapCursor) left(label string, n int) {
	if g.lost == "" {
		g.lost = label
	}
	g.cursor = min(g.cursor, n)
}

// lines is how many lines n visible rows take: one more for the gap.
func (g *gapCursor) lines(n int) int {
	if g.lost != "" {
		return n + 1
	}
	return n
}

// line is what line i of the rows shows: the gap, or visible row j.
func (g *gapCursor) line(i int) (j int, gap bool) {
	switch {
	case g.lost == "" || i < g.cursor:
		return i, false
	case i == g.cursor:
		return 0, true
	}
	return i - 1, false
}

// move moves the cursor over n rows of page lines for a navigation key or
// the wheel, and reports whether it did. A move starts from the cursor,
// or, on the gap, from the row above for a move down, so that down lands
// on the row below the gap, and up on the row above it.
func (g *gapCursor) move(msg tea.Msg, k KeyMap, n, page int) bool {
	fromGap := func(down bool) int {
		if g.lost != "" && down {
			return g.cursor - 1
		}
		return g.cursor
	}
	var cur int
	switch msg := msg.(type) {
	case tea.KeyMsg:
		cur = fromGap(key.Matches(msg, k.Down) || key.Matches(msg, k.PageDown))
		if !moveCursor(msg, k, &cur, n, page) {
			return false
		}
	case tea.MouseMsg:
		cur = fromGap(msg.Button == tea.MouseButtonWheelDown)
		if !wheelCursor(msg, &cur, n) {
			return false
		}
	default:
		return false
	}
	if n == 0 {
		return false
	}
	g.cursor = cur
	return true
}
