package ui

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sandscope/sandscope/model"
)

// o asks for a copy in cp's words; the sandbox's side is marked by a
// colon. The Backend gets the sandbox under the cursor and the request, and
// the outcome (or the refusal's code) reaches the footer and :messages.
func TestCopyKeyFlow(t *testing.T) {
	src := &fakeSource{snap: incidentSnapshot()}
	var mu sync.Mutex
	var asked []string
	refuse := false
	be := Backend{Copy: func(_ context.Context, sb *model.Sandbox, req CopyRequest) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, sb.Name()+" "+map[bool]string{true: "down", false: "up"}[req.Download]+" "+req.Remote+" "+req.Local)
		if refuse {
			return "", refusal{code: "IP_TAKEN", msg: "address is held by another pod"}
		}
		return "copied " + req.Remote + " → " + req.Local, nil
	}}
	app, tm := newTestAppSized(t, src, be, Options{}, 120, 30)
	screenContains(t, tm, app, "Sandboxes")
	sel := app.selected()

	keys(tm, "o")
	screenContains(t, tm, app, "(:/remote local | local :/remote)>")
	keys(tm, ":/work/out.txt ./out.txt", "enter")
	screenContains(t, tm, app, "copied /work/out.txt → ./out.txt")

	keys(tm, "o", "./in.txt :/work/in.txt", "enter")
	screenContains(t, tm, app, "copied /work/in.txt → ./in.txt")

	keys(tm, "o", "a b", "enter")
	screenContains(t, tm, app, "with a leading colon")
	keys(tm, "esc")

	mu.Lock()
	refuse = true
	mu.Unlock()
	keys(tm, "o", ":/x y", "enter")
	screenContains(t, tm, app, "IP_TAKEN")

	keys(tm, ":", "messages", "enter")
	s := screenContains(t, tm, app, "Messages")
	if !strings.Contains(s, "copied /work/out.txt") || !strings.Contains(s, "IP_TAKEN") {
		t.Errorf(":messages lacks the copies' outcomes:\n%s", s)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		sel.sb.Name() + " down /work/out.txt ./out.txt",
		sel.sb.Name() + " up /work/in.txt ./in.txt",
		sel.sb.Name() + " down /x y",
	}
	if strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Fatalf("the backend was asked %q, want %q", asked, want)
	}
}

// The copy prompt binds the sandbox the key was pressed on: one that went
// before Enter is refused, saying so, and nothing is copied.
func TestCopyPromptRefusedWhenItsTargetWent(t *testing.T) {
	log := &actionLog{}
	be := recordingBackend(log)
	be.Copy = func(_ context.Context, sb *model.Sandbox, req CopyRequest) (string, error) {
		log.add("copy " + sb.Name())
		return "copied", nil
	}
	src := &fakeSource{snap: lookalikes()}
	app, tm := newTestApp(t, src, be, Options{})
	keys(tm, "/", "code-runner-80e0", "enter")
	screenContains(t, tm, app, "Sandboxes [1/4]")
	keys(tm, "o")
	screenContains(t, tm, app, "copy fleet/code-runner-80e0aa11")
	src.set(lookalikes("code-runner-80e0aa11"))
	screenContains(t, tm, app, "Sandboxes [0/3]")
	keys(tm, ":/work/out ./out", "enter")
	screenContains(t, tm, app, "copy refused: fleet/code-runner-80e0aa11 is gone since you asked")
	if got := log.list(); len(got) != 0 {
		t.Fatalf("the backend acted on %v", got)
	}
}
