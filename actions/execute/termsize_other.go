//go:build !unix

package execute

import "golang.org/x/term"

// terminalSizes reports the terminal's size once (no SIGWINCH here).
type terminalSizes struct {
	fd   int
	sent bool
}

func watchTerminalSize(fd int) *terminalSizes { return &terminalSizes{fd: fd} }

func (q *terminalSizes) Next() *TerminalSize {
	if q.sent {
		return nil
	}
	q.sent = true
	w, h, err := term.GetSize(q.fd)
	if err != nil {
		return nil
	}
	return &TerminalSize{Width: uint16(w), Height: uint16(h)}
}

func (q *terminalSizes) stop() {}
