package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/forensics"
	"github.com/sandscope/sandscope/model/query"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

const testW, testH = 140, 24

func newTestApp(t *testing.T, src *fakeSource, be Backend, opts Options) (*App, *teatest.TestModel) {
	return newTestAppSized(t, src, be, opts, testW, testH)
}

// incidentApp runs the App over the incident fleet (incidentSnapshot) with
// no backend, the default options and the test terminal size.
func incidentApp(t *testing.T) (*fakeSource, *App, *teatest.TestModel) {
	t.Helper()
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestApp(t, src, Backend{}, Options{})
	return src, app, tm
}

func newTestAppSized(t *testing.T, src *fakeSource, be Backend, opts Options, w, h int) (*App, *teatest.TestModel) {
	t.Helper()
	opts.Now = fixedNow
	app := New(src, be, opts, DefaultKeyMap())
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() { _ = tm.Quit() })
	return app, tm
}

// waitScreen waits until the app's current frame satisfies cond. It asks the
// running program for its View (what bubbletea paints) instead of parsing the
// diffed byte stream, and fails with the last frame when time runs out.
func waitScreen(t *testing.T, tm *teatest.TestModel, app *App, what string, cond func(string) bool) string {
	t.Helper()
	var last string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		frame := make(chan string, 1)
		tm.Send(peekMsg{frame})
		select {
		case last = <-frame:
			if cond(last) {
				return last
			}
		case <-time.After(time.Second):
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("screen never showed %s; last frame:\n%s", what, last)
	return ""
}

// screenContains waits for a substring on screen.
func screenContains(t *testing.T, tm *teatest.TestModel, app *App, sub string) string {
	t.Helper()
	return waitScreen(t, tm, app, "\""+sub+"\"", func(s string) bool { return strings.Contains(s, sub) })
}

func finalFrame(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*App)
	return ansi.Strip(m.View())
}

func goldenFrame(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	f := finalFrame(t, tm)
	golden.RequireEqual(t, []byte(f))
	return f
}

func keys(tm *teatest.TestModel, ks ...string) {
	for _, k := range ks {
		switch k {
		case "esc":
			tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
		case "enter":
			tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
		case "tab":
			tm.Send(tea.KeyMsg{Type: tea.KeyTab})
		case "ctrl+d":
			tm.Send(tea.KeyMsg{Type: tea.KeyCtrlD})
		case "ctrl+s":
			tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
		default:
			tm.Type(k)
		}
	}
}

func TestSandboxesView(t *testing.T) {
	_, app, tm := incidentApp(t)
	screen := screenContains(t, tm, app, "IP_TAKEN→sbx-b-0")
	for _, want := range []string{"Sandboxes [4/4]", "synced · as of 17:25:59", "IP_TAKEN 1", "stuck 1"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	goldenFrame(t, tm)
}

func TestFilter(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, "/", "sbx-a")
	screenContains(t, tm, app, "Sandboxes [1/4]")
	keys(tm, "enter")
	goldenFrame(t, tm)
}

func TestFilterInvertAndLabels(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, "/", "!sbx-a", "enter")
	screenContains(t, tm, app, "Sandboxes [3/4]")
	keys(tm, "esc") // clears the filter
	screenContains(t, tm, app, "Sandboxes [4/4]")
	keys(tm, "/", "-l app=rl", "enter")
	s := screenContains(t, tm, app, "Sandboxes [2/4]")
	if strings.Contains(s, "sbx-c") {
		t.Fatalf("label filter kept sbx-c:\n%s", s)
	}
	keys(tm, "esc", "z")
	screenContains(t, tm, app, "Sandboxes [3/4]  problems only")
}

