package screen

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// testScreen is a Screen whose flushes the test runs, on a clock it moves.
type testScreen struct {
	*Screen
	out     bytes.Buffer
	clock   time.Time
	pending []time.Duration // delays of the flushes scheduled and not yet run
}

func newTestScreen(opts Options) *testScreen {
	ts := &testScreen{clock: time.Date(2026, 11, 29, 17, 25, 19, 0, time.UTC)}
	ts.Screen = New(&ts.out, opts)
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

// showing is a test screen of width×height with frame on it and its
// output reset: where most tests start. A full screen is taken over first,
// as the program does.
func showing(t *testing.T, opts Options, width, height int, frame string) *testScreen {
	t.Helper()
	ts := newTestScreen(opts)
	if opts.FullScreen {
		if err := ts.TakeOver(); err != nil {
			t.Fatal(err)
		}
	}
	ts.Resize(width, height)
	ts.Draw(frame)
	ts.flushed(t)
	ts.out.Reset()
	return ts
}

// tookBack checks that the UI has just taken the terminal back: nothing
// written yet, then its modes and the one-line frame drawn meanwhile,
// redrawn in full, in one write.
func (ts *testScreen) tookBack(t *testing.T, line string) {
	t.Helper()
	if got := ts.out.String(); got != "" {
		t.Fatalf("taking the terminal back wrote %q before a frame", got)
	}
	if got, want := ts.flushed(t), EnterFullScreen+at(1, line)+ansi.CursorPosition(1, 2)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("first frame after taking the terminal back wrote %q, want %q", got, want)
	}
}

// Until the program draws a frame that shows something (it cannot before
// it knows its size), taking the terminal over writes nothing: the line
// the terminal showed ("connecting to …") stays instead of a blank
// alternate screen. The modes go out with the first frame, in one write;
// given back before that, nothing is undone because nothing was done.
func TestScreenEntersFullScreenWithItsFirstFrame(t *testing.T) {
	ts := newTestScreen(Options{FullScreen: true})
	if err := ts.TakeOver(); err != nil {
		t.Fatal(err)
	}
	if got := ts.flushed(t); got != "" {
		t.Fatalf("with no frame yet, the flush wrote %q", got)
	}
	ts.Resize(20, 5)
	if got := ts.flushed(t); got != "" {
		t.Fatalf("with an empty frame, the flush wrote %q", got)
	}
	ts.Draw("table")
	if got, want := ts.flushed(t), EnterFullScreen+at(1, "table")+ansi.CursorPosition(1, 2)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("first frame wrote %q, want %q", got, want)
	}
	ts.Draw("table 2")
	ts.clock = ts.clock.Add(time.Second)
	if got := ts.flushed(t); got != at(1, "table 2") {
		t.Fatalf("second frame wrote %q: the modes go out once", got)
	}
	ts.out.Reset()
	if err := ts.GiveBack(); err != nil {
		t.Fatal(err)
	}
	if got := ts.out.String(); got != LeaveFullScreen {
		t.Fatalf("giving back wrote %q, want the UI's modes undone", got)
	}

	early := newTestScreen(Options{FullScreen: true})
	if err := early.TakeOver(); err != nil {
		t.Fatal(err)
	}
	if err := early.GiveBack(); err != nil {
		t.Fatal(err)
	}
	early.pending = nil
	early.flush()
	if got := early.out.String(); got != "" {
		t.Fatalf("taken over and given back before any frame: wrote %q", got)
	}
}

// at is a line written at row.
func at(row int, line string) string {
	return ansi.CursorPosition(1, row) + line + ansi.EraseLineRight
}

// A frame that did not change is not written, and nothing is scheduled for
// it: with nothing changing, the screen has no timer running. A frame that
// did change is written line by line, the changed lines only.
func TestScreenWritesChangedLinesOnly(t *testing.T) {
	ts := newTestScreen(Options{})
	ts.Resize(10, 5)
	ts.Draw("one\ntwo\nthree")
	if got, want := ts.flushed(t), at(1, "one")+at(2, "two")+at(3, "three")+ansi.CursorPosition(1, 4)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("first frame wrote %q, want %q", got, want)
	}

	ts.Draw("one\ntwo\nthree")
	if len(ts.pending) != 0 {
		t.Fatalf("an unchanged frame scheduled %d flushes", len(ts.pending))
	}

	ts.Draw("one\nTWO\nthree")
	if got, want := ts.flushed(t), at(2, "TWO"); got != want {
		t.Fatalf("one changed line wrote %q, want %q", got, want)
	}

	ts.Draw("one")
	if got, want := ts.flushed(t), ansi.CursorPosition(1, 2)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("a shorter frame wrote %q, want %q", got, want)
	}
}

