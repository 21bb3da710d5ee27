package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
)

// fakeForwards is a Backend's port-forwarding that records what was asked.
type fakeForwards struct {
	mu      sync.Mutex
	asked   []string // "ns/name local:remote"
	stopped []string
	open    map[string]*fakeForward
	next    int
	refuse  error
}

type fakeForward struct {
	done chan struct{}
	err  error
}

func (f *fakeForwards) backend() Backend {
	f.open = map[string]*fakeForward{}
	return Backend{Forward: f.forward, StopForward: f.stop}
}

func (f *fakeForwards) forward(_ context.Context, sb *model.Sandbox, local, remote int) (ForwardInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, fmt.Sprintf("%s/%s %d:%d", sb.Namespace(), sb.Name(), local, remote))
	if f.refuse != nil {
		return ForwardInfo{}, f.refuse
	}
	if local == 0 {
		f.next++
		local = 40000 + f.next
	}
	addr := fmt.Sprintf("127.0.0.1:%d", local)
	ff := &fakeForward{done: make(chan struct{})}
	f.open[addr] = ff
	pod := "-"
	if slot := sb.PrimarySlot(); slot != nil {
		pod = slot.PodName
	}
	return ForwardInfo{LocalAddr: addr, Namespace: sb.Namespace(), Sandbox: sb.Name(), Pod: pod, UID: "uid-" + sb.Name(),
		RemotePort: remote, Since: fixedNow(), Done: ff.done,
		Err: func() error { f.mu.Lock(); defer f.mu.Unlock(); return ff.err }}, nil
}

func (f *fakeForwards) stop(addr string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ff := f.open[addr]
	if ff == nil {
		return errors.New("no such forward")
	}
	delete(f.open, addr)
	f.stopped = append(f.stopped, addr)
	close(ff.done)
	return nil
}

// end closes a forward on the backend's side, with why.
func (f *fakeForwards) end(addr string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ff := f.open[addr]
	delete(f.open, addr)
	ff.err = err
	close(ff.done)
}

func (f *fakeForwards) snapshot() (asked, stopped []string, open int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...), append([]string(nil), f.stopped...), len(f.open)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// F asks for a port (execd's first), opens the forward through the
// Backend, :pf lists it, and ctrl+d there stops it after a confirmation.
func TestForwardKeyFlowAndPFView(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	fw := &fakeForwards{}
	be := fw.backend()
	var deletes sync.Map
	be.Delete = func(_ context.Context, sb *model.Sandbox) error { deletes.Store(sb.Key, true); return nil }
	app, tm := newTestAppSized(t, src, be, Options{}, 80, 24)
	screenContains(t, tm, app, "Sandboxes")

	keys(tm, "F")
	screenContains(t, tm, app, "[LOCAL:]PORT> 44772")
	keys(tm, "enter")
	s := screenContains(t, tm, app, "forwarding 127.0.0.1:40001")
	asked, _, _ := fw.snapshot()
	if len(asked) != 1 || !strings.HasSuffix(asked[0], " 0:44772") {
		t.Fatalf("asked %v, want one forward of a free port to 44772\n%s", asked, s)
	}

	// LOCAL:REMOTE typed over the default.
	keys(tm, "F")
	screenContains(t, tm, app, "PORT> 44772")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	keys(tm, "8080:9000", "enter")
	screenContains(t, tm, app, "forwarding 127.0.0.1:8080")

	keys(tm, ":", "pf", "enter")
	s = screenContains(t, tm, app, "Port-forwards [2/2]")
	for _, want := range []string{"127.0.0.1:40001", "127.0.0.1:8080", "44772", "9000", "LOCAL", "SANDBOX"} {
		if !strings.Contains(s, want) {
			t.Errorf(":pf lacks %q:\n%s", want, s)
		}
	}

	// ctrl+d asks; anything but y keeps the forward.
	keys(tm, "ctrl+d")
	screenContains(t, tm, app, "[y/N] Stop port-forward 127.0.0.1:40001?")
	keys(tm, "n")
	screenContains(t, tm, app, "stop cancelled")
	keys(tm, "ctrl+d", "y")
	s = screenContains(t, tm, app, "Port-forwards [1/1]")
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "127.0.0.1:40001") && !strings.Contains(line, "stopped") {
			t.Errorf("the stopped forward is still listed:\n%s", s)
		}
	}
	_, stopped, open := fw.snapshot()
	if len(stopped) != 1 || stopped[0] != "127.0.0.1:40001" || open != 1 {
		t.Fatalf("stopped %v, open %d", stopped, open)
	}
	deletes.Range(func(k, _ any) bool { t.Errorf("ctrl+d in :pf deleted sandbox %v", k); return true })

	// q leaves :pf; on the top view it asks before it stops what is still
	// open, and quits on y.
	keys(tm, "q")
	screenContains(t, tm, app, "Sandboxes [")
	keys(tm, "q")
	screenContains(t, tm, app, "[y/N] Quit and stop 1 port-forward(s) (127.0.0.1:8080)?")
	if _, _, open := fw.snapshot(); open != 1 {
		t.Fatalf("%d forwards open before the answer", open)
	}
	keys(tm, "y")
	waitFor(t, "quit stops every forward", func() bool { _, _, open := fw.snapshot(); return open == 0 })
}