func TestSortKeepsCursorOnSandbox(t *testing.T) {
	src, app, tm := incidentApp(t)
	screenContains(t, tm, app, "Sandboxes [4/4]")
	keys(tm, "j", "j") // by name: batch/sbx-d, team-rl/sbx-a, team-rl/sbx-b → on sbx-b
	keys(tm, "R")      // restarts: sbx-c first
	screenContains(t, tm, app, "sort:restarts")
	// A live update that moves rows: sbx-b gains restarts and a new sandbox appears.
	src.set(withSandbox(incidentSnapshot(), "sbx-b", func(b model.Sandbox) model.Sandbox { b.Restarts = 9; return b }))
	waitScreen(t, tm, app, "sbx-b first", func(s string) bool {
		return strings.Contains(s, "9 ") && strings.Index(s, "sbx-b ") < strings.Index(s, "sbx-c ")
	})
	if sel := app.selected().sb; sel == nil || sel.Name() != "sbx-b" {
		t.Fatalf("cursor left sbx-b: %v", sel)
	}
	goldenFrame(t, tm)
}

func TestCommands(t *testing.T) {
	_, app, tm := incidentApp(t)
	// One session, in order: each command's screen is the next one's start.
	for _, step := range []struct {
		keys []string
		want string
	}{
		{[]string{":", "pods", "enter"}, "Pods [4/4]"},
		{[]string{":", "pools", "enter"}, "rl-pool"},
		{[]string{"-"}, "Sandboxes [4/4]"},
		{[]string{":", "sb /sbx-c", "enter"}, "Sandboxes [1/4]  /sbx-c"},
		{[]string{":", "sb app=rl", "enter"}, "Sandboxes [2/4]  /-l app=rl"},
		{[]string{":", "ns batch", "enter"}, "ns:batch"},
		{[]string{":", "bogus", "enter"}, `unknown command "bogus"`},
		{[]string{":", "ctx other", "enter"}, "switching context is not available here"},
		{[]string{":", "po", "tab", "enter"}, "Pods ["}, // completion: "po" → "pods"
	} {
		keys(tm, step.keys...)
		screenContains(t, tm, app, step.want)
	}
	keys(tm, ":", "q", "enter")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func TestPodsView(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, ":", "pods", "enter")
	screenContains(t, tm, app, "Pods [4/4]")
	goldenFrame(t, tm)
}

func TestHelp(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestApp(t, src, Backend{Delete: func(context.Context, *model.Sandbox) error { return nil }}, Options{})
	keys(tm, "?")
	screenContains(t, tm, app, "sort restarts")
	goldenFrame(t, tm)
}

func TestDetailShowsIdentityEvidence(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestAppSized(t, src, Backend{}, Options{}, testW, 40)
	keys(tm, "/", "sbx-a", "enter", "d")
	s := screenContains(t, tm, app, "IP held by")
	for _, want := range []string{"recorded IP     10.244.1.17", "team-rl/sbx-b-0  uid uid-b", "observed: Pod sbx-b-0 (uid-b) has podIP 10.244.1.17", "IP history of 10.244.1.17"} {
		if !strings.Contains(s, want) {
			t.Errorf("detail lacks %q:\n%s", want, s)
		}
	}
	goldenFrame(t, tm)
}

// coded refusal, as actions/ returns it.
type refusal struct{ code, msg string }

func (r refusal) Error() string     { return r.msg }
func (r refusal) ErrorCode() string { return r.code }

func TestReadOnlyRefusesMutations(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	deleted := false
	be := Backend{
		Delete: func(context.Context, *model.Sandbox) error { deleted = true; return nil },
		Shell:  func(*model.Sandbox) (tea.ExecCommand, error) { return nil, errors.New("must not be called") },
	}
	app, tm := newTestApp(t, src, be, Options{ReadOnly: true})
	screenContains(t, tm, app, "READ-ONLY")
	// The badge comes from the options: a snapshot the source hands out is
	// shared with its other readers and is never written.
	if src.Snapshot().Status.ReadOnly {
		t.Fatal("the UI wrote its read-only option into the source's snapshot")
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlD})
	screenContains(t, tm, app, "refused (READ_ONLY): delete is disabled in read-only mode")
	keys(tm, "s")
	screenContains(t, tm, app, "refused (READ_ONLY): shell is disabled")
	keys(tm, "?")
	s := screenContains(t, tm, app, "sort restarts")
	lines := strings.Split(s, "\n")
	if body := strings.Join(lines[:len(lines)-2], "\n"); strings.Contains(body, "ctrl+d") || strings.Contains(body, "shell") {
		t.Fatalf("read-only help still lists mutating keys:\n%s", s)
	}
	if deleted {
		t.Fatal("delete ran in read-only mode")
	}
}

