package ui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// styles are built once; colours degrade with the active profile. Under
// NO_COLOR (the Ascii profile) no attribute survives, not even reverse, so
// plain marks the cursor row with a gutter instead.
type styles struct {
	header, dim, title, errRow, warnRow, cursor, flashErr, flashOK, badge, colHead lipgloss.Style
	plain                                                                          bool
}

// gutter is the cursor mark of a plain (NO_COLOR) table row.
const gutter = "›"

// markRow gives a table line of the plain profile its one-cell gutter:
// the cursor mark on the selected row, a blank on the others (and on the
// column header), so that the columns stay aligned. The line keeps its
// width.
func (s styles) markRow(line string, selected bool) string {
	if !s.plain {
		return line
	}
	mark := " "
	if selected {
		mark = gutter
	}
	return mark + ansi.Truncate(line, max(ansi.StringWidth(line)-1, 0), "")
}

func newStyles() styles {
	return styles{
		plain:    lipgloss.ColorProfile() == termenv.Ascii,
		header:   lipgloss.NewStyle().Bold(true),
		dim:      lipgloss.NewStyle().Faint(true),
		title:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		errRow:   lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		warnRow:  lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		cursor:   lipgloss.NewStyle().Reverse(true),
		flashErr: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		flashOK:  lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		badge:    lipgloss.NewStyle().Bold(true).Reverse(true),
		colHead:  lipgloss.NewStyle().Bold(true),
	}
}
