package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/mattn/go-runewidth"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model/forensics"
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
	target   pick // the sandbox it is about (none for messages and help)
	previous bool
	vp       viewport.Model
	lines    []string
	size     int // bytes in lines
	follow   bool
	status   string // loading / stream ended / error
	cancel   context.CancelFunc
	ch       chan []string // open log/exec stream

	wrap       bool   // long lines wrap instead of being cut at the edge
	timestamps bool   // logs: the kubelet's timestamp on each line
	container  string // logs: the container read ("" = the main one)
	since      int    // logs: the window, an index into sinceWindows
	search     string // "/" in the view: the text looked for ("" = none)
	matches    []int  // indices of the lines holding search
	match      int    // the current one, an index into matches
	rowOf      []int  // first row of each line in the viewport's content
}

func newTextView(c *shared, kind textKind, title string, target pick) *textView {
	return &textView{vid: c.newID(), kind: kind, title: title, target: target, follow: true, status: "loading…", vp: viewport.New(80, 20)}
}

func (v *textView) id() int                   { return v.vid }
func (v *textView) snapshotChanged(c *shared) {}

// selectedSandbox implements selecter: the sandbox whose text this is (none
// for the messages), which d, y, l, e and s act on.
func (v *textView) selectedSandbox(c *shared) pick { return v.target }

func (v *textView) name() string {
	s := v.title
	if v.status != "" {
		s += "  (" + v.status + ")"
	}
	if v.search != "" {
		if len(v.matches) == 0 {
			s += "  /" + textsafe.Line(v.search) + ": no match"
		} else {
			s += fmt.Sprintf("  /%s: %d/%d", textsafe.Line(v.search), v.match+1, len(v.matches))
		}
	}
	if v.wrap {
		s += "  wrap"
	}
	if v.timestamps {
		s += "  timestamps"
	}
	if v.kind == kindLogs {
		if v.container != "" {
			s += "  container " + textsafe.Line(v.container)
		}
		if v.since != 0 {
			s += "  " + sinceWindows[v.since].name
		}
		switch {
		case !v.follow:
			s += "  paused"
		case v.live():
			s += "  following"
		}
	}
	return s
}

