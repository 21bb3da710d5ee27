package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/internal/textsafe/textsafetest"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

const (
	hostile      = textsafetest.Hostile
	hostileShown = textsafetest.Shown
)

func assertInert(t *testing.T, out string) { t.Helper(); textsafetest.AssertInert(t, out) }

// hostileSnapshot is the incident fixture with hostile text wherever the
// fleet writes: a cell, the header's notes, a notice, a termination message.
func hostileSnapshot() *fleet.Snapshot {
	snap := incidentSnapshot()
	snap.Status.Notes = []string{"note " + hostile}
	return withSandbox(snap, "sbx-d", func(b model.Sandbox) model.Sandbox {
		b.EnginePhase = "P" + hostile
		b.Notices = []model.Notice{{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning, Message: "notice " + hostile}}
		slots := append([]model.Slot(nil), b.Slots...)
		p := *slots[0].Pod
		p.Status.ContainerStatuses = []model.ContainerStatus{{Name: "sandbox", LastTerminationState: model.TerminationState{
			Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: "term " + hostile + "\nsecond line"}}}}
		slots[0].Pod = &p
		b.Slots = slots
		return b
	})
}

// Every surface of the TUI, driven through the program and the screen
// writer that production uses, writes hostile text as text.
func TestHostileTextIsShownNotObeyed(t *testing.T) {
	src := &fakeSource{snap: hostileSnapshot()}
	be := Backend{
		YAML: func(ctx context.Context, sb *model.Sandbox) (string, error) {
			return "kind: BatchSandbox\nmetadata:\n  annotations:\n    a: yaml " + hostile + "\n", nil
		},
		Logs: func(ctx context.Context, sb *model.Sandbox, _ LogOptions, w io.Writer) error {
			_, err := io.WriteString(w, "log "+hostile+"\r\nlast\n")
			return err
		},
		Events: func(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error) {
			e := corev1.Event{Type: "Warning", Reason: "R" + hostile, Message: "event " + hostile}
			e.InvolvedObject.Kind, e.InvolvedObject.Name = "Pod", sb.Name()+"-0"
			return []corev1.Event{e}, nil
		},
		Exec: func(ctx context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (int, error) {
			_, _ = io.WriteString(out, "exec "+hostile+"\n")
			return 0, errors.New("failed " + hostile)
		},
	}
	p, out := startProgram(t, New(src, be, Options{Now: fixedNow}, DefaultKeyMap()), 400, 60)
	typ := func(s string) {
		for _, r := range s {
			p.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		}
	}
	enter := func() { p.Send(tea.KeyMsg{Type: tea.KeyEnter}) }

	waitOutput(t, out, "note ␛]0;evil title␇") // header
	waitOutput(t, out, "P␛]0;")                // a table cell
	typ("d")
	waitOutput(t, out, "notice "+hostileShown)
	waitOutput(t, out, "term "+hostileShown)
	waitOutput(t, out, "event "+hostileShown)
	typ("-y")
	waitOutput(t, out, "yaml "+hostileShown)
	typ("-l")
	waitOutput(t, out, "log "+hostileShown)
	typ("-e")
	waitOutput(t, out, "R␛]0;")
	typ("-x")
	typ("id")
	enter()
	waitOutput(t, out, "exec "+hostileShown)
	waitOutput(t, out, "failed "+hostileShown) // the error in the title
	assertInert(t, out.String())
}

// FuzzRenderInert renders the table and the detail view of a sandbox whose
// fleet-written fields hold the fuzzer's text: with colours off, a frame
// holds no control character at all but the newlines between its rows.
func FuzzRenderInert(f *testing.F) {
	for _, s := range []string{hostile, "", "plain", "\t\r\n", "\xc2", "日本語\u200b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		snap := withSandbox(incidentSnapshot(), "sbx-d", func(b model.Sandbox) model.Sandbox {
			b.EnginePhase = s
			b.Notices = []model.Notice{{Code: "X", Severity: model.SeverityWarning, Message: s,
				Evidence: []model.Evidence{{Kind: model.Observed, Text: s}}}}
			return b
		})
		snap.Status.Notes = []string{s}
		a := New(&fakeSource{snap: snap}, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
		a.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
		check := func(frame string) {
			if !utf8.ValidString(frame) {
				t.Fatalf("frame is not UTF-8 for %q", s)
			}
			for _, r := range frame {
				if r != '\n' && (r < 0x20 || (r >= 0x7f && r <= 0x9f)) {
					t.Fatalf("frame holds %U for %q:\n%q", r, s, frame)
				}
			}
		}
		check(a.View())
		a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'d'}})
		detail := a.View()
		if !strings.Contains(detail, "NOTICES") {
			t.Fatalf("d did not open the detail view:\n%s", detail)
		}
		check(detail)
	})
}
