package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/model"
)

// errLong is an error far wider than the terminal, whose end must show.
var errLong = errors.New("reading batchsandboxes team-rl/sbx-a: the server could not find the requested resource " +
	"(get batchsandboxes.sandbox.opensandbox.io sbx-a) while the API server was answering slowly: END-OF-ERROR")

// The logs, previous logs, YAML and exec views show their error in the
// body, whole, and it reaches :messages.
func TestViewErrorsShownWholeAndLogged(t *testing.T) {
	be := Backend{
		YAML: func(context.Context, *model.Sandbox) (string, error) { return "", errLong },
		Logs: func(context.Context, *model.Sandbox, LogOptions, io.Writer) error { return errLong },
		Exec: func(context.Context, *model.Sandbox, []string, io.Writer) (int, error) { return 0, errLong },
	}
	for _, open := range [][]string{{"y"}, {"l"}, {"p"}, {"x", "ls", "enter"}} {
		t.Run(open[0], func(t *testing.T) {
			src := &fakeSource{snap: incidentSnapshot()}
			app, tm := newTestAppSized(t, src, be, Options{}, 80, 24)
			screenContains(t, tm, app, "Sandboxes [4/4]")
			keys(tm, open...)
			s := screenContains(t, tm, app, "END-OF-ERROR")
			if !strings.Contains(s, "✗ error: reading batchsandboxes") {
				t.Fatalf("the error is not in the body:\n%s", s)
			}
			keys(tm, "q", ":", "messages", "enter")
			s = screenContains(t, tm, app, "Messages")
			if !strings.Contains(s, "END-OF-ERROR") {
				t.Fatalf(":messages lacks the error:\n%s", s)
			}
		})
	}
}

// A message leaves on the next action (:foo's error survived three
// commands); :messages keeps it.
func TestStaleMessageLeavesOnTheNextAction(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, ":", "foo", "enter")
	screenContains(t, tm, app, `unknown command "foo"`)
	keys(tm, "j")
	waitScreen(t, tm, app, "the message gone", func(s string) bool { return !strings.Contains(s, `unknown command "foo"`) })
	keys(tm, ":", "messages", "enter")
	screenContains(t, tm, app, `unknown command "foo"`)
}

// Typing "-l app=rl" keeps the filter in force until the selector parses:
// never "/-", and an invalid selector keeps the previous filter.
func TestInvalidSelectorKeepsThePreviousFilter(t *testing.T) {
	_, app, tm := incidentApp(t)
	keys(tm, "/", "-")
	s := screenContains(t, tm, app, "incomplete filter option")
	if !strings.Contains(s, "Sandboxes [4/4]  sort") {
		t.Fatalf("\"-\" became the filter:\n%s", s)
	}
	keys(tm, "l app!")
	s = screenContains(t, tm, app, "✗ label selector")
	if !strings.Contains(s, "Sandboxes [4/4]  /-l app  sort") {
		t.Fatalf("an invalid selector changed the filter:\n%s", s)
	}
	keys(tm, "=rl", "enter")
	screenContains(t, tm, app, "Sandboxes [2/4]  /-l app!=rl")

	keys(tm, "esc", "/", "sbx-a", "enter")
	screenContains(t, tm, app, "Sandboxes [1/4]  /sbx-a  sort")
	keys(tm, "/", " -")
	s = screenContains(t, tm, app, "incomplete filter option")
	if !strings.Contains(s, "Sandboxes [1/4]  /sbx-a  sort") {
		t.Fatalf("a trailing \" -\" changed the filter:\n%s", s)
	}
}

// createFailure is a create's error as actions/create returns it: coded,
// and created (or not).
type createFailure struct {
	code    string
	created bool
}

func (e createFailure) Error() string     { return e.code + ": main container exited: exit code 1" }
func (e createFailure) ErrorCode() string { return e.code }
func (e createFailure) Created() bool     { return e.created }

// A create that got as far as an object failed; only one that created
// nothing was refused.
func TestCreateFailureAfterCreatingIsNotARefusal(t *testing.T) {
	if got := errText(createFailure{"MAIN_CONTAINER_EXITED", true}); !strings.HasPrefix(got, "failed: MAIN_CONTAINER_EXITED") {
		t.Errorf("after creating: %q", got)
	}
	if got := errText(createFailure{"IMAGE_CONFIG_UNREADABLE", false}); !strings.HasPrefix(got, "refused: IMAGE_CONFIG_UNREADABLE") {
		t.Errorf("before creating: %q", got)
	}
}

// A view's title says what its stream does: "following" only while lines
// may still come (it read "(error (below))  following" after a failed
// read), the error "below" without nested brackets, and the command of an
// exec view as a shell would read it back.
func TestViewTitlesSayWhatTheStreamDoes(t *testing.T) {
	be := Backend{
		Logs: func(context.Context, *model.Sandbox, LogOptions, io.Writer) error { return errLong },
		Exec: func(_ context.Context, _ *model.Sandbox, _ []string, w io.Writer) (int, error) {
			_, err := io.WriteString(w, "out\n")
			return 7, err
		},
	}
	src := &fakeSource{snap: incidentSnapshot()}
	app, tm := newTestAppSized(t, src, be, Options{}, 120, 24)
	screenContains(t, tm, app, "Sandboxes [4/4]")
	keys(tm, "l")
	s := screenContains(t, tm, app, "END-OF-ERROR")
	if !strings.Contains(s, "(error below)") || strings.Contains(s, "following") {
		t.Fatalf("a failed log's title:\n%s", s)
	}
	keys(tm, "q", "x", "sh -c 'exit 7'", "enter")
	s = screenContains(t, tm, app, "out")
	if !strings.Contains(s, "sh -c 'exit 7'") {
		t.Fatalf("the exec view's title lost the quoting:\n%s", s)
	}
}

func TestShellQuote(t *testing.T) {
	for argv, want := range map[string]string{
		"sh\x00-c\x00exit 7": `sh -c 'exit 7'`, "ls\x00-la\x00/tmp": "ls -la /tmp", "echo\x00it's": `echo 'it'\''s'`, "printf\x00": `printf ''`,
	} {
		if got := shellQuote(strings.Split(argv, "\x00")); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", argv, got, want)
		}
	}
}
