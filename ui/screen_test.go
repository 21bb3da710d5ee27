package ui

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/sandscope/sandscope/model"
)

// testScreen is a screen whose flushes the test runs, on a clock it moves.
type testScreen struct {
	*screen
	out     bytes.Buffer
	clock   time.Time
	pending []time.Duration // delays of the flushes scheduled and not yet run
}

func newTestScreen() *testScreen {
	ts := &testScreen{clock: t0}
	ts.screen = newScreen(&ts.out)
	ts.now = func() time.Time { return ts.clock }
	ts.after = func(d time.Duration, _ func()) { ts.pending = append(ts.pending, d) }
	return ts
}

// flushed runs the scheduled flush (there must be exactly one) and returns
// what it wrote.
func (ts *testScreen) flushed(t *testing.T) string {
	t.Helper()
	if len(ts.pending) != 1 {
		t.Fatalf("%d flushes scheduled, want 1", len(ts.pending))
	}
	ts.pending = nil
	ts.out.Reset()
	ts.flush()
	return ts.out.String()
}

// at is a line written at row.
func at(row int, line string) string {
	return ansi.CursorPosition(1, row) + line + ansi.EraseLineRight
}

// A frame that did not change is not written, and nothing is scheduled for
// it: with nothing changing, the screen has no timer running. A frame that
// did change is written line by line, the changed lines only.
func TestScreenWritesChangedLinesOnly(t *testing.T) {
	ts := newTestScreen()
	ts.resize(10, 5)
	ts.draw("one\ntwo\nthree")
	if got, want := ts.flushed(t), at(1, "one")+at(2, "two")+at(3, "three")+ansi.CursorPosition(1, 4)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("first frame wrote %q, want %q", got, want)
	}

	ts.draw("one\ntwo\nthree")
	if len(ts.pending) != 0 {
		t.Fatalf("an unchanged frame scheduled %d flushes", len(ts.pending))
	}

	ts.draw("one\nTWO\nthree")
	if got, want := ts.flushed(t), at(2, "TWO"); got != want {
		t.Fatalf("one changed line wrote %q, want %q", got, want)
	}

	ts.draw("one")
	if got, want := ts.flushed(t), ansi.CursorPosition(1, 2)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("a shorter frame wrote %q, want %q", got, want)
	}
}

// Lines are cut to the width and the frame to the height (its top goes, as
// with bubbletea's renderer); a full-width line needs no erasing.
func TestScreenFitsTheTerminal(t *testing.T) {
	ts := newTestScreen()
	ts.resize(4, 2)
	ts.draw("gone\nabcdef\nab")
	if got, want := ts.flushed(t), ansi.CursorPosition(1, 1)+"abcd"+at(2, "ab"); got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// A resize redraws every line, even of the same frame.
func TestScreenResizeRepaints(t *testing.T) {
	ts := newTestScreen()
	ts.resize(10, 5)
	ts.draw("one\ntwo")
	ts.flushed(t)
	ts.resize(12, 5)
	if got, want := ts.flushed(t), at(1, "one")+at(2, "two")+ansi.CursorPosition(1, 3)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("after a resize wrote %q, want %q", got, want)
	}
}

// The first change after a quiet period is written at once; changes within a
// frame of the last write wait for its end and are written together, the
// latest frame only.
func TestScreenFramePacing(t *testing.T) {
	ts := newTestScreen()
	ts.resize(10, 5)
	ts.draw("a")
	if ts.pending[0] != 0 {
		t.Fatalf("first frame waits %s", ts.pending[0])
	}
	ts.flushed(t)

	ts.clock = ts.clock.Add(frameEvery / 4)
	ts.draw("b")
	ts.draw("c")
	if len(ts.pending) != 1 || ts.pending[0] != frameEvery-frameEvery/4 {
		t.Fatalf("changes right behind a write: flushes scheduled after %v, want one after %s", ts.pending, frameEvery-frameEvery/4)
	}
	if got := ts.flushed(t); got != at(1, "c") {
		t.Fatalf("coalesced changes wrote %q, want the latest frame only", got)
	}

	ts.clock = ts.clock.Add(time.Minute)
	ts.draw("d")
	if ts.pending[0] != 0 {
		t.Fatalf("a change after a quiet period waits %s", ts.pending[0])
	}
}

type fakeExec struct {
	tea.ExecCommand
	run func() error
}

func (f fakeExec) Run() error { return f.run() }

// A command run through handOver (the shell) gets the terminal out of the
// UI's modes, frames are held while it runs, and after it the UI takes the
// terminal back and redraws in full.
func TestScreenHandsTerminalOver(t *testing.T) {
	ts := newTestScreen()
	ts.fullScreen = true
	ts.resize(20, 5)
	ts.draw("table")
	ts.flushed(t)

	cmd := ts.handOver(fakeExec{run: func() error {
		if !strings.HasSuffix(ts.out.String(), leaveFullScreen+clearMainScreen) {
			t.Errorf("the command started before the terminal left the UI's modes: %q", ts.out.String())
		}
		ts.out.Reset()
		ts.draw("changed meanwhile")
		if len(ts.pending) != 0 || ts.out.Len() != 0 {
			t.Errorf("a frame was written or scheduled while the command had the terminal")
		}
		return nil
	}})
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := ts.out.String(); got != enterFullScreen {
		t.Fatalf("after the command wrote %q, want the UI's modes back", got)
	}
	if got, want := ts.flushed(t), at(1, "changed meanwhile")+ansi.CursorPosition(1, 2)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("first frame after the command wrote %q, want %q", got, want)
	}
}

// syncBuffer is a bytes.Buffer that a program writes from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NewProgram draws the App's frames on its writer, live updates included.
func TestNewProgramDraws(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := NewProgram(app, &out, tea.WithInput(nil), tea.WithoutSignalHandler(), tea.WithContext(ctx))
	done := make(chan struct{})
	go func() { defer close(done); _, _ = p.Run() }()
	p.Send(tea.WindowSizeMsg{Width: 160, Height: 30})
	waitOutput(t, &out, "sbx-a")

	src.set(withSandbox(src.Snapshot(), "sbx-c", func(b model.Sandbox) model.Sandbox { b.Restarts = 4242; return b }))
	waitOutput(t, &out, "4242")
	p.Quit()
	<-done
}

func waitOutput(t *testing.T, out *syncBuffer, sub string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), sub) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never written; output:\n%q", sub, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
