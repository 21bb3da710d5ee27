package ui

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/model"
)

// fullBackend offers every action, so that every binding is enabled.
func fullBackend() Backend {
	return Backend{
		YAML:   func(context.Context, *model.Sandbox) (string, error) { return "", nil },
		Logs:   func(context.Context, *model.Sandbox, LogOptions, io.Writer) error { return nil },
		Events: func(context.Context, *model.Sandbox) ([]corev1.Event, error) { return nil, nil },
		Delete: func(context.Context, *model.Sandbox) error { return nil },
		Shell:  func(*model.Sandbox) (tea.ExecCommand, error) { return nil, nil },
		Exec: func(context.Context, *model.Sandbox, []string, io.Writer) (int, error) {
			return 0, nil
		},
		Forward: func(context.Context, *model.Sandbox, int, int) (ForwardInfo, error) { return ForwardInfo{}, nil },
		Create:  func(context.Context, CreateRequest, func(CreateStage)) (string, error) { return "", nil },
	}
}

// withProfile draws in colour profile p for the rest of the test.
func withProfile(t *testing.T, p termenv.Profile) {
	was := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(p)
	t.Cleanup(func() { lipgloss.SetColorProfile(was) })
}

// Help (?) lists every binding of the view, key and meaning, at every
// width, in colour or not: none is cut, and no line is wider than the
// terminal (the help scrolls instead). The footer always says how to quit.
func TestHelpShowsEveryBindingAtEveryWidth(t *testing.T) {
	for _, profile := range []termenv.Profile{termenv.ANSI256, termenv.Ascii} {
		for _, w := range []int{80, 120, 200} {
			withProfile(t, profile)
			a := New(&fakeSource{snap: incidentSnapshot()}, fullBackend(), Options{Now: fixedNow}, DefaultKeyMap())
			a.Update(tea.WindowSizeMsg{Width: w, Height: 24})
			lines := a.fullHelpLines(w)
			text := ansi.Strip(strings.Join(lines, "\n"))
			for _, l := range lines {
				if ansi.StringWidth(l) > w {
					t.Errorf("profile %v width %d: help line wider than the terminal: %q", profile, w, ansi.Strip(l))
				}
			}
			for _, g := range a.top().fullHelp(a.c) {
				for _, b := range g {
					if b.Enabled() && (!strings.Contains(text, b.Help().Key) || !strings.Contains(text, b.Help().Desc)) {
						t.Errorf("profile %v width %d: help lacks %s %q:\n%s", profile, w, b.Help().Key, b.Help().Desc, text)
					}
				}
			}
			for _, must := range []string{":", "ctrl+a", "esc", "?", "q/ctrl+c", "F ", "0-9", "ctrl+d", "ctrl+w"} {
				if !strings.Contains(text, must) {
					t.Errorf("profile %v width %d: help never lists %q:\n%s", profile, w, must, text)
				}
			}
			footer := ansi.Strip(a.footerLines(w)[1])
			if !strings.Contains(footer, "q quit") || !strings.Contains(footer, "? help") {
				t.Errorf("profile %v width %d: the footer does not say how to quit: %q", profile, w, footer)
			}
		}
	}
}

// As in k9s: q leaves a sub-view (logs, YAML, detail, events, help) and
// quits only from the top view; ctrl+c closes a prompt rather than the
// program.
func TestQIsBackInSubViewsAndCtrlCClosesPrompts(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestApp(t, src, fullBackend(), Options{})
	screenContains(t, tm, app, "Sandboxes [4/4]")
	for _, open := range []struct{ key, title string }{{"l", "Logs "}, {"y", "YAML "}, {"d", "Detail "}, {"e", "Events "}} {
		keys(tm, open.key)
		screenContains(t, tm, app, "› "+open.title)
		keys(tm, "q")
		waitScreen(t, tm, app, "the table after q in "+open.title, func(s string) bool {
			return strings.Contains(s, "Sandboxes [4/4]") && !strings.Contains(s, "› "+open.title)
		})
	}
	keys(tm, "?")
	screenContains(t, tm, app, "port-forward")
	keys(tm, "q")
	waitScreen(t, tm, app, "help closed", func(s string) bool { return !strings.Contains(s, "port-forward") })

	keys(tm, "/", "sbx")
	screenContains(t, tm, app, "/sbx")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	keys(tm, "j")
	waitScreen(t, tm, app, "the prompt closed, the program running", func(s string) bool {
		return strings.Contains(s, "Sandboxes [4/4]") && !strings.Contains(s, "/sbxj")
	})
}

