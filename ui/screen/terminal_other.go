//go:build !unix

package screen

import (
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/sandscope/sandscope/internal/crash"
)

// WatchSize sends out's size once (no SIGWINCH here).
func WatchSize(out *os.File, send func(tea.Msg)) (stop func()) {
	if w, h, err := term.GetSize(int(out.Fd())); err == nil {
		crash.Go(func() { send(tea.WindowSizeMsg{Width: w, Height: h}) })
	}
	return func() {}
}

// Keyboard is the terminal the keys come from, as bubbletea picks it:
// stdin, or the console when stdin is not one (piped).
func Keyboard() (*os.File, error) {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		return os.Stdin, nil
	}
	f, err := os.OpenFile("CONIN$", os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("could not open a new TTY: %w", err)
	}
	return f, nil
}