// live: the view's stream may still bring lines (it has not ended nor
// failed): only then does "following" say something.
func (v *textView) live() bool { return v.status == "" || v.status == "loading…" }

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
	// A new read (another container, window or the previous logs) must not
	// show the last read's lines under its title while it loads.
	v.setLines(nil)
	ctx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	id, gen, sb, be := v.vid, v.gen, v.target.sb, c.backendFor(v.target.ctx)
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
		opts := LogOptions{Previous: v.previous, Timestamps: v.timestamps, Container: v.container, Since: sinceWindows[v.since].d}
		run := func() tea.Msg {
			err := be.Logs(ctx, sb, opts, w)
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
	id, gen, sb, be := v.vid, v.gen, v.target.sb, c.backendFor(v.target.ctx)
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

// onAsync implements replier: replies of an older stream are dropped.
func (v *textView) onAsync(msg asyncMsg, c *shared) tea.Cmd {
	if msg.gen != v.gen {
		return nil
	}
	return v.onReply(msg.body, c)
}

// ownKey implements keyOwner: in the log view the digits pick its window
// of time, as in k9s, not a favorite (no App binding is a digit).
func (v *textView) ownKey(msg tea.KeyMsg, a *App) (tea.Cmd, bool) {
	if r := msg.Runes; v.kind == kindLogs && msg.Type == tea.KeyRunes && len(r) == 1 && r[0] >= '0' && r[0] <= '9' && !msg.Alt {
		return v.update(msg, a.c), true
	}
	return nil, false
}

func (v *textView) onReply(body any, c *shared) tea.Cmd {
	switch r := body.(type) {
	case textReply:
		if r.err != nil {
			v.showError(r.err, c)
			return nil
		}
		v.status = ""
		v.setLines(strings.Split(strings.TrimRight(textsafe.Text(r.text), "\n"), "\n"))
	case eventsReply:
		if r.err != nil {
			v.showError(r.err, c)
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
			v.showError(r.err, c)
		case v.kind == kindExec:
			v.status = "exit 0"
		default:
			v.status = "ended"
		}
	}
	return nil
}

// sinceWindows are the log view's 0-6 keys, as k9s's.
var sinceWindows = []struct {
	name string
	d    time.Duration
}{{"tail", 0}, {"head: the whole log", -1}, {"last 1m", time.Minute}, {"last 5m", 5 * time.Minute},
	{"last 15m", 15 * time.Minute}, {"last 30m", 30 * time.Minute}, {"last 1h", time.Hour}}

// containerNames are the containers of target's first Pod, its init
// containers first (the order they run in).
func containerNames(target pick) []string {
	sl := target.sb.PrimarySlot()
	if sl == nil || sl.Pod == nil {
		return nil
	}
	var names []string
	for _, s := range sl.Pod.Status.InitContainerStatuses() {
		names = append(names, s.Name)
	}
	for _, c := range sl.Pod.Spec.Containers {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
}

// mainName is the name of target's main container ("" unknown).
func mainName(target pick) string {
	if sl := target.sb.PrimarySlot(); sl != nil && sl.Pod != nil {
		if m, _ := sl.Pod.Main(); m != nil {
			return m.Name
		}
	}
	return ""
}

// showError shows why the view's fetch or stream failed in its body,
// whole and wrapped (the title has room for a word, the footer for a
// line), after whatever it read before, and logs it for :messages.
func (v *textView) showError(err error, c *shared) {
	v.status = "error below"
	c.logError(err)
	width := max(v.vp.Width, 40)
	lines := slices.Clone(v.lines)
	if len(lines) > 0 {
		lines = append(lines, "")
	}
	lines = append(lines, strings.Split(ansi.Wrap("✗ error: "+textsafe.Line(errText(err)), width, " "), "\n")...)
	var ev evidenced
	if errors.As(err, &ev) {
		for _, e := range ev.EvidenceLines() {
			lines = append(lines, strings.Split(ansi.Wrap("  "+textsafe.Line(e), width, " "), "\n")...)
		}
	}
	v.setLines(lines)
}

func (v *textView) setLines(lines []string) {
	v.lines = lines
	v.findMatches()
	v.layout()
	if v.follow && (v.kind == kindLogs || v.kind == kindExec) {
		v.vp.GotoBottom()
	}
}

// layout gives the viewport the lines as they are drawn: matches of the
// search highlighted (after the lines were made safe: the highlight is the
// only styling in them), wrapped at the view's width when wrap is on.
func (v *textView) layout() {
	var shown []string
	if v.kind == kindYAML {
		shown = newYAMLStyles(lipgloss.DefaultRenderer()).styleYAML(v.lines)
	} else {
		shown = make([]string, len(v.lines))
		copy(shown, v.lines)
	}
	for i, li := range v.matches {
		shown[li] = highlight(v.lines[li], v.search, i == v.match)
	}
	v.rowOf = v.rowOf[:0]
	row := 0
	if v.wrap && v.vp.Width > 0 {
		for i, l := range shown {
			v.rowOf = append(v.rowOf, row)
			if len(l) <= v.vp.Width { // no wider in cells than in bytes: fits
				row++
				continue
			}
			shown[i] = ansi.Wrap(l, v.vp.Width, "")
			row += strings.Count(shown[i], "\n") + 1
		}
	} else {
		for range shown {
			v.rowOf = append(v.rowOf, row)
			row++
		}
	}
	v.vp.SetContent(strings.Join(shown, "\n"))
}

var (
	matchStyle   = lipgloss.NewStyle().Underline(true)
	currentMatch = lipgloss.NewStyle().Reverse(true)
)

// highlight marks every occurrence of q in line (the current match line
// in reverse video). Case is ignored unless q has an upper-case letter.
func highlight(line, q string, current bool) string {
	st := matchStyle
	if current {
		st = currentMatch
	}
	var b strings.Builder
	rest := line
	for {
		i, n := indexSearch(rest, q)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		b.WriteString(st.Render(rest[i : i+n]))
		rest = rest[i+n:]
	}
}

// indexSearch finds q in s: the byte offset and length of the first
// occurrence, or -1. Smart case, as less and vim: all lower case ignores
// case.
func indexSearch(s, q string) (int, int) {
	if q == "" {
		return -1, 0
	}
	if strings.ToLower(q) != q {
		return strings.Index(s, q), len(q)
	}
	lower := strings.ToLower(s)
	if len(lower) != len(s) { // a rune whose lower case has another length: offsets would not match
		return strings.Index(s, q), len(q)
	}
	return strings.Index(lower, q), len(q)
}

func (v *textView) findMatches() {
	v.matches = v.matches[:0]
	if v.search == "" {
		v.match = 0
		return
	}
	for i, l := range v.lines {
		if at, _ := indexSearch(l, v.search); at >= 0 {
			v.matches = append(v.matches, i)
		}
	}
	v.match = min(v.match, max(len(v.matches)-1, 0))
}

// setSearch looks for q in the view and shows the first match at or below
// the top of the screen.
func (v *textView) setSearch(q string) {
	v.search = q
	v.match = 0
	v.findMatches()
	for i, li := range v.matches {
		if li < len(v.rowOf) && v.rowOf[li] >= v.vp.YOffset {
			v.match = i
			break
		}
	}
	v.layout()
	v.showMatch()
}

func (v *textView) searchText() string { return v.search }

// showMatch scrolls the current match into view (and stops following, so
// new lines do not take it away).
func (v *textView) showMatch() {
	if len(v.matches) == 0 {
		return
	}
	li := v.matches[v.match]
	if li >= len(v.rowOf) {
		return
	}
	row := v.rowOf[li]
	if row < v.vp.YOffset || row >= v.vp.YOffset+v.vp.Height {
		v.vp.SetYOffset(max(row-v.vp.Height/2, 0))
	}
	if v.kind == kindLogs {
		v.follow = false
	}
}

func (v *textView) update(msg tea.Msg, c *shared) tea.Cmd {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		var cmd tea.Cmd
		v.vp, cmd = v.vp.Update(msg) // mouse wheel
		return cmd
	}
	k := c.keys
	switch {
	case key.Matches(km, k.Follow) && v.kind == kindLogs:
		v.follow = !v.follow
		if v.follow {
			v.vp.GotoBottom()
		}
		return nil
	case key.Matches(km, k.Wrap):
		v.wrap = !v.wrap
		v.layout()
		if v.follow && (v.kind == kindLogs || v.kind == kindExec) {
			v.vp.GotoBottom()
		} else {
			v.showMatch()
		}
		return nil
	case v.kind == kindLogs && len(km.Runes) == 1 && km.Runes[0] >= '0' && int(km.Runes[0]-'0') < len(sinceWindows) && !km.Alt:
		// k9s's windows: 0 the tail, 1 the whole log, 2-6 the last 1m-1h.
		v.since = int(km.Runes[0] - '0')
		return v.start(c)
	case key.Matches(km, k.Container) && v.kind == kindLogs:
		names := containerNames(v.target)
		if len(names) == 0 {
			return nil
		}
		i := slices.Index(names, v.container)
		if v.container == "" {
			i = slices.Index(names, mainName(v.target))
		}
		v.container = names[(i+1)%len(names)]
		return v.start(c)
	case key.Matches(km, k.Timestamps) && v.kind == kindLogs && c.backendFor(v.target.ctx).Logs != nil:
		// The kubelet adds them: the log is read again, with them or without.
		v.timestamps = !v.timestamps
		return v.start(c)
	case key.Matches(km, k.NextMatch) && len(v.matches) > 0:
		v.match = (v.match + 1) % len(v.matches)
		v.layout()
		v.showMatch()
		return nil
	case key.Matches(km, k.PrevMatch) && len(v.matches) > 0:
		v.match = (v.match - 1 + len(v.matches)) % len(v.matches)
		v.layout()
		v.showMatch()
		return nil
	case key.Matches(km, k.Save):
		return v.save(c)
	}
	if !scrollViewport(&v.vp, km, k) {
		return nil
	}
	if v.kind == kindLogs {
		v.follow = v.vp.AtBottom()
	}
	return nil
}

func (v *textView) render(c *shared, width, height int) string {
	if v.vp.Width != width || v.vp.Height != height {
		v.vp.Width, v.vp.Height = width, height
		v.layout()
		if v.follow && v.kind == kindLogs {
			v.vp.GotoBottom()
		}
	}
	return v.vp.View()
}

// save writes the view's lines (as shown, without highlighting) to a file
// named after the sandbox and the time, and says where.
func (v *textView) save(c *shared) tea.Cmd {
	dir := c.opts.SaveDir
	if dir == "" {
		if st := os.Getenv("XDG_STATE_HOME"); st != "" {
			dir = filepath.Join(st, "sandscope")
		} else {
			dir = "."
		}
	}
	what := map[textKind]string{kindYAML: "yaml", kindLogs: "logs", kindEvents: "events", kindExec: "exec", kindMessages: "messages"}[v.kind]
	if v.previous {
		what = "previous-logs"
	}
	name := "sandscope"
	if sb := v.target.sb; sb != nil {
		name = sb.Namespace() + "_" + sb.Name()
	}
	base := filepath.Join(dir, fileSafe(name)+"_"+what+"_"+c.now().UTC().Format("20060102T150405Z"))
	data := []byte(strings.Join(v.lines, "\n") + "\n")
	n := len(v.lines)
	return func() tea.Msg {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return actionDone{err: fmt.Errorf("save: %w", err)}
		}
		f, path, err := createNew(base, ".txt")
		if err != nil {
			return actionDone{err: fmt.Errorf("save: %w", err)}
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return actionDone{err: fmt.Errorf("save %s: %w", path, err)}
		}
		return actionDone{text: fmt.Sprintf("saved %d lines to %s", n, path)}
	}
}

