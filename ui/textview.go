package ui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
)

// A log or exec view keeps at most maxLogLines lines and maxViewBytes bytes;
// older lines scroll away. A line longer than maxLineBytes is cut, with a
// marker saying how much: the sandbox decides what it prints, and one line
// without a newline must not take the operator's memory.
const (
	maxLogLines  = 20000
	maxViewBytes = 8 << 20
	maxLineBytes = 16 << 10
)

type textKind int

const (
	kindYAML textKind = iota
	kindLogs
	kindEvents
	kindExec
	kindMessages // the footer's messages, kept whole (static)
)

// Reply bodies carried in asyncMsg.
type (
	textReply struct {
		text string
		err  error
	}
	eventsReply struct {
		events []corev1.Event
		err    error
	}
	linesReply struct {
		lines []string
		more  bool
	}
	streamEnd struct{ err error }
)

// textView shows text fetched on demand (YAML, events, exec output) or
// streamed (logs) in a scrollable viewport.
type textView struct {
	vid      int
	gen      int
	kind     textKind
	title    string
	sb       *model.Sandbox
	previous bool
	vp       viewport.Model
	lines    []string
	size     int // bytes in lines
	follow   bool
	status   string // loading / stream ended / error
	cancel   context.CancelFunc
	ch       chan []string // open log/exec stream
}

func newTextView(c *shared, kind textKind, title string, sb *model.Sandbox) *textView {
	return &textView{vid: c.newID(), kind: kind, title: title, sb: sb, follow: true, status: "loading…", vp: viewport.New(80, 20)}
}

func (v *textView) id() int                   { return v.vid }
func (v *textView) snapshotChanged(c *shared) {}

func (v *textView) name() string {
	s := v.title
	if v.status != "" {
		s += "  (" + v.status + ")"
	}
	if v.kind == kindLogs {
		if v.follow {
			s += "  following"
		} else {
			s += "  paused"
		}
	}
	return s
}

func (v *textView) close() {
	if v.cancel != nil {
		v.cancel()
		v.cancel = nil
	}
}

// start launches the fetch for this view (generation gen).
func (v *textView) start(c *shared) tea.Cmd {
	v.close()
	v.gen++
	v.lines, v.size, v.status = nil, 0, "loading…"
	ctx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	id, gen, sb, be := v.vid, v.gen, v.sb, c.be
	switch v.kind {
	case kindYAML:
		return func() tea.Msg {
			s, err := be.YAML(ctx, sb)
			return asyncMsg{id, gen, textReply{s, err}}
		}
	case kindEvents:
		return func() tea.Msg {
			ev, err := be.Events(ctx, sb)
			return asyncMsg{id, gen, eventsReply{ev, err}}
		}
	case kindLogs:
		ch := make(chan []string, 64)
		v.ch = ch
		w := &lineWriter{ctx: ctx, ch: ch}
		prev := v.previous
		run := func() tea.Msg {
			err := be.Logs(ctx, sb, prev, w)
			w.flush()
			close(ch)
			return asyncMsg{id, gen, streamEnd{err}}
		}
		return tea.Batch(run, waitLines(id, gen, ch))
	}
	return nil
}

// startExec runs one command and shows its output.
func (v *textView) startExec(c *shared, argv []string) tea.Cmd {
	v.close()
	v.gen++
	v.lines, v.size = nil, 0
	ctx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	id, gen, sb, be := v.vid, v.gen, v.sb, c.be
	ch := make(chan []string, 64)
	v.ch = ch
	w := &lineWriter{ctx: ctx, ch: ch}
	run := func() tea.Msg {
		code, err := be.Exec(ctx, sb, argv, w)
		w.flush()
		close(ch)
		if err == nil && code != 0 {
			err = fmt.Errorf("exit code %d", code)
		}
		return asyncMsg{id, gen, streamEnd{err}}
	}
	return tea.Batch(run, waitLines(id, gen, ch))
}

func waitLines(id, gen int, ch <-chan []string) tea.Cmd {
	return func() tea.Msg {
		batch, ok := <-ch
		if !ok {
			return nil
		}
		// Coalesce whatever else is queued into one message.
		for len(ch) > 0 {
			more, ok := <-ch
			if !ok {
				break
			}
			batch = append(batch, more...)
		}
		return asyncMsg{id, gen, linesReply{lines: batch, more: true}}
	}
}