// Lines are cut to the width and the frame to the height (its top goes, as
// with bubbletea's renderer); a full-width line needs no erasing.
func TestScreenFitsTheTerminal(t *testing.T) {
	ts := newTestScreen(Options{})
	ts.Resize(4, 2)
	ts.Draw("gone\nabcdef\nab")
	if got, want := ts.flushed(t), ansi.CursorPosition(1, 1)+"abcd"+at(2, "ab"); got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// A resize redraws every line, even of the same frame.
func TestScreenResizeRepaints(t *testing.T) {
	ts := showing(t, Options{}, 10, 5, "one\ntwo")
	ts.Resize(12, 5)
	if got, want := ts.flushed(t), at(1, "one")+at(2, "two")+ansi.CursorPosition(1, 3)+ansi.EraseScreenBelow; got != want {
		t.Fatalf("after a resize wrote %q, want %q", got, want)
	}
}

// The first change after a quiet period is written at once; changes within a
// frame of the last write wait for its end and are written together, the
// latest frame only.
func TestScreenFramePacing(t *testing.T) {
	ts := newTestScreen(Options{})
	ts.Resize(10, 5)
	ts.Draw("a")
	if ts.pending[0] != 0 {
		t.Fatalf("first frame waits %s", ts.pending[0])
	}
	ts.flushed(t)

	ts.clock = ts.clock.Add(frameEvery / 4)
	ts.Draw("b")
	ts.Draw("c")
	if len(ts.pending) != 1 || ts.pending[0] != frameEvery-frameEvery/4 {
		t.Fatalf("changes right behind a write: flushes scheduled after %v, want one after %s", ts.pending, frameEvery-frameEvery/4)
	}
	if got := ts.flushed(t); got != at(1, "c") {
		t.Fatalf("coalesced changes wrote %q, want the latest frame only", got)
	}

	ts.clock = ts.clock.Add(time.Minute)
	ts.Draw("d")
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
	ts := showing(t, Options{FullScreen: true}, 20, 5, "table")

	cmd := ts.HandOver(fakeExec{run: func() error {
		if !strings.HasSuffix(ts.out.String(), LeaveFullScreen+clearMainScreen) {
			t.Errorf("the command started before the terminal left the UI's modes: %q", ts.out.String())
		}
		ts.out.Reset()
		ts.Draw("changed meanwhile")
		if len(ts.pending) != 0 || ts.out.Len() != 0 {
			t.Errorf("a frame was written or scheduled while the command had the terminal")
		}
		return nil
	}})
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	ts.tookBack(t, "changed meanwhile")
}

// GiveBack leaves the UI's modes once, however often it is called (the
// program's end and a panic handler may both call it); frames are held
// while the terminal is given back, a flush already on its way included,
// and TakeOver redraws in full.
func TestScreenGivesTheTerminalBackOnce(t *testing.T) {
	ts := showing(t, Options{FullScreen: true}, 20, 5, "table")
	ts.Draw("on its way")
	for range 2 {
		if err := ts.GiveBack(); err != nil {
			t.Fatal(err)
		}
	}
	if got := ts.out.String(); got != LeaveFullScreen {
		t.Fatalf("two GiveBacks wrote %q, want the UI's modes undone once", got)
	}
	ts.out.Reset()
	ts.pending = nil
	ts.flush() // the flush scheduled before GiveBack
	ts.Draw("while given back")
	if ts.out.Len() != 0 || len(ts.pending) != 0 {
		t.Fatalf("with the terminal given back: wrote %q, %d flushes scheduled", ts.out.String(), len(ts.pending))
	}

	if err := ts.TakeOver(); err != nil {
		t.Fatal(err)
	}
	ts.tookBack(t, "while given back")
}

// Without FullScreen (a benchmark's writer) the screen writes frames and
// nothing else, and a command run through HandOver is left as it is.
func TestScreenWithoutFullScreenWritesFramesOnly(t *testing.T) {
	ts := showing(t, Options{}, 10, 2, "a")
	if err := ts.GiveBack(); err != nil {
		t.Fatal(err)
	}
	if err := ts.TakeOver(); err != nil {
		t.Fatal(err)
	}
	if ts.out.Len() != 0 {
		t.Fatalf("wrote %q around the frames", ts.out.String())
	}
	if got := ts.HandOver(fakeExec{run: func() error { return nil }}); reflect.TypeOf(got) != reflect.TypeOf(fakeExec{}) {
		t.Fatalf("HandOver wrapped the command: %T", got)
	}
}

// Once a frame is written and nothing changes, nothing is scheduled: an
// idle screen has no timer running (the point of the package).
func TestScreenIdlesWithoutTimers(t *testing.T) {
	ts := showing(t, Options{}, 10, 2, "a")
	for range 3 {
		ts.clock = ts.clock.Add(time.Minute)
		ts.Draw("a")
		ts.flush() // a spurious wake-up writes nothing either
	}
	if len(ts.pending) != 0 || ts.out.Len() != 0 {
		t.Fatalf("idle: %d flushes scheduled, wrote %q", len(ts.pending), ts.out.String())
	}
}

// Draw, Resize, TakeOver and GiveBack may be called from any goroutine
// while the real timers write (run with -race); the last frame drawn
// reaches the terminal, and GiveBack waits for a write under way.
func TestScreenConcurrentUse(t *testing.T) {
	var out bytes.Buffer // written under the screen's own lock, read after GiveBack
	s := New(&out, Options{FullScreen: true})
	if err := s.TakeOver(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				switch {
				case g == 0 && i%50 == 0:
					_ = s.GiveBack()
					_ = s.TakeOver()
				case g == 1 && i%20 == 0:
					s.Resize(40+i%7, 10)
				default:
					s.Draw(fmt.Sprintf("goroutine %d\nframe %d", g, i))
				}
			}
		}()
	}
	wg.Wait()
	s.Draw("the end")
	deadline := time.Now().Add(10 * time.Second)
	for !s.settled() {
		if time.Now().After(deadline) {
			t.Fatal("the last frame was never written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.GiveBack(); err != nil {
		t.Fatal(err)
	}
	drawn := out.String()
	if !strings.HasSuffix(drawn, LeaveFullScreen) || strings.LastIndex(drawn, "the end") < strings.LastIndex(drawn, "frame ") {
		t.Errorf("want the last frame, then the terminal given back; the output ends %q", drawn[max(0, len(drawn)-80):])
	}
}

// settled: the latest frame has been taken for writing and no flush is due.
func (s *Screen) settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.dirty && !s.scheduled
}
