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
	s := screenContains(t, tm, app, "Sandboxes")
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
	s = screenContains(t, tm, app, "Messages")
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