func TestDeleteAsksConfirmation(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	got := make(chan string, 2)
	be := Backend{Delete: func(_ context.Context, sb *model.Sandbox) error {
		got <- sb.Key
		return refusal{"IP_TAKEN", "IP_TAKEN: sandbox identity changed, refusing"}
	}}
	app, tm := newTestApp(t, src, be, Options{})
	keys(tm, "/", "sbx-a", "enter", "ctrl+d")
	screenContains(t, tm, app, "[y/N] Delete bsbx team-rl/sbx-a? This cannot be undone.")
	keys(tm, "n")
	screenContains(t, tm, app, "delete cancelled")
	keys(tm, "ctrl+d", "y")
	screenContains(t, tm, app, "refused: delete team-rl/sbx-a: IP_TAKEN")
	if k := <-got; k != "bsbx/team-rl/sbx-a" {
		t.Fatalf("deleted %s", k)
	}
}

func TestResize(t *testing.T) {
	_, app, tm := incidentApp(t)
	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	waitScreen(t, tm, app, "80 columns", func(s string) bool { return app.width == 80 })
	f := goldenFrame(t, tm)
	for i, line := range strings.Split(f, "\n") {
		if w := ansi.StringWidth(line); w > 80 {
			t.Errorf("line %d is %d wide: %q", i, w, line)
		}
	}
	if n := strings.Count(f, "\n") + 1; n != 24 {
		t.Errorf("frame has %d lines, want 24", n)
	}
}

func TestTinyTerminalDegrades(t *testing.T) {
	app := New(&fakeSource{snap: incidentSnapshot()}, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	for _, sz := range [][2]int{{40, 10}, {20, 5}, {1, 1}} {
		app.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		f := ansi.Strip(app.View())
		lines := strings.Split(f, "\n")
		if len(lines) > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > sz[0] {
				t.Errorf("%dx%d: line too wide: %q", sz[0], sz[1], l)
			}
		}
	}
}

func TestDisconnected(t *testing.T) {
	src, app, tm := incidentApp(t)
	screenContains(t, tm, app, "IP_TAKEN→sbx-b-0")
	snap := incidentSnapshot()
	snap.Version = 2
	since := t0.Add(-30 * time.Second)
	snap.Status.DisconnectedSince = &since
	src.set(snap)
	s := screenContains(t, tm, app, "disconnected since 17:25:30 · data as of 17:25:59")
	if strings.Contains(s, "IP_TAKEN→") {
		t.Fatalf("disconnected screen still shows a verdict:\n%s", s)
	}
	snap2 := incidentSnapshot()
	snap2.Version = 3
	src.set(snap2)
	screenContains(t, tm, app, "IP_TAKEN→sbx-b-0")
}

func TestLogsFollowAndStaleRepliesDropped(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	release := make(chan struct{})
	be := Backend{
		Logs: func(ctx context.Context, sb *model.Sandbox, opts LogOptions, w io.Writer) error {
			if opts.Previous {
				_, _ = io.WriteString(w, "previous line 1\nprevious line 2\n")
				return nil
			}
			_, _ = io.WriteString(w, "hello from "+sb.Name()+"\n")
			<-release
			_, _ = io.WriteString(w, "late line\n")
			<-ctx.Done()
			return ctx.Err()
		},
		YAML: func(ctx context.Context, sb *model.Sandbox) (string, error) {
			return "kind: BatchSandbox\nmetadata:\n  name: " + sb.Name() + "\n", nil
		},
	}
	app, tm := newTestApp(t, src, be, Options{})
	keys(tm, "l")
	screenContains(t, tm, app, "hello from sbx-d")
	keys(tm, "-", "p")
	screenContains(t, tm, app, "previous line 2")
	close(release) // the first stream's late line must not reach the new view
	keys(tm, "-", "y")
	s := screenContains(t, tm, app, "kind: BatchSandbox")
	if strings.Contains(s, "late line") {
		t.Fatalf("stale log reply reached another view:\n%s", s)
	}
}