// A bad port keeps the prompt with a one-line reason; a refusal from the
// Backend (the identity check) is shown with its code.
func TestForwardBadPortAndRefusal(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	fw := &fakeForwards{}
	app, tm := newTestApp(t, src, fw.backend(), Options{})
	screenContains(t, tm, app, "Sandboxes")
	keys(tm, "F")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	keys(tm, "70000", "enter")
	screenContains(t, tm, app, `"70000" is not a port`)
	if asked, _, _ := fw.snapshot(); len(asked) != 0 {
		t.Fatalf("a bad port reached the backend: %v", asked)
	}
	keys(tm, "esc")

	fw.mu.Lock()
	fw.refuse = refusal{code: "IP_TAKEN", msg: "address 10.244.0.23 is held by another pod"}
	fw.mu.Unlock()
	keys(tm, "F", "enter")
	screenContains(t, tm, app, "IP_TAKEN")
}

// A forward the backend closes because its Pod changed leaves :pf with a
// visible reason.
func TestForwardClosedByBackendIsShown(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	fw := &fakeForwards{}
	app, tm := newTestApp(t, src, fw.backend(), Options{})
	screenContains(t, tm, app, "Sandboxes")
	keys(tm, "F", "enter")
	screenContains(t, tm, app, "forwarding 127.0.0.1:40001")
	keys(tm, ":", "pf", "enter")
	screenContains(t, tm, app, "Port-forwards [1/1]")
	fw.end("127.0.0.1:40001", refusal{code: "UID_CHANGED", msg: "port-forward closed: pod was re-created"})
	s := screenContains(t, tm, app, "Port-forwards [0/0]")
	if !strings.Contains(s, "UID_CHANGED") || !strings.Contains(s, "closed") {
		t.Errorf("no visible reason:\n%s", s)
	}
}

// --readonly refuses F, as it refuses exec.
func TestForwardReadOnlyRefused(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	fw := &fakeForwards{}
	app, tm := newTestApp(t, src, fw.backend(), Options{ReadOnly: true})
	screenContains(t, tm, app, "Sandboxes")
	keys(tm, "F")
	screenContains(t, tm, app, "refused (READ_ONLY): port-forward is disabled")
	if asked, _, _ := fw.snapshot(); len(asked) != 0 {
		t.Fatalf("read-only forwarded: %v", asked)
	}
}

func TestParsePorts(t *testing.T) {
	for in, want := range map[string][2]int{"": {0, 44772}, "44772": {0, 44772}, "8080:80": {8080, 80}, ":80": {0, 80}, " 9000 ": {0, 9000}} {
		l, r, err := parsePorts(in)
		if err != nil || l != want[0] || r != want[1] {
			t.Errorf("parsePorts(%q) = %d, %d, %v; want %v", in, l, r, err, want)
		}
	}
	for _, bad := range []string{"x", "0", "65536", "-1:80", "a:80", "80:"} {
		if _, _, err := parsePorts(bad); err == nil {
			t.Errorf("parsePorts(%q) accepted", bad)
		}
	}
}
