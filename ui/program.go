package ui

import (
	"io"

	tea "github.com/charmbracelet/bubbletea"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/sandscope/sandscope/ui/screen"
)

// drawn is the model that NewProgram runs: the App, its frames drawn by a
// screen.Screen instead of bubbletea's renderer.
type drawn struct {
	app *App
	scr *screen.Screen
}

func (d drawn) Init() tea.Cmd {
	defer d.giveBackOnPanic()
	return guardCmd(d.app.Init())
}

func (d drawn) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer d.giveBackOnPanic()
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		d.scr.Resize(ws.Width, ws.Height)
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
	d.scr.Draw(d.app.View())
	return "" // bubbletea's renderer is the nil one: nothing to give it
}

// giveBackOnPanic returns the terminal to the user before a panic in the
// model goes on (to cli.Main, which reports it and exits 70; Run turns
// bubbletea's own catching off), so the report is not lost on the
// alternate screen.
func (d drawn) giveBackOnPanic() {
	if r := recover(); r != nil {
		_ = d.scr.GiveBack()
		panic(r)
	}
}

// NewProgram returns a bubbletea program that runs m and draws its frames on
// out, writing only when a frame changed (see package screen): the program Run runs,
// less the terminal's modes and size (benchmarks give any writer, and send
// the size). It sets tea.WithoutRenderer; opts may add anything else.
func NewProgram(m *App, out io.Writer, opts ...tea.ProgramOption) *tea.Program {
	return newProgram(m, screen.New(out, screen.Options{}), opts...)
}

func newProgram(m *App, scr *screen.Screen, opts ...tea.ProgramOption) *tea.Program {
	m.scr = scr
	return tea.NewProgram(drawn{m, scr}, append(opts, tea.WithoutRenderer())...)
}