func TestEventsView(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	be := Backend{Events: func(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error) {
		e := corev1.Event{Type: "Warning", Reason: "BackOff", Message: "Back-off restarting failed container"}
		e.InvolvedObject.Kind, e.InvolvedObject.Name = "Pod", sb.Name()+"-0"
		return []corev1.Event{e}, nil
	}}
	app, tm := newTestApp(t, src, be, Options{})
	keys(tm, "e")
	screenContains(t, tm, app, "pod/sbx-d-0")
}

func TestKeyMapConfig(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/good.yaml"
	if err := os.WriteFile(good, []byte("delete: ctrl+k\nshell: [f2, ctrl+o]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	km, err := LoadKeyMap(good)
	if err != nil {
		t.Fatal(err)
	}
	if got := km.Delete.Keys(); len(got) != 1 || got[0] != "ctrl+k" {
		t.Fatalf("delete keys = %v", got)
	}
	for _, bad := range []string{"nuke: x\n", "delete: []\n", "delete: q\n", "::: not yaml", "quit: banana\n", "detail: [enter, ctrl+banana]\n"} {
		p := dir + "/bad.yaml"
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		km, err := LoadKeyMap(p)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: want an error naming the file, got %v", bad, err)
		}
		if km.Delete.Keys()[0] != "ctrl+d" {
			t.Errorf("%q: defaults not kept", bad)
		}
	}
	if _, err := LoadKeyMap(dir + "/missing.yaml"); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if KeysPath() != "/xdg/sandscope/keys.yaml" {
		t.Fatal(KeysPath())
	}
}

var _ = bytes.MinRead

func TestExecPromptShowsOutput(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	var gotCmd []string
	be := Backend{Exec: func(ctx context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (int, error) {
		gotCmd = cmd
		_, _ = io.WriteString(out, "ran in "+sb.Name()+"\n")
		return 3, nil
	}}
	app, tm := newTestApp(t, src, be, Options{})
	keys(tm, "x", "uname -a", "enter")
	s := screenContains(t, tm, app, "ran in sbx-d")
	screenContains(t, tm, app, "error: exit code 3")
	if strings.Join(gotCmd, " ") != "uname -a" {
		t.Fatalf("exec got %q\n%s", gotCmd, s)
	}
}

func TestCreateShowsStages(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	step := make(chan struct{})
	be := Backend{Create: func(ctx context.Context, req CreateRequest, stage func(CreateStage)) (string, error) {
		stage(CreateStage{Line: "sbx-new scheduled"})
		<-step
		if req.Image != "python:3.12" || req.Namespace != "team-rl" {
			return "", fmt.Errorf("bad request %+v", req)
		}
		return "", refusal{"IMAGE_CONFIG_UNREADABLE", "IMAGE_CONFIG_UNREADABLE: registry unreachable; not creating"}
	}}
	app, tm := newTestApp(t, src, be, Options{DefaultNamespace: "team-rl"})
	keys(tm, "c", "python:3.12", "ctrl+s")
	screenContains(t, tm, app, "create: sbx-new scheduled")
	close(step)
	screenContains(t, tm, app, "refused: create in team-rl: IMAGE_CONFIG_UNREADABLE: registry unreachable")
}

func TestCreateFormCollectsEveryField(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	got := make(chan CreateRequest, 1)
	be := Backend{Create: func(ctx context.Context, req CreateRequest, stage func(CreateStage)) (string, error) {
		got <- req
		return "bsbx/team-rl/sbx-new", nil
	}}
	app, tm := newTestApp(t, src, be, Options{DefaultNamespace: "team-rl"})
	// image, entrypoint, pool, env (bad first), expiry, cpu, memory
	keys(tm, "c", "python:3.12", "tab", "python -m http.server", "tab", "warm", "tab", "A=1 oops", "ctrl+s")
	screenContains(t, tm, app, `env: "oops" is not K=V`)
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	keys(tm, "B=2", "tab", "30m", "tab", "500m", "tab", "1Gi", "enter")
	select {
	case req := <-got:
		want := CreateRequest{Namespace: "team-rl", Image: "python:3.12", Command: []string{"python", "-m", "http.server"},
			Pool: "warm", Env: map[string]string{"A": "1", "B": "2"}, Lifetime: 30 * time.Minute, CPU: "500m", Memory: "1Gi"}
		if !reflect.DeepEqual(req, want) {
			t.Fatalf("create request\n got %+v\nwant %+v", req, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the form never called Create")
	}
	screenContains(t, tm, app, "created bsbx/team-rl/sbx-new")
}

func TestDetailExplainsRestartsFromEvents(t *testing.T) {
	oom := pod("team-rl", "sbx-b-0", "uid-b", "10.244.1.17", "node-1", corev1.PodRunning, t0.Add(-time.Hour))
	oom.Status.ContainerStatuses[0].RestartCount = 1
	oom.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{
		Reason: "OOMKilled", ExitCode: 137, StartedAt: metav1.NewTime(t0.Add(-50 * time.Minute)), FinishedAt: metav1.NewTime(t0.Add(-10 * time.Minute)),
	}
	snap := withSandbox(incidentSnapshot(), "sbx-b", func(sb model.Sandbox) model.Sandbox {
		sb.Slots = append([]model.Slot(nil), sb.Slots...)
		sb.Slots[0].Pod = oom
		return sb
	})
	fetched := make(chan struct{}, 1)
	// The verdicts are the Backend's (inspect.Forensics in the program);
	// here, Classify of the Pod as the view has it.
	be := Backend{Restarts: func(ctx context.Context, sb *model.Sandbox) ([]model.Notice, error) {
		fetched <- struct{}{}
		return forensics.Classify(sb.Slots[0].Pod, nil, nil, nil), nil
	}}
	app, tm := newTestAppSized(t, &fakeSource{snap: snap}, be, Options{}, testW, 60)
	keys(tm, "/", "sbx-b", "enter", "d")
	s := screenContains(t, tm, app, "RESTART FORENSICS")
	for _, want := range []string{"RESTART_OOM", "observed"} {
		if !strings.Contains(s, want) {
			t.Errorf("detail lacks %q:\n%s", want, s)
		}
	}
	<-fetched
}

// The detail view reads the sandbox's Events: the controller's
// SuccessfulCreate for the same Pod name twice is a re-creation the Events claim.
func TestDetailShowsRecreationFromEvents(t *testing.T) {
	snap := incidentSnapshot()
	sb := snap.Sandbox("bsbx/team-rl/sbx-b")
	if sb == nil || sb.PrimarySlot() == nil || sb.PrimarySlot().Pod == nil {
		t.Skip("incident snapshot has no sbx-b with a Pod")
	}
	podName := sb.PrimarySlot().Pod.Name
	created := func(at time.Time) corev1.Event {
		return corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "BatchSandbox", Namespace: "team-rl", Name: "sbx-b"},
			Reason: forensics.ReasonSuccessfulCreate, Message: "Created pod: " + podName,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 1}
	}
	be := Backend{Events: func(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error) {
		// A re-creation within the second the sandbox was created: the
		// timestamps cannot tell, the Events claim it.
		return []corev1.Event{created(sb.CreatedAt()), created(sb.CreatedAt())}, nil
	}}
	app, tm := newTestAppSized(t, &fakeSource{snap: snap}, be, Options{}, testW, 60)
	keys(tm, "/", "sbx-b", "enter", "d")
	s := screenContains(t, tm, app, "RE-CREATION")
	for _, want := range []string{"POD_RECREATED", "created 2 times under the same name (claimed by SuccessfulCreate Events)"} {
		if !strings.Contains(s, want) {
			t.Errorf("detail lacks %q:\n%s", want, s)
		}
	}
}

// Keys that arrive in one read (a paste, a script, a laggy link) reach the
// app as one multi-rune key: each rune must act in order, in every mode.
func TestKeysArrivingTogether(t *testing.T) {
	_, app, tm := incidentApp(t)
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(":pods")})
	keys(tm, "enter")
	screenContains(t, tm, app, "Pods [4/4]")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("-/sbx-c")})
	screenContains(t, tm, app, "Sandboxes [1/4]")
}