func (v *textView) onReply(body any, c *shared) tea.Cmd {
	switch r := body.(type) {
	case textReply:
		if r.err != nil {
			v.status = "error: " + errText(r.err)
			return nil
		}
		v.status = ""
		v.setLines(strings.Split(strings.TrimRight(textsafe.Text(r.text), "\n"), "\n"))
	case eventsReply:
		if r.err != nil {
			v.status = "error: " + errText(r.err)
			return nil
		}
		v.status = ""
		v.setLines(formatEvents(r.events, c))
	case linesReply:
		// The end of the stream may arrive before its last lines; keep its verdict.
		if v.status == "loading…" {
			v.status = ""
		}
		v.lines = append(v.lines, r.lines...)
		for _, l := range r.lines {
			v.size += len(l)
		}
		drop := max(0, len(v.lines)-maxLogLines)
		for _, l := range v.lines[:drop] {
			v.size -= len(l)
		}
		for drop < len(v.lines)-1 && v.size > maxViewBytes {
			v.size -= len(v.lines[drop])
			drop++
		}
		if drop > 0 {
			v.lines = append([]string(nil), v.lines[drop:]...)
		}
		v.setLines(v.lines)
		return waitLines(v.vid, v.gen, v.ch)
	case streamEnd:
		switch {
		case r.err != nil && !errorsIsCanceled(r.err):
			v.status = "error: " + errText(r.err)
			c.logError(r.err)
		case v.kind == kindExec:
			v.status = "exit 0"
		default:
			v.status = "ended"
		}
	}
	return nil
}

func (v *textView) setLines(lines []string) {
	v.lines = lines
	v.vp.SetContent(strings.Join(lines, "\n"))
	if v.follow && (v.kind == kindLogs || v.kind == kindExec) {
		v.vp.GotoBottom()
	}
}

func (v *textView) update(msg tea.Msg, c *shared) tea.Cmd {
	if km, ok := msg.(tea.KeyMsg); ok && key.Matches(km, c.keys.Follow) && v.kind == kindLogs {
		v.follow = !v.follow
		if v.follow {
			v.vp.GotoBottom()
		}
		return nil
	}
	if km, ok := msg.(tea.KeyMsg); ok {
		if !scrollViewport(&v.vp, km, c.keys) {
			return nil
		}
		if v.kind == kindLogs {
			v.follow = v.vp.AtBottom()
		}
		return nil
	}
	var cmd tea.Cmd
	v.vp, cmd = v.vp.Update(msg) // mouse wheel
	return cmd
}

func (v *textView) render(c *shared, width, height int) string {
	if v.vp.Width != width || v.vp.Height != height {
		v.vp.Width, v.vp.Height = width, height
		v.vp.SetContent(strings.Join(v.lines, "\n"))
		if v.follow && v.kind == kindLogs {
			v.vp.GotoBottom()
		}
	}
	return v.vp.View()
}

func (v *textView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	if v.kind == kindLogs {
		return []key.Binding{k.Follow, k.PageUp, k.PageDown, k.Back, k.Quit}
	}
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Back, k.Quit}
}

func (v *textView) fullHelp(c *shared) [][]key.Binding {
	k := c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Follow, k.Back, k.Help, k.Quit}}
}

func formatEvents(evs []corev1.Event, c *shared) []string {
	if len(evs) == 0 {
		return []string{"no events"}
	}
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	now := c.now()
	out := make([]string, 0, len(evs)+1)
	out = append(out, fmt.Sprintf("%-6s %-8s %-22s %-28s %s", "AGE", "TYPE", "REASON", "OBJECT", "MESSAGE"))
	for _, e := range evs {
		obj := strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name
		msg := strings.ReplaceAll(e.Message, "\n", " ")
		if e.Count > 1 {
			msg += fmt.Sprintf(" (x%d)", e.Count)
		}
		out = append(out, textsafe.Line(fmt.Sprintf("%-6s %-8s %-22s %-28s %s", age(now, eventTime(e)), e.Type, e.Reason, obj, msg)))
	}
	return out
}

// lineWriter turns a byte stream into lines delivered on ch. Each byte is
// looked at once (only the new bytes are searched for a newline), and a
// line keeps at most maxLineBytes: the rest is counted, not kept.
type lineWriter struct {
	ctx     context.Context
	ch      chan<- []string
	mu      sync.Mutex
	partial []byte // the line so far, at most maxLineBytes
	cut     int    // bytes of it dropped past maxLineBytes
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	var lines []string
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		lines = append(lines, w.take())
		p = p[i+1:]
	}
	w.mu.Unlock()
	if len(lines) == 0 {
		return n, nil
	}
	select {
	case w.ch <- lines:
		return n, nil
	case <-w.ctx.Done():
		return 0, w.ctx.Err()
	}
}

// add appends b to the line, up to maxLineBytes.
func (w *lineWriter) add(b []byte) {
	if room := maxLineBytes - len(w.partial); len(b) > room {
		w.cut += len(b) - room
		b = b[:room]
	}
	w.partial = append(w.partial, b...)
}

// take ends the line: made safe to show, with the cut marked.
func (w *lineWriter) take() string {
	s := textsafe.Text(strings.TrimRight(string(w.partial), "\r"))
	if w.cut > 0 {
		s += fmt.Sprintf(" …[line cut: %d more bytes]", w.cut)
	}
	w.partial, w.cut = w.partial[:0], 0
	return s
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	var rest string
	if len(w.partial) > 0 || w.cut > 0 {
		rest = w.take()
	}
	w.mu.Unlock()
	if rest != "" {
		select {
		case w.ch <- []string{rest}:
		case <-w.ctx.Done():
		}
	}
}

var _ io.Writer = (*lineWriter)(nil)
