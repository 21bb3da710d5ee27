package ui

import "github.com/charmbracelet/lipgloss"

// styles are built once; colours degrade with the active profile (NO_COLOR →
// Ascii keeps only attributes such as reverse for the cursor).
type styles struct {
	header, dim, title, errRow, warnRow, cursor, flashErr, flashOK, badge, colHead lipgloss.Style
}

func newStyles() styles {
	return styles{
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
