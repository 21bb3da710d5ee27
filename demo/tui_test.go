package demo

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/ui"
)

// watcherSource is the demo's watcher as the TUI's Source.
type watcherSource struct{ w *kube.Watcher }

func (s watcherSource) Snapshot() *fleet.Snapshot            { return s.w.Fleet().Snapshot() }
func (s watcherSource) Subscribe() (<-chan struct{}, func()) { return s.w.Subscribe() }

// TestTUILogsAndEventsInTheDemo opens the TUI on the demo fleet, filters to
// one running sandbox and presses l and e: the simulated kubelet's lines and
// Events are on the screen, not "fake logs" or "no events".
func TestTUILogsAndEventsInTheDemo(t *testing.T) {
	d, w := startWatched(t, 3)
	var target *model.Sandbox
	for _, sb := range w.Fleet().Snapshot().Sandboxes() {
		if runningAgent(sb) {
			target = sb
			break
		}
	}
	if target == nil {
		t.Fatal("no running agent sandbox in the demo")
	}
	in := kube.NewInspector(d.Clients, nil)
	be := ui.Backend{
		Logs: func(ctx context.Context, sb *model.Sandbox, opts ui.LogOptions, w io.Writer) error {
			return in.Logs(ctx, sb, kube.LogOptions{Previous: opts.Previous, Timestamps: opts.Timestamps}, w)
		},
		Events: func(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error) { return in.Events(ctx, sb) },
	}
	tm := teatest.NewTestModel(t, ui.New(watcherSource{w}, be, ui.Options{Demo: true}, ui.DefaultKeyMap()), teatest.WithInitialTermSize(200, 40))
	defer tm.Quit() //nolint:errcheck // best effort
	shows := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(50*time.Millisecond))
	}
	tm.Type("/" + target.Name())
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	shows(target.Name())
	tm.Type("l")
	shows("bootstrap: starting execd")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.Type("e")
	shows("Started container sandbox")
}
