package ui

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

// frameEvery caps how often the screen is written under churn: 60 frames a
// second, the rate of bubbletea's standard renderer.
const frameEvery = time.Second / 60

// The terminal modes the UI runs in (what bubbletea sets up for
// WithAltScreen, WithMouseCellMotion and its default bracketed paste), and
// their undoing.
const (
	enterFullScreen = ansi.SetAltScreenSaveCursorMode + ansi.EraseEntireScreen + ansi.CursorHomePosition +
		ansi.HideCursor + ansi.SetBracketedPasteMode + ansi.SetButtonEventMouseMode + ansi.SetSgrExtMouseMode
	leaveFullScreen = ansi.ResetBracketedPasteMode + ansi.ResetButtonEventMouseMode + ansi.ResetSgrExtMouseMode +
		ansi.ShowCursor + ansi.ResetAltScreenSaveCursorMode
	// clearMainScreen starts a shell on a clean main screen.
	clearMainScreen = ansi.EraseEntireScreen + ansi.CursorHomePosition
)

// screen puts the App's frames on the terminal in place of bubbletea's
// standard renderer. That renderer flushes from a 60 Hz ticker for as long
// as the program runs, whether or not there is anything new to draw; on a
// small VM those 60 wake-ups a second cost about 1 % of a core, the whole
// idle budget, with the fleet and the screen standing still. screen writes
// only when the frame changed: at once after a quiet period, at most once per
// frameEvery under churn, and not at all otherwise. Like the standard
// renderer it rewrites only the lines that changed.
//
// View hands frames over without waiting for the terminal: writes happen on
// a timer's goroutine, so a slow terminal never holds up the event loop.
type screen struct {
	out io.Writer
	// after runs f after d on another goroutine (time.AfterFunc; tests
	// run the flushes themselves).
	after func(d time.Duration, f func())
	now   func() time.Time

	mu            sync.Mutex // guards the fields up to outMu
	frame         string     // the latest frame from View
	dirty         bool       // frame (or a repaint) is not on the terminal yet
	repaint       bool       // the next write redraws every line
	scheduled     bool       // a flush is on its way
	lastWrite     time.Time
	width, height int
	lent          bool // the terminal is not ours: lent to a shell, or given back

	outMu sync.Mutex // serialises writes to out; guards the fields below
	shown []string   // the lines on the terminal
	// fullScreen: the terminal is put into (and out of) the UI's modes
	// around the program and any command run through handOver.
	fullScreen bool
	tty        *os.File    // the input terminal, made raw while the UI runs (nil: none)
	saved      *term.State // tty's mode before
}

func newScreen(out io.Writer) *screen {
	return &screen{out: out, now: time.Now, after: func(d time.Duration, f func()) {
		time.AfterFunc(d, func() {
			defer utilruntime.HandleCrash() // the terminal back before the report
			f()
		})
	}}
}

// draw takes a frame from View.
func (s *screen) draw(frame string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if frame == s.frame {
		return // on the terminal already, or on its way
	}
	s.frame, s.dirty = frame, true
	s.schedule()
}

// resize redraws every line at the new size.
func (s *screen) resize(width, height int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.width, s.height = width, height
	s.dirty, s.repaint = true, true
	s.schedule()
}

// schedule arranges a flush of what is dirty, unless one is on its way: at
// once if the last write is at least a frame ago, else at the end of that
// frame. Callers hold s.mu.
func (s *screen) schedule() {
	if s.scheduled || s.lent || !s.dirty {
		return
	}
	s.scheduled = true
	s.after(max(0, frameEvery-s.now().Sub(s.lastWrite)), s.flush)
}

