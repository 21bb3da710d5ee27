//go:build crashtest && unix

package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/sandscope/sandscope/internal/crash"
)

// A build with the crashtest tag, and only such a build (never a release),
// panics on a goroutine started through crash.Go when it gets SIGUSR1: the
// end-to-end test of what a panic does to the terminal sends it once the
// UI has taken the terminal over.
func init() {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	crash.Go(func() {
		<-usr1
		panic("injected by the crashtest build")
	})
}
