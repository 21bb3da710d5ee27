//go:build !unix

package execute

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
	return terminalSize(q.fd)
}

func (q *terminalSizes) stop() {}
