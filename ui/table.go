package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/mattn/go-runewidth"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// column describes one table column. Drop is the order in which narrow
// terminals give the column up (1 first; 0 = never dropped). Max caps the
// natural width so one long name cannot starve the others. Shrink, when
// set, is how narrow a name column may be cut (with …) before any column
// is dropped: a cut id still tells its row apart, a dropped column tells
// nothing. Hidden leaves the column out whatever the width (a column with
// nothing to show).
type column struct {
	Title  string
	Drop   int
	Max    int
	Shrink int
	Right  bool
	Hidden bool
}

// severity of a row, for highlighting.
type rowSev uint8

const (
	sevNone rowSev = iota
	sevWarn
	sevErr
)

// layout decides which columns fit in width and how wide each is. natural[i]
// is the widest cell of column i (title included). It returns the indexes of
// the kept columns and their widths.
func layout(cols []column, natural []int, width int) (keep []int, widths []int) {
	const gap = 1
	w := make([]int, len(cols))
	alive := make([]bool, len(cols))
	total := 0
	for i, c := range cols {
		w[i] = natural[i]
		if c.Max > 0 && w[i] > c.Max {
			w[i] = c.Max
		}
		if tw := runewidth.StringWidth(c.Title); w[i] < tw {
			w[i] = tw
		}
		if c.Hidden {
			continue
		}
		alive[i] = true
		total += w[i] + gap
	}
	// Cut the name columns that may be cut, widest first, down to their
	// floors; then drop low-value columns until the rest fits.
	for total > width {
		widest := -1
		for i, c := range cols {
			if alive[i] && c.Shrink > 0 && w[i] > c.Shrink && (widest < 0 || w[i] > w[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		w[widest]--
		total--
	}
	for total > width {
		victim, rank := -1, 0
		for i, c := range cols {
			if alive[i] && c.Drop > rank {
				victim, rank = i, c.Drop
			}
		}
		if victim < 0 {
			break
		}
		alive[victim] = false
		total -= w[victim] + gap
	}
	// Still too wide: shrink the widest columns, never below their title or 6 cells.
	for total > width {
		widest := -1
		for i := range cols {
			if alive[i] && (widest < 0 || w[i] > w[widest]) {
				widest = i
			}
		}
		floor := max(6, min(runewidth.StringWidth(cols[widest].Title), 8))
		if widest < 0 || w[widest] <= floor {
			break
		}
		w[widest]--
		total--
	}
	for i := range cols {
		if alive[i] {
			keep = append(keep, i)
			widths = append(widths, w[i])
		}
	}
	return keep, widths
}

// renderCells joins cells into one line of exactly the kept widths. Cells
// hold what the fleet wrote: they are made safe before they are measured.
func renderCells(b *strings.Builder, cells []string, cols []column, keep, widths []int) {
	for j, ci := range keep {
		if j > 0 {
			b.WriteByte(' ')
		}
		cell := textsafe.Line(cells[ci])
		wd := widths[j]
		if runewidth.StringWidth(cell) > wd {
			cell = runewidth.Truncate(cell, wd, "…")
		}
		if cols[ci].Right {
			b.WriteString(runewidth.FillLeft(cell, wd))
		} else {
			b.WriteString(runewidth.FillRight(cell, wd))
		}
	}
}

// fitLine pads or cuts s to exactly w cells (plain text only: any control
// character in s, which came from the fleet, is shown, not obeyed). Cells
// are counted as the screen counts them when it cuts a line at the edge
// (by grapheme, ansi's measure): runewidth counts an emoji with its
// variation selector, or a flag, a cell short, and a line it fitted went
// a cell past the edge, which cut the last cell of the line, the header's
// DEMO badge.
func fitLine(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = textsafe.Line(s)
	n := len(s) // an ASCII line, the usual one, is as wide as it is long
	if !isASCII(s) {
		n = ansi.StringWidth(s)
	}
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s) // a wide character cut leaves a cell
	}
	return s + strings.Repeat(" ", w-n)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// window returns the first visible row so that cursor stays on screen.
func window(cursor, offset, height, n int) int {
	if height <= 0 {
		return 0
	}
	if cursor < offset {
		offset = cursor
	}
	if cursor >= offset+height {
		offset = cursor - height + 1
	}
	if offset > n-height {
		offset = max(0, n-height)
	}
	return max(0, offset)
}

// clipLine cuts a possibly styled line to w cells.
func clipLine(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}