// The exec prompt splits its line as a shell would: `sh -c 'exit 7'` is
// three words, and an unterminated quote is an error that keeps the line.
func TestExecPromptQuoting(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	var gotCmd []string
	be := Backend{Exec: func(ctx context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (int, error) {
		gotCmd = cmd
		return 7, nil
	}}
	app, tm := newTestApp(t, src, be, Options{})
	keys(tm, "x")
	screenContains(t, tm, app, "exec batch/sbx-d> ") // the prompt names its target
	keys(tm, "echo 'oops", "enter")
	screenContains(t, tm, app, "cannot split")
	keys(tm, "esc", "x", "sh -c 'exit 7'", "enter")
	screenContains(t, tm, app, "exit code 7")
	if len(gotCmd) != 3 || gotCmd[2] != "exit 7" {
		t.Fatalf("exec got %q", gotCmd)
	}
}

// Under NO_COLOR no attribute reaches the terminal, not even reverse: the
// cursor row is marked with a gutter, and the mark follows the cursor.
func TestCursorVisibleWithoutColour(t *testing.T) {
	_, app, tm := incidentApp(t)
	marked := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, gutter) {
				out = append(out, strings.Fields(l)[1])
			}
		}
		return out
	}
	s := screenContains(t, tm, app, gutter)
	if m := marked(s); len(m) != 1 || m[0] != "sbx-d" {
		t.Fatalf("marked rows %v, want only sbx-d:\n%s", m, s)
	}
	keys(tm, "j")
	waitScreen(t, tm, app, "cursor on sbx-a", func(s string) bool { m := marked(s); return len(m) == 1 && m[0] == "sbx-a" })
}

