package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/syncbuf"
	"github.com/sandscope/sandscope/model"
)

// NewProgram draws the App's frames on its writer, live updates included.
func TestNewProgramDraws(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	_, out := startProgram(t, New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap()), 160, 30)
	waitOutput(t, out, "sbx-a")

	src.set(withSandbox(src.Snapshot(), "sbx-c", func(b model.Sandbox) model.Sandbox { b.Restarts = 4242; return b }))
	waitOutput(t, out, "4242")
}

// startProgram runs app through NewProgram in a w×h window with no
// terminal input until the test ends; out receives every frame it draws.
func startProgram(t *testing.T, app *App, w, h int) (p *tea.Program, out *syncbuf.Buffer) {
	t.Helper()
	out = new(syncbuf.Buffer)
	p = NewProgram(app, out, tea.WithInput(nil), tea.WithoutSignalHandler(), tea.WithContext(t.Context()))
	done := make(chan struct{})
	go func() { defer close(done); _, _ = p.Run() }()
	t.Cleanup(func() { p.Quit(); <-done })
	p.Send(tea.WindowSizeMsg{Width: w, Height: h})
	return p, out
}

func waitOutput(t *testing.T, out *syncbuf.Buffer, sub string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), sub) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never written; output:\n%q", sub, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
