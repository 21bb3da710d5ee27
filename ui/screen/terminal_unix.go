//go:build unix

package screen

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/sandscope/sandscope/internal/crash"
)

// WatchSize sends out's size now and after every SIGWINCH (bubbletea does
// this only with its standard renderer), until stop.
func WatchSize(out *os.File, send func(tea.Msg)) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	done := make(chan struct{})
	crash.Go(func() {
		defer signal.Stop(sig)
		for {
			if w, h, err := term.GetSize(int(out.Fd())); err == nil {
				send(tea.WindowSizeMsg{Width: w, Height: h})
			}
			select {
			case <-done:
				return
			case <-sig:
			}
		}
	})
	return func() { close(done) }
}

// Keyboard is the terminal the keys come from, as bubbletea picks it:
// stdin, or the controlling terminal when stdin is not one (piped).
func Keyboard() (*os.File, error) {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		return os.Stdin, nil
	}
	f, err := os.Open("/dev/tty")
	if err != nil {
		return nil, fmt.Errorf("could not open a new TTY: %w", err)
	}
	return f, nil
}