// A create's outcome is what the footer shows last, after its last stage,
// and a Failed stage is drawn as an error whatever its line starts with.
func TestCreateOutcomeShownAfterLastStage(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	be := Backend{Create: func(ctx context.Context, req CreateRequest, stage func(CreateStage)) (string, error) {
		stage(CreateStage{Line: "sbx-new Ready"})
		return "bsbx/team-rl/sbx-new", nil
	}}
	for range 20 { // the race it guards against was timing-dependent
		a := New(src, be, Options{DefaultNamespace: "team-rl"}, DefaultKeyMap())
		msgs := []tea.Msg{a.startCreate(CreateRequest{Image: "python:3.12", Namespace: "team-rl"}, "")}
		for len(msgs) > 0 { // run the commands as the program would, replies in order
			m := msgs[0]
			msgs = msgs[1:]
			switch m := m.(type) {
			case tea.Cmd:
				if m != nil {
					msgs = append(msgs, m())
				}
			case tea.BatchMsg:
				for _, c := range m {
					msgs = append(msgs, c)
				}
			case nil:
			default:
				_, next := a.Update(m)
				msgs = append(msgs, next)
			}
		}
		if a.flash != "created bsbx/team-rl/sbx-new" || a.flashIsErr {
			t.Fatalf("footer %q (error %v), want the outcome last", a.flash, a.flashIsErr)
		}
	}
	a := New(src, be, Options{}, DefaultKeyMap())
	a.Update(createStage{stage: CreateStage{Line: "sbx-x Failed: pull error", Failed: true}, ch: make(chan createEvent)})
	if !a.flashIsErr {
		t.Fatal("a Failed stage is not drawn as an error")
	}
}

