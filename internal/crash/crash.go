// Package crash makes a panic in any goroutine end the process the same
// way: whatever holds the terminal gives it back first (raw mode off, main
// screen, mouse off), then the panic and its stack go to stderr, where the
// operator can read them, and the process exits 70 (EX_SOFTWARE).
//
// It rides on apimachinery's utilruntime.PanicHandlers, the hook client-go
// already calls from its own goroutines (informer handlers, reflectors)
// through utilruntime.HandleCrash; sandscope's own goroutines start through
// Go, which defers it, and a test fails on any other go statement. PanicHandlers is process-wide by design, as
// the terminal is: one process, one terminal to give back. This package
// adds one handler to it, once, and keeps what that handler runs.
package crash

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// ExitCode is the exit status of a crash.
const ExitCode = 70

var (
	mu        sync.Mutex
	hooked    bool
	restorers = map[int]func(){}
	nextID    int
	report    func(r any, stack []byte) // nil: the panic goes on
	reported  bool
)

func hook() {
	if !hooked {
		hooked = true
		utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, handle)
	}
}

// handle runs in the panicking goroutine, from utilruntime.HandleCrash.
func handle(_ context.Context, r any) {
	Report(r, debug.Stack())
}

// Go runs f on a new goroutine under utilruntime.HandleCrash: the one way
// sandscope starts a goroutine, so a panic on any of them gives the
// terminal back before the process ends (TestEveryGoroutineStartsThroughGo
// finds a bare go statement anywhere in the module).
func Go(f func()) {
	go func() {
		defer utilruntime.HandleCrash()
		f()
	}()
}

// Report gives the terminal back and, if Install was called, reports r and
// stack and exits. A second panic while the first is reported waits for the
// exit. Callers that recover a panic themselves (the main goroutine) call
// it directly.
func Report(r any, stack []byte) {
	mu.Lock()
	restoreLocked()
	rep, first := report, !reported
	if rep != nil {
		reported = true
	}
	mu.Unlock()
	if rep != nil && first {
		rep(r, stack)
	}
}

// Restore runs every OnPanic restorer: for the main goroutine, which
// recovers its panic and reports it itself.
func Restore() {
	mu.Lock()
	defer mu.Unlock()
	restoreLocked()
}

func restoreLocked() {
	for _, restore := range restorers {
		restore()
	}
}

// Install makes a panic that reaches utilruntime.HandleCrash (or Report)
// print its value and stack to w and call exit(ExitCode), after every
// OnPanic restorer ran. The returned func undoes it.
func Install(w io.Writer, exit func(int)) (uninstall func()) {
	mu.Lock()
	defer mu.Unlock()
	hook()
	report = func(r any, stack []byte) {
		_, _ = fmt.Fprintf(w, "sandscope: internal error: %v\n\n%s", r, stack)
		exit(ExitCode)
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		report, reported = nil, false
	}
}

// OnPanic runs restore (giving the terminal back) when a panic reaches
// utilruntime.HandleCrash or Report, before the report. restore must be
// idempotent and must not panic. The returned func removes it.
func OnPanic(restore func()) (remove func()) {
	mu.Lock()
	defer mu.Unlock()
	hook()
	id := nextID
	nextID++
	restorers[id] = restore
	return func() {
		mu.Lock()
		defer mu.Unlock()
		delete(restorers, id)
	}
}