// :pods shows the column it is sorted by at every width, and ctrl+w
// widens it as it does the sandboxes.
func TestPodsSortColumnAndWide(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestAppSized(t, src, fullBackend(), Options{}, 80, 24)
	keys(tm, ":", "pods", "enter")
	s := screenContains(t, tm, app, "Pods [4/4]")
	before := strings.Fields(strings.Split(s, "\n")[3])
	keys(tm, "A")
	s = screenContains(t, tm, app, "sort:age")
	if head := strings.Split(s, "\n")[3]; !strings.Contains(head, "AGE") {
		t.Fatalf("sorted by age, without AGE:\n%s", s)
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlW})
	s = screenContains(t, tm, app, "  wide")
	if after := strings.Fields(strings.Split(s, "\n")[3]); len(after) <= len(before) {
		t.Fatalf("ctrl+w shows %v, before %v:\n%s", after, before, s)
	}
}

// ":ns" alone lists the namespaces with their favorite keys, and enter
// shows the one under the cursor; ":sb" alone clears a label filter.
func TestNamespacesViewAndSbAloneClears(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestApp(t, src, fullBackend(), Options{})
	keys(tm, ":", "ns", "enter")
	s := screenContains(t, tm, app, "Namespaces [3/3]")
	if !strings.Contains(s, "<0>all <1>team-rl <2>batch") {
		t.Errorf("the header does not say which namespace each number key shows:\n%s", s)
	}
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`0\s+all\s+4\s+3`), regexp.MustCompile(`1\s+team-rl\s+3\s+2`), regexp.MustCompile(`2\s+batch\s+1\s+1`)} {
		if !want.MatchString(s) {
			t.Errorf(":ns lacks %s:\n%s", want, s)
		}
	}
	keys(tm, "j", "j", "enter")
	s = screenContains(t, tm, app, "ns:team-rl")
	if !strings.Contains(s, "Sandboxes [3/3]") {
		t.Fatalf("enter on team-rl:\n%s", s)
	}

	keys(tm, ":", "sb app=rl", "enter")
	screenContains(t, tm, app, "Sandboxes [2/3]  /-l app=rl")
	keys(tm, ":", "sb", "enter")
	s = screenContains(t, tm, app, "Sandboxes [3/3]")
	if strings.Contains(s, "app=rl") {
		t.Fatalf(":sb alone kept the label filter:\n%s", s)
	}
}

// ctrl+a lists the commands; enter runs the one under the cursor.
func TestCommandsViewEnterRunsTheCommand(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestApp(t, src, fullBackend(), Options{})
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlA})
	screenContains(t, tm, app, ":pods, :pod, :po")
	keys(tm, "j", "enter")
	screenContains(t, tm, app, "Pods [4/4]")
}

// In logs, C goes to the next container of the Pod, init containers
// included (execd-installer, for a Pod stuck in PodInitializing), and
// 0-6 choose k9s's windows; the number keys are the view's there, not
// the namespace favorites.
func TestLogsContainerPickerAndSinceWindows(t *testing.T) {
	asked := make(chan LogOptions, 16)
	be := fullBackend()
	be.Logs = func(ctx context.Context, _ *model.Sandbox, o LogOptions, w io.Writer) error {
		asked <- o
		_, _ = io.WriteString(w, "line\n")
		return nil
	}
	p := pod("batch", "sbx-d-0", "uid-d", "10.244.2.4", "node-2", corev1.PodPending, t0)
	p.Spec.Containers = []model.Container{{Name: "sandbox"}}
	p.Status.SetInitContainerStatuses([]model.ContainerStatus{{Name: "execd-installer"}})
	snap := withSandbox(incidentSnapshot(), "sbx-d", func(sb model.Sandbox) model.Sandbox {
		sb.Slots = []model.Slot{{PodName: "sbx-d-0", Pod: p, Identity: model.IdentityOK}}
		return sb
	})
	app, tm := newTestApp(t, &fakeSource{snap: snap}, be, Options{})
	next := func() LogOptions {
		t.Helper()
		select {
		case o := <-asked:
			return o
		case <-time.After(5 * time.Second):
			t.Fatal("no log read")
		}
		return LogOptions{}
	}
	keys(tm, "l")
	if o := next(); o.Container != "" || o.Since != 0 {
		t.Fatalf("first read: %+v", o)
	}
	keys(tm, "C")
	screenContains(t, tm, app, "container execd-installer")
	if o := next(); o.Container != "execd-installer" {
		t.Fatalf("C read %+v", o)
	}
	keys(tm, "3")
	s := screenContains(t, tm, app, "last 5m")
	if o := next(); o.Since != 5*time.Minute || o.Container != "execd-installer" {
		t.Fatalf("3 read %+v", o)
	}
	if strings.Contains(s, "namespace:") {
		t.Fatalf("3 switched namespace:\n%s", s)
	}
	keys(tm, "1")
	screenContains(t, tm, app, "head: the whole log")
	if o := next(); o.Since >= 0 {
		t.Fatalf("1 read %+v", o)
	}
}