// A delete the API server accepted is a request: the object stays,
// Terminating, while finalizers hold it, and the footer says so.
func TestDeleteSaysRequested(t *testing.T) {
	sb := &model.Sandbox{Key: "bsbx/ns/held", Meta: model.ObjectMeta{Namespace: "ns", Name: "held"}.WithFinalizers("pool.sandbox.opensandbox.io/pool-allocation")}
	snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true}, []*model.Sandbox{sb}, nil, nil)
	a := New(&fakeSource{snap: snap}, Backend{Delete: func(context.Context, *model.Sandbox) error { return nil }}, Options{}, DefaultKeyMap())
	a.dialog = newDeleteConfirm(pick{sb: sb}, false)
	cmd := a.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	done, ok := cmd().(actionDone)
	if !ok || done.err != nil || !strings.Contains(done.text, "delete requested for ns/held") ||
		!strings.Contains(done.text, "pool-allocation") || strings.Contains(done.text, "deleted") {
		t.Fatalf("outcome %+v", done)
	}
}

// :ns with a namespace the fleet shows no sandbox in says so, and names
// the namespace that differs only in case.
func TestSwitchToUnseenNamespace(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, ":", "ns Team-RL", "enter")
	screenContains(t, tm, app, "did you mean team-rl?")
	keys(tm, ":", "ns batch", "enter")
	s := screenContains(t, tm, app, "namespace: batch")
	if strings.Contains(s, "no sandboxes seen") {
		t.Fatalf("a namespace with sandboxes was reported empty:\n%s", s)
	}
}

// The Pods view sorts with N A S R like the sandboxes view and says when
// it shows problems only; the Pools view offers no detail keys it cannot
// honour.
func TestListViewsSortAndSay(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, ":", "pods", "enter", "R")
	s := screenContains(t, tm, app, "sort:restarts")
	var pods []string
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(strings.TrimLeft(l, " "+gutter)); len(f) > 1 && strings.HasPrefix(f[1], "sbx-") {
			pods = append(pods, f[1])
		}
	}
	if len(pods) == 0 || pods[0] != "sbx-c-0" { // the only Pod with restarts
		t.Fatalf("pods by restarts %v:\n%s", pods, s)
	}
	keys(tm, "z")
	screenContains(t, tm, app, "problems only")
	keys(tm, ":", "pools", "enter")
	s = screenContains(t, tm, app, "Pools [")
	if strings.Contains(s, "d detail") {
		t.Fatalf("the Pools view offers detail:\n%s", s)
	}
}

type evidencedRefusal struct{ refusal }

func (evidencedRefusal) EvidenceLines() []string {
	return []string{"observed: API server: pod team-rl/sbx-b-0 holds 10.244.1.17"}
}

// A refusal is cut at the footer's width and leaves it after a while;
// :messages keeps it whole, with its evidence.
func TestMessagesKeepRefusalsWhole(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	long := "IP_TAKEN: address 10.244.1.17 is held by another pod, team-rl/sbx-b-0 (uid uid-b, Running); " + strings.Repeat("more detail ", 20) + "END-OF-MESSAGE"
	be := Backend{Exec: func(ctx context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (int, error) {
		return 0, evidencedRefusal{refusal{"IP_TAKEN", long}}
	}}
	app, tm := newTestApp(t, src, be, Options{})
	keys(tm, "x", "id", "enter")
	screenContains(t, tm, app, "error: refused")
	keys(tm, "esc", ":", "messages", "enter")
	s := screenContains(t, tm, app, "END-OF-MESSAGE")
	if !strings.Contains(s, "observed: API server: pod team-rl/sbx-b-0 holds 10.244.1.17") {
		t.Fatalf("the evidence is not in :messages:\n%s", s)
	}
}

// The title shows the whole path of views, so "-" has nothing to surprise.
func TestBreadcrumbShowsTheWholePath(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, ":", "pods", "enter", "d")
	screenContains(t, tm, app, "Sandboxes › Pods › ")
}