// createNew creates base+ext, or base-2+ext, base-3+ext, ... when that is
// taken (a second save in the same second): never a file that is already
// there (O_EXCL), and never a refusal for a name of its own choosing.
func createNew(base, ext string) (*os.File, string, error) {
	for i := 1; ; i++ {
		path := base + ext
		if i > 1 {
			path = base + "-" + strconv.Itoa(i) + ext
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !errors.Is(err, fs.ErrExist) || i == 100 {
			return f, path, err
		}
	}
}

// fileSafe keeps letters, digits, '.', '-' and '_' of s; anything else
// becomes '_', so a name can never leave the directory or hide.
func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
	return strings.TrimLeft(s, ".")
}

func (v *textView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	if v.kind == kindLogs {
		return []key.Binding{k.Follow, k.Wrap, k.Timestamps, searchKey(k), k.Save, k.PageUp, k.PageDown, k.Back, k.Quit}
	}
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Wrap, searchKey(k), k.Save, k.Back, k.Quit}
}

func (v *textView) fullHelp(c *shared) [][]key.Binding {
	k := c.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{searchKey(k), k.NextMatch, k.PrevMatch, k.Wrap, k.Timestamps, k.Save},
		{k.Follow, k.Container, sinceBinding, k.Back, k.Help, k.Quit},
	}
}

