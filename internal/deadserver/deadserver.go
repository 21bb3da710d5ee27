// Package deadserver gives tests the two ways a server fails a client
// before any protocol is spoken: it refuses the connection, or it accepts
// it and never answers (a frozen process, a black-holed route), the case
// request timeouts exist for.
package deadserver

import (
	"net"
	"sync"
	"testing"

	"github.com/sandscope/sandscope/internal/crash"
)

// Refusing returns a loopback host:port that refuses connections: bound,
// then closed.
func Refusing(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Silent returns the loopback host:port of a listener that accepts
// connections and never reads or writes; it and its connections are
// closed when the test ends.
func Silent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	done := make(chan struct{})
	crash.Go(func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}
