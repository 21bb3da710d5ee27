//go:build unix

package execute

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// terminalSizes follows a local terminal's size: the current size first,
// then one per SIGWINCH. It implements TerminalSizeQueue.
type terminalSizes struct {
	fd      int
	sig     chan os.Signal
	done    chan struct{}
	once    sync.Once
	started bool
}

func watchTerminalSize(fd int) *terminalSizes {
	q := &terminalSizes{fd: fd, sig: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(q.sig, syscall.SIGWINCH)
	return q
}

func (q *terminalSizes) Next() *TerminalSize {
	if q.started {
		select {
		case <-q.sig:
		case <-q.done:
			return nil
		}
	}
	q.started = true
	return terminalSize(q.fd)
}

func (q *terminalSizes) stop() {
	q.once.Do(func() {
		signal.Stop(q.sig)
		close(q.done)
	})
}
