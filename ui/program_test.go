package ui

import (
	"context"
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
	app := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	var out syncbuf.Buffer
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