// sinceBinding is the log view's 0-6, for help (read before any binding).
var sinceBinding = key.NewBinding(key.WithKeys("0", "1", "2", "3", "4", "5", "6"),
	key.WithHelp("0-6", "logs: tail, whole, last 1m/5m/15m/30m/1h"))

// searchKey is the filter key as a text view uses it: to search.
func searchKey(k KeyMap) key.Binding {
	b := k.Filter
	b.SetHelp(b.Help().Key, "search")
	return b
}

func formatEvents(evs []corev1.Event, c *shared) []string {
	if len(evs) == 0 {
		return []string{"no events"}
	}
	sort.SliceStable(evs, func(i, j int) bool { return forensics.EventLast(&evs[i]).Before(forensics.EventLast(&evs[j])) })
	now := c.now()
	// Each column as wide as its widest cell, so that an object named by a
	// UUID (batchsandbox/…, 49 cells) does not run into the message; a
	// cell past the column's cap is cut with a mark, as the tables cut.
	head := [...]string{"AGE", "TYPE", "REASON", "OBJECT"}
	caps := [...]int{6, 8, 32, 64}
	var widths [len(head)]int
	for i, h := range head {
		widths[i] = len(h)
	}
	cells := make([][len(head)]string, len(evs))
	msgs := make([]string, len(evs))
	for i := range evs {
		e := &evs[i]
		cells[i] = [...]string{age(now, forensics.EventLast(e)), e.Type, e.Reason,
			strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name}
		for k, cell := range cells[i] {
			widths[k] = max(widths[k], min(runewidth.StringWidth(textsafe.Line(cell)), caps[k]))
		}
		msgs[i] = strings.ReplaceAll(e.Message, "\n", " ")
		if e.Count > 1 {
			msgs[i] += fmt.Sprintf(" (x%d)", e.Count)
		}
	}
	line := func(cells [len(head)]string, msg string) string {
		var b strings.Builder
		for k, cell := range cells {
			b.WriteString(fitLine(cell, widths[k]))
			b.WriteByte(' ')
		}
		b.WriteString(textsafe.Line(msg))
		return b.String()
	}
	out := make([]string, 0, len(evs)+1)
	out = append(out, line(head, "MESSAGE"))
	for i := range evs {
		out = append(out, line(cells[i], msgs[i]))
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