// At 80 columns the table sorted by a column it would drop shows that
// column, and ctrl+w shows every column.
func TestSortedAndWideColumnsShow(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestAppSized(t, src, Backend{}, Options{}, 80, 20)
	s := screenContains(t, tm, app, "Sandboxes [4/4]")
	if strings.Contains(s, "RESTARTS") || strings.Contains(s, "NODE") {
		t.Fatalf("the test needs RESTARTS and NODE dropped at 80 columns:\n%s", s)
	}
	keys(tm, "R")
	screenContains(t, tm, app, "RESTARTS")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlW})
	screenContains(t, tm, app, "NODE")
}

// 1-9 switch to namespace favorites (configured, else the busiest), 0 to
// every namespace, as k9s's number keys.
func TestNamespaceFavorites(t *testing.T) {
	src, app, tm := incidentApp(t)
	keys(tm, "1") // team-rl has 3 of the 4 sandboxes
	screenContains(t, tm, app, "ns:team-rl")
	keys(tm, "0")
	screenContains(t, tm, app, "ns:all")
	keys(tm, "2")
	screenContains(t, tm, app, "ns:batch")
	keys(tm, "7")
	screenContains(t, tm, app, "no namespace favorite 7")

	app2, tm2 := newTestApp(t, src, Backend{}, Options{Favorites: []string{"batch"}})
	keys(tm2, "1")
	screenContains(t, tm2, app2, "ns:batch")
}

// ctrl+a lists the palette's commands with their aliases.
func TestCtrlAListsCommands(t *testing.T) {
	_, app, tm := incidentApp(t)
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlA})
	s := screenContains(t, tm, app, ":pods, :pod, :po")
	if !strings.Contains(s, ":messages, :msg") {
		t.Fatalf("commands list:\n%s", s)
	}
}

// The create form offers the images it knows (the demo registry's, then
// the fleet's) and the Pools.
func TestCreateFormOffersKnownValues(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestApp(t, src, Backend{Create: func(context.Context, CreateRequest, func(CreateStage)) (string, error) { return "", nil }},
		Options{Images: []string{"registry.demo.local/rl/trainer-env:2026.11"}})
	keys(tm, "c")
	screenContains(t, tm, app, "known: ctrl+n/ctrl+p")
	// On the empty field, the first known value is suggested (→ takes it).
	screenContains(t, tm, app, "image: registry.demo.local/rl/trainer-env:2026.11  (→ takes it)")
	keys(tm, "tab", "tab") // image → command → pool
	screenContains(t, tm, app, "pool: rl-pool  (→ takes it)")
	tm.Send(tea.KeyMsg{Type: tea.KeyRight})
	keys(tm, "-x")
	screenContains(t, tm, app, "pool: rl-pool-x")
}

// A message belongs to the action that made it: the next action starts
// with a clear footer, and a narrow terminal still shows the delete
// prompt's answer keys.
func TestFooterBelongsToTheAction(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestAppSized(t, src, Backend{Delete: func(context.Context, *model.Sandbox) error {
		return refusal{"IP_TAKEN", "IP_TAKEN: refused for the test"}
	}, Exec: func(context.Context, *model.Sandbox, []string, io.Writer) (int, error) { return 0, nil }}, Options{}, 40, 12)
	keys(tm, "ctrl+d")
	screenContains(t, tm, app, "[y/N]")
	keys(tm, "y")
	screenContains(t, tm, app, "refused")
	keys(tm, "x", "true", "enter")
	s := screenContains(t, tm, app, "Exec batch/sbx-d: true")
	if strings.Contains(s, "refused") {
		t.Fatalf("the last refusal stayed under the next action:\n%s", s)
	}
}

// The sandboxes and the other lists read the sort keys through sortKeyOf.
func TestSortKeyOf(t *testing.T) {
	k := DefaultKeyMap()
	for press, want := range map[string]query.SortKey{"N": query.SortName, "A": query.SortAge, "S": query.SortState, "R": query.SortRestarts} {
		if got, ok := sortKeyOf(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(press)}, k); !ok || got != want {
			t.Errorf("%s sorts by %q (%v), want %q", press, got, ok, want)
		}
	}
	if got, ok := sortKeyOf(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("z")}, k); ok {
		t.Errorf("z sorts by %q", got)
	}
}