// flush writes the latest frame: the lines that differ from what the
// terminal shows, each at its row.
func (s *screen) flush() {
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

	if repaint {
		s.shown = nil
	}
	lines := strings.Split(frame, "\n")
	if height > 0 && len(lines) > height {
		lines = lines[len(lines)-height:] // as the standard renderer: the top goes
	}
	var b strings.Builder
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

// takeOver puts the terminal into the UI's modes (raw input, alternate
// screen, mouse, bracketed paste) and lets frames through again, redrawn in
// full. If raw mode fails, it says so, and the frames come back all the same
// (after a shell, a screen that answers badly beats a frozen one).
func (s *screen) takeOver() error {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	var err error
	if s.tty != nil {
		if s.saved, err = term.MakeRaw(int(s.tty.Fd())); err != nil {
			err = fmt.Errorf("entering raw mode: %w", err)
		}
	}
	if s.fullScreen {
		_, _ = io.WriteString(s.out, enterFullScreen)
	}
	s.shown = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lent, s.dirty, s.repaint = false, true, true
	s.schedule()
	return err
}

// giveBack holds frames back and returns the terminal to the modes it had.
func (s *screen) giveBack() error {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.mu.Lock()
	lent := s.lent
	s.lent = true
	s.mu.Unlock()
	if lent {
		return nil // given back already (a panic on the way out)
	}
	if s.fullScreen {
		_, _ = io.WriteString(s.out, leaveFullScreen)
	}
	if s.saved == nil {
		return nil
	}
	err := term.Restore(int(s.tty.Fd()), s.saved)
	s.saved = nil
	return err
}

// handOver wraps a command run with tea.Exec (a shell) so that it gets the
// terminal as the user's shell left it, and the UI gets it back after.
// bubbletea does this itself only with its standard renderer.
func (s *screen) handOver(cmd tea.ExecCommand) tea.ExecCommand {
	if !s.fullScreen {
		return cmd
	}
	return lentTerminal{cmd, s}
}

type lentTerminal struct {
	tea.ExecCommand
	s *screen
}

func (l lentTerminal) Run() error {
	err := l.s.giveBack()
	if err == nil {
		// The main screen still holds the last shell's transcript: a shell
		// opened over it reads as a continuation of that one.
		_, _ = io.WriteString(l.s.out, clearMainScreen)
		err = l.ExecCommand.Run()
	}
	if err2 := l.s.takeOver(); err == nil {
		err = err2
	}
	return err
}

// drawn is the model that NewProgram runs: the App, its frames drawn by a
// screen instead of bubbletea's renderer.
type drawn struct {
	app *App
	scr *screen
}

func (d drawn) Init() tea.Cmd {
	defer d.giveBackOnPanic()
	return guardCmd(d.app.Init())
}

func (d drawn) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer d.giveBackOnPanic()
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		d.scr.resize(ws.Width, ws.Height)
	}
	_, cmd := d.app.Update(msg)
	return d, guardCmd(cmd)
}

// guardCmd runs cmd (and the commands of a batch it returns) under
// utilruntime.HandleCrash: bubbletea runs commands on goroutines of their
// own, where a panic would otherwise end the process with the terminal
// still raw and on the alternate screen.
func guardCmd(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		defer utilruntime.HandleCrash()
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for i := range b {
				b[i] = guardCmd(b[i])
			}
		}
		return msg
	}
}

func (d drawn) View() string {
	defer d.giveBackOnPanic()
	d.scr.draw(d.app.View())
	return "" // bubbletea's renderer is the nil one: nothing to give it
}

// giveBackOnPanic returns the terminal to the user before a panic in the
// model goes on (to cli.Main, which reports it and exits 70; Run turns
// bubbletea's own catching off), so the report is not lost on the
// alternate screen.
func (d drawn) giveBackOnPanic() {
	if r := recover(); r != nil {
		_ = d.scr.giveBack()
		panic(r)
	}
}

// NewProgram returns a bubbletea program that runs m and draws its frames on
// out, writing only when a frame changed (see screen): the program Run runs,
// less the terminal's modes and size (benchmarks give any writer, and send
// the size). It sets tea.WithoutRenderer; opts may add anything else.
func NewProgram(m *App, out io.Writer, opts ...tea.ProgramOption) *tea.Program {
	return newProgram(m, newScreen(out), opts...)
}

func newProgram(m *App, scr *screen, opts ...tea.ProgramOption) *tea.Program {
	m.scr = scr
	return tea.NewProgram(drawn{m, scr}, append(opts, tea.WithoutRenderer())...)
}
