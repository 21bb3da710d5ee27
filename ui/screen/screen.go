// Package screen draws a bubbletea program's frames on a terminal in place
// of bubbletea's standard renderer, and owns the terminal while it does.
//
// The standard renderer flushes from a 60 Hz ticker for as long as the
// program runs, whether or not there is anything new to draw; on a small VM
// those 60 wake-ups a second cost about 1 % of a core, the TUI's whole idle
// budget, with the fleet and the screen standing still. A Screen writes only
// when the frame changed.
//
// # What it draws, and when
//
//   - Draw hands over a frame (the whole view, lines separated by "\n"). A
//     frame equal to the last one handed over is dropped. Otherwise it is
//     written at once when the last write is at least a frame (1/120 s) ago,
//     else at the end of that frame; frames handed over meanwhile are
//     coalesced and only the latest is written. With nothing changing no
//     timer runs and nothing is written.
//   - Only the lines that differ from what the terminal shows are written,
//     each at its row. A line is cut to the width (a wrapped line would
//     scroll the screen), a frame to the height (its top goes, as with the
//     standard renderer), and what is left below a shorter frame is erased.
//   - Resize redraws every line at the new size.
//
// # What it guarantees
//
//   - TakeOver puts the terminal into the UI's modes: the keyboard's
//     terminal (Options.TTY) in raw mode at once, and with
//     Options.FullScreen the alternate screen, hidden cursor, mouse and
//     bracketed paste (EnterFullScreen) in the same write as the first frame
//     that shows anything. Until then the terminal keeps what it shows (the
//     "connecting to …" line): switching screens early would blank it until
//     the program knows its size and draws. GiveBack undoes exactly what was
//     done (LeaveFullScreen only when the modes were written, the TTY's
//     previous mode) and holds frames back until the next TakeOver.
//     GiveBack may be called any number of times and from any goroutine (a
//     panic handler): only the first after a TakeOver acts.
//   - HandOver wraps a command run with tea.Exec (a shell): the command gets
//     the terminal out of the UI's modes, on a cleared main screen, and the
//     UI gets it back after, redrawn in full.
//   - Draw, Resize, TakeOver and GiveBack are safe for concurrent use. Draw
//     never waits for the terminal: writes happen on a timer's goroutine,
//     one at a time, so a slow terminal never holds up the event loop. A
//     panic during a write is reported through utilruntime.HandleCrash,
//     whose handlers give the terminal back first (internal/crash).
//
// # What it expects of its caller
//
//   - The program runs with tea.WithoutRenderer, and its View hands its
//     frame to Draw instead of returning it.
//   - Every tea.WindowSizeMsg reaches Resize. bubbletea reads the size only
//     for its standard renderer; WatchSize sends it.
//   - On a terminal, TakeOver before the program runs; GiveBack after it,
//     and on a panic before the report is printed, so the report is not
//     lost on the alternate screen.
//   - Nothing else writes to the terminal while the Screen has it.
package screen

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// frameEvery caps how often the screen is written: 120 frames a second.
// Under churn the program already draws at most once a coalescing period
// (ui's 16 ms or more); a cap of 1/60 s, a little longer than that period,
// beat against it, holding each frame up to a whole period more as the two
// drifted apart, so that a change reached the terminal up to 33 ms after
// it came. Below the period, the cap only joins keys that come faster.
const frameEvery = time.Second / 120

// The terminal modes the UI runs in (what bubbletea sets up for
// WithAltScreen, WithMouseCellMotion and its default bracketed paste), and
// their undoing.
const (
	EnterFullScreen = ansi.SetModeAltScreenSaveCursor + ansi.EraseEntireScreen + ansi.CursorHomePosition +
		ansi.HideCursor + ansi.SetModeBracketedPaste + ansi.SetModeMouseButtonEvent + ansi.SetModeMouseExtSgr
	LeaveFullScreen = ansi.ResetModeBracketedPaste + ansi.ResetModeMouseButtonEvent + ansi.ResetModeMouseExtSgr +
		ansi.ShowCursor + ansi.ResetModeAltScreenSaveCursor
	// clearMainScreen starts a shell on a clean main screen.
	clearMainScreen = ansi.EraseEntireScreen + ansi.CursorHomePosition
)

// Options say how much of the terminal a Screen takes over.
type Options struct {
	// FullScreen: the UI runs on the alternate screen, with mouse and
	// bracketed paste, and leaves it around commands run through HandOver.
	FullScreen bool
	// TTY is the terminal the keys come from (Keyboard), made raw while the
	// Screen has the terminal; nil for none.
	TTY *os.File
}

// Screen puts a program's frames on a terminal; see the package doc.
type Screen struct {
	out        io.Writer
	fullScreen bool
	tty        *os.File
	// after runs f after d on another goroutine (time.AfterFunc; tests
	// run the flushes themselves).
	after func(d time.Duration, f func())
	now   func() time.Time

	mu            sync.Mutex // guards the fields up to outMu
	frame         string     // the latest frame from Draw
	dirty         bool       // frame (or a repaint) is not on the terminal yet
	repaint       bool       // the next write redraws every line
	scheduled     bool       // a flush is on its way
	lastWrite     time.Time
	width, height int
	lent          bool // the terminal is not ours: lent to a shell, or given back

	// entering: TakeOver's full-screen modes wait for the first frame that
	// shows anything; entered: they are on the terminal. Guarded by outMu.
	entering, entered bool

	outMu sync.Mutex  // serialises writes to out; guards the fields below
	shown []string    // the lines on the terminal
	saved *term.State // tty's mode before TakeOver
}

// New returns a Screen that writes the frames it is given to out, from
// the first. A Screen on a terminal has TakeOver set the terminal's modes
// first; one on any other writer (a benchmark's) needs none.
func New(out io.Writer, opts Options) *Screen {
	return &Screen{out: out, fullScreen: opts.FullScreen, tty: opts.TTY, now: time.Now,
		after: func(d time.Duration, f func()) {
			time.AfterFunc(d, func() {
				defer utilruntime.HandleCrash() // the terminal back before the report
				f()
			})
		}}
}

// Draw takes a frame.
func (s *Screen) Draw(frame string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if frame == s.frame {
		return // on the terminal already, or on its way
	}
	s.frame, s.dirty = frame, true
	s.schedule()
}

// Resize redraws every line at the new size.
func (s *Screen) Resize(width, height int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.width, s.height = width, height
	s.dirty, s.repaint = true, true
	s.schedule()
}

// schedule arranges a flush of what is dirty, unless one is on its way: at
// once if the last write is at least a frame ago, else at the end of that
// frame. Callers hold s.mu.
func (s *Screen) schedule() {
	if s.scheduled || s.lent || !s.dirty {
		return
	}
	s.scheduled = true
	s.after(max(0, frameEvery-s.now().Sub(s.lastWrite)), s.flush)
}

// flush writes the latest frame: the lines that differ from what the
// terminal shows, each at its row.
func (s *Screen) flush() {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.mu.Lock()
	s.scheduled = false
	if !s.dirty || s.lent {
		s.mu.Unlock()
		return
	}
	frame, width, height, repaint := s.frame, s.width, s.height, s.repaint
	s.dirty, s.repaint, s.lastWrite = false, false, s.now()
	s.mu.Unlock()

	var b strings.Builder
	if s.entering {
		if frame == "" {
			return // nothing to show yet: the terminal keeps what it has
		}
		b.WriteString(EnterFullScreen)
		s.entering, s.entered, repaint = false, true, true
	}
	if repaint {
		s.shown = nil
	}
	lines := strings.Split(frame, "\n")
	if height > 0 && len(lines) > height {
		lines = lines[len(lines)-height:] // as the standard renderer: the top goes
	}
	for i, line := range lines {
		if i < len(s.shown) && s.shown[i] == line {
			continue
		}
		b.WriteString(ansi.CursorPosition(1, i+1))
		w := ansi.StringWidth(line)
		if width > 0 && w > width {
			line, w = ansi.Truncate(line, width, ""), width // never wrap: it would scroll the screen
		}
		b.WriteString(line)
		if width <= 0 || w < width {
			b.WriteString(ansi.EraseLineRight)
		}
	}
	// Clear below a frame shorter than the last one (or than the screen,
	// after a resize). Below a full screen there is nothing, and the cursor
	// cannot go there: erasing would take the last row.
	if (len(lines) < len(s.shown) || repaint) && (height <= 0 || len(lines) < height) {
		b.WriteString(ansi.CursorPosition(1, len(lines)+1) + ansi.EraseScreenBelow)
	}
	s.shown = lines
	if b.Len() > 0 {
		_, _ = io.WriteString(s.out, b.String())
	}
}

// TakeOver puts the terminal into the UI's modes (raw input, and with
// FullScreen the alternate screen, mouse, bracketed paste) and lets frames
// through again, redrawn in full. If raw mode fails, it says so, and the
// frames come back all the same (after a shell, a screen that answers badly
// beats a frozen one).
func (s *Screen) TakeOver() error {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	var err error
	if s.tty != nil {
		if s.saved, err = term.MakeRaw(int(s.tty.Fd())); err != nil {
			err = fmt.Errorf("entering raw mode: %w", err)
		}
	}
	s.entering = s.fullScreen
	s.shown = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lent, s.dirty, s.repaint = false, true, true
	s.schedule()
	return err
}

// GiveBack holds frames back and returns the terminal to the modes it had
// before TakeOver.
func (s *Screen) GiveBack() error {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.mu.Lock()
	lent := s.lent
	s.lent = true
	s.mu.Unlock()
	if lent {
		return nil // given back already (a panic on the way out)
	}
	if s.entered {
		_, _ = io.WriteString(s.out, LeaveFullScreen)
	}
	s.entering, s.entered = false, false
	if s.saved == nil {
		return nil
	}
	err := term.Restore(int(s.tty.Fd()), s.saved)
	s.saved = nil
	return err
}

// HandOver wraps a command run with tea.Exec (a shell) so that it gets the
// terminal as the user's shell left it, and the UI gets it back after.
// bubbletea does this itself only with its standard renderer.
func (s *Screen) HandOver(cmd tea.ExecCommand) tea.ExecCommand {
	if !s.fullScreen {
		return cmd
	}
	return lentTerminal{cmd, s}
}

type lentTerminal struct {
	tea.ExecCommand
	s *Screen
}

func (l lentTerminal) Run() error {
	err := l.s.GiveBack()
	if err == nil {
		// The main screen still holds the last shell's transcript: a shell
		// opened over it reads as a continuation of that one.
		_, _ = io.WriteString(l.s.out, clearMainScreen)
		err = l.ExecCommand.Run()
	}
	if err2 := l.s.TakeOver(); err == nil {
		err = err2
	}
	return err
}
