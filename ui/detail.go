package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/forensics"
)

// detailView shows everything known about one sandbox. It follows the live
// snapshot by Key, so the identity verdict updates while it is open.
type detailView struct {
	vid     int
	gen     int
	key     string
	ctx     string // the context it was read from ("" with one)
	last    *model.Sandbox
	gone    bool // the sandbox left the fleet while the view was open
	events  []string
	evState string
	// forensics explains the linked Pods' restarts: the Backend's Restarts,
	// read once when the view opens, as the sweep reads them.
	forensics []model.Notice
	// recreated is POD_RECREATED with what the SuccessfulCreate Events add.
	recreated []model.Notice
	vp        viewport.Model
	cancel    context.CancelFunc
}

func newDetailView(c *shared, sb pick) *detailView {
	return &detailView{vid: c.newID(), key: sb.sb.Key, ctx: sb.ctx, last: sb.sb, vp: viewport.New(80, 20), evState: "not available"}
}

func (v *detailView) id() int { return v.vid }
func (v *detailView) name() string {
	return "Detail " + pick{v.last, v.ctx}.label()
}

func (v *detailView) close() {
	if v.cancel != nil {
		v.cancel()
	}
}

func (v *detailView) selectedSandbox(c *shared) pick { return pick{v.last, v.ctx} }

// choose implements chooser: Enter on a sandbox's detail is that detail.
func (v *detailView) choose(a *App) tea.Cmd { return nil }

func (v *detailView) start(c *shared) tea.Cmd {
	be := c.backendFor(v.ctx)
	if be.Events == nil && be.Restarts == nil {
		return nil
	}
	v.gen++
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	v.cancel = cancel
	id, gen, sb := v.vid, v.gen, v.last
	var cmds []tea.Cmd
	if f := be.Events; f != nil {
		v.evState = "loading…"
		cmds = append(cmds, func() tea.Msg {
			ev, err := f(ctx, sb)
			return asyncMsg{id, gen, eventsReply{ev, err}}
		})
	}
	if f := be.Restarts; f != nil && needsForensics(sb) {
		cmds = append(cmds, func() tea.Msg {
			notices, err := f(ctx, sb)
			return asyncMsg{id, gen, restartsReply{notices, err}}
		})
	}
	return tea.Batch(cmds...)
}

// needsForensics: one of sb's Pods restarted or was killed.
func needsForensics(sb *model.Sandbox) bool {
	for i := range sb.Slots {
		if p := sb.Slots[i].Pod; p != nil && forensics.Needed(p) {
			return true
		}
	}
	return false
}

// restartsReply is the Backend's Restarts answer.
type restartsReply struct {
	notices []model.Notice
	err     error
}

// onAsync implements replier: replies of an older read are dropped.
func (v *detailView) onAsync(msg asyncMsg, c *shared) tea.Cmd {
	if msg.gen == v.gen {
		v.onReply(msg.body, c)
	}
	return nil
}

func (v *detailView) onReply(body any, c *shared) {
	if r, ok := body.(restartsReply); ok {
		// A failed read leaves the section out; the Events line says why
		// reads fail.
		if r.err == nil {
			v.forensics = r.notices
			v.refresh(c)
		}
		return
	}
	if r, ok := body.(eventsReply); ok {
		if r.err != nil {
			v.evState = "error: " + errText(r.err)
			return
		}
		v.evState = ""
		v.events = formatEvents(r.events, c)
		// The controller's SuccessfulCreate Events (among the sandbox's):
		// a Pod name created twice is an observed same-name re-creation.
		v.recreated = nil
		if rec, changed := forensics.RecreatedFromEvents(v.last, r.events); changed {
			v.recreated = rec
		}
		v.refresh(c)
	}
}

func (v *detailView) snapshotChanged(c *shared) {
	if snap := c.snapOf(v.ctx); snap != nil {
		sb := snap.Sandbox(v.key)
		v.gone = sb == nil && snap.NumSandboxes() > 0
		if sb != nil {
			v.last = sb
		}
	}
	v.refresh(c)
}

func (v *detailView) refresh(c *shared) {
	off := v.vp.YOffset
	lines := detailLines(c, v.last, c.snapOf(v.ctx), v.events, v.evState, v.forensics, v.recreated)
	if v.gone {
		lines = append([]string{"GONE: this sandbox is no longer in the fleet; showing its last known state", ""}, lines...)
	}
	text := textsafe.Text(strings.Join(lines, "\n"))
	if v.vp.Width > 0 {
		// Long notices wrap instead of running off the screen.
		text = hangingWrap(text, v.vp.Width)
	}
	v.vp.SetContent(text)
	v.vp.SetYOffset(off)
}

func (v *detailView) update(msg tea.Msg, c *shared) tea.Cmd {
	if km, ok := msg.(tea.KeyMsg); ok {
		scrollViewport(&v.vp, km, c.keys)
		return nil
	}
	var cmd tea.Cmd
	v.vp, cmd = v.vp.Update(msg)
	return cmd
}

func (v *detailView) render(c *shared, width, height int) string {
	if v.vp.Width != width || v.vp.Height != height {
		v.vp.Width, v.vp.Height = width, height
		v.refresh(c)
	}
	return v.vp.View()
}

func (v *detailView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	return []key.Binding{k.YAML, k.Logs, k.Events, k.Shell, k.Back, k.Help, k.Quit}
}

func (v *detailView) fullHelp(c *shared) [][]key.Binding {
	k := c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown}, {k.YAML, k.Logs, k.Previous, k.Events}, {k.Shell, k.Exec, k.Delete}, {k.Back, k.Help, k.Quit}}
}

// detailLines renders the identity evidence line by line: what the engine
// records, what the Pod says, who holds the address now, and its history.
func detailLines(c *shared, sb *model.Sandbox, snap *fleet.Snapshot, events []string, evState string, forensics, recreated []model.Notice) []string {
	now := c.now()
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	when := func(t time.Time) string {
		return fmt.Sprintf("%s (%s ago)", t.Format("2006-01-02 15:04:05"), age(now, t))
	}

	add("Sandbox     %s/%s  (%s)  uid %s", sb.Namespace(), sb.Name(), sb.Engine(), textsafe.OrDash(string(sb.UID())))
	add("State       %s  (engine phase: %s)", sb.State, textsafe.OrDash(sb.EnginePhase))
	disc := discOf(snap)
	if disc {
		add("            identity UNKNOWN: disconnected since %s; data as of %s", clock(*snap.Status.DisconnectedSince), clock(snap.Status.AsOf))
	}
	add("Created     %s", when(sb.CreatedAt()))
	if since := sb.DeletingSince(); since != nil {
		add("Deleting    since %s  finalizers: %s", when(*since), textsafe.OrDash(strings.Join(sb.Finalizers(), ",")))
	}
	if sb.Pool != "" {
		add("Pool        %s", sb.Pool)
	}
	if claim := sb.Claim(); claim != "" {
		add("Claim       %s", claim)
	}
	if lt := sb.LaunchType(); lt != "" {
		add("Launch      %s", lt)
	}
	if sb.ExpireTime != nil {
		add("Expires     %s", sb.ExpireTime.Format("2006-01-02 15:04:05"))
	}
	add("Restarts    %d", sb.Restarts)
	if labels := sb.Labels(); labels.Len() > 0 {
		add("Labels      %s", labels)
	}
	add("")
	add("IDENTITY    %s", identityCell(sb, disc))
	if len(sb.Slots) == 0 {
		add("  no address recorded yet")
	}
	for i := range sb.Slots {
		sl := &sb.Slots[i]
		add("  slot %d", sl.Index)
		add("    recorded IP     %s   (the address the engine forwards to)", textsafe.OrDash(sl.RecordedIP))
		add("    identity        %s", sl.Identity)
		add("    linked Pod      %s", textsafe.OrDash(sl.PodName))
		add("    bound UID       %s", textsafe.OrDash(sl.BoundUID))
		if p := sl.Pod; p != nil {
			add("    Pod now         uid %s  ip %s  phase %s  node %s", p.UID, textsafe.OrDash(p.Status.PodIP), p.Status.Phase, textsafe.OrDash(p.Spec.NodeName))
			// deletionTimestamp is the end of the grace period, not the request.
			if requested, graceEnds, exact, ok := p.DeletionTimes(); ok && exact {
				add("    Pod deleting    requested ~%s, grace ends %s", when(requested), graceEnds.Format("2006-01-02 15:04:05"))
			} else if ok {
				add("    Pod deleting    grace ends %s", graceEnds.Format("2006-01-02 15:04:05"))
			}
		} else if sl.PodName != "" {
			add("    Pod now         gone")
		}
		if h := sl.Holder; h != nil {
			sbx := ""
			if h.Sandbox != "" {
				sbx = "  sandbox " + h.Sandbox
			}
			since := h.SinceText("15:04:05")
			if since == "" {
				since = "since: unknown"
			}
			add("    IP held by      %s/%s  uid %s%s  %s", h.Namespace, h.Pod, h.UID, sbx, since)
		}
		if st := sl.Stuck; st != nil {
			init := ""
			if st.PodInitializing {
				init = "; main container still PodInitializing"
			}
			requested := st.DeletingSince.Add(-time.Duration(st.GraceSeconds) * time.Second)
			add("    STUCK           Terminating: deletion requested ~%s, its grace period (%ds) ended %s%s",
				when(requested), st.GraceSeconds, st.DeletingSince.Format("2006-01-02 15:04:05"), init)
		}
		if sl.RecordedIP != "" && snap != nil {
			hist := snap.IPHistory(sl.RecordedIP)
			add("    IP history of %s:", sl.RecordedIP)
			if len(hist) == 0 {
				add("      (none seen)")
			}
			for _, h := range hist {
				to := "now"
				if h.To != nil {
					to = clock(*h.To)
				}
				sbx := ""
				if h.Sandbox != "" {
					sbx = "  sandbox " + h.Sandbox
				}
				add("      %s → %-8s %s/%s  uid %s%s", clock(h.From), to, h.Namespace, h.Pod, h.UID, sbx)
			}
		}
	}
	addNotices := func(notices []model.Notice) {
		for _, n := range notices {
			add("  %-7s %s  %s", strings.ToUpper(string(n.Severity)), n.Code, n.Message)
			for _, e := range n.Evidence {
				at := ""
				if e.At != nil {
					at = " @" + clock(*e.At)
				}
				add("          %s%s: %s", e.Kind, at, e.Text)
			}
		}
	}
	add("")
	add("NOTICES")
	if len(sb.Notices) == 0 {
		add("  none")
	}
	addNotices(sb.Notices)
	if len(forensics) > 0 {
		add("")
		add("RESTART FORENSICS  (from this Pod's status and Events; node conditions and siblings: sandscope sweep)")
		addNotices(forensics)
	}
	if len(recreated) > 0 {
		add("")
		add("RE-CREATION  (from the controller's SuccessfulCreate Events)")
		addNotices(recreated)
	}
	add("")
	add("CONTAINERS")
	any := false
	for i := range sb.Slots {
		p := sb.Slots[i].Pod
		if p == nil {
			continue
		}
		for _, cs := range append(append([]model.ContainerStatus{}, p.Status.InitContainerStatuses()...), p.Status.ContainerStatuses...) {
			any = true
			add("  %s/%s  %s  ready=%v  restarts %d", p.Name, cs.Name, containerState(cs.State), cs.Ready, cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil {
				add("      last termination: %s exit %d  %s → %s %s", t.Reason, t.ExitCode, clock(t.StartedAt.Time), clock(t.FinishedAt.Time), strings.TrimSpace(t.Message))
			}
		}
	}
	if !any {
		add("  no linked Pod")
	}
	add("")
	add("EVENTS")
	if evState != "" {
		add("  %s", evState)
	}
	for _, e := range events {
		add("  %s", e)
	}
	return out
}

// coded is implemented by the actions' errors (READ_ONLY, IP_TAKEN, ...).
type coded interface{ ErrorCode() string }

// mayHaveRun is an action error that knows whether its command may have
// started (a refusal.Error): when it may have, the error is no refusal.
type mayHaveRun interface{ MayHaveRun() bool }

// errText phrases an error for the footer, leading with its code: a
// refusal when nothing ran, else a failure whose outcome is unknown (a
// shell whose connection broke, a command cut off).
func errText(err error) string {
	var c coded
	if errors.As(err, &c) && c.ErrorCode() != "" {
		verb := "refused"
		var created interface{ Created() bool }
		switch m, ok := c.(mayHaveRun); {
		case ok && m.MayHaveRun():
			verb = "failed, may have run"
		case errors.As(err, &created) && created.Created():
			verb = "failed" // something was created: not a refusal
		}
		msg := err.Error()
		if !strings.Contains(msg, c.ErrorCode()) {
			return verb + " (" + c.ErrorCode() + "): " + msg
		}
		return verb + ": " + msg
	}
	return err.Error()
}

func errorsIsCanceled(err error) bool {
	return errors.Is(err, context.Canceled)
}

// scrollViewport moves vp for the movement keys of the key map and reports
// whether km was one of them. Every scrolling view shares it, so remapped
// keys behave the same everywhere.
func scrollViewport(vp *viewport.Model, km tea.KeyMsg, k KeyMap) bool {
	switch {
	case key.Matches(km, k.Up):
		vp.ScrollUp(1)
	case key.Matches(km, k.Down):
		vp.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		vp.PageUp()
	case key.Matches(km, k.PageDown):
		vp.PageDown()
	case key.Matches(km, k.Top):
		vp.GotoTop()
	case key.Matches(km, k.Bottom):
		vp.GotoBottom()
	default:
		return false
	}
	return true
}

// hangingWrap wraps each line of s that is wider than width at its spaces
// only, so that a timestamp, a UUID or a Pod name stays whole wherever it
// fits (a hyphen is no place to break an id), and continues it under the
// line's own indent plus two, so a wrapped notice still reads as one. The
// spaces between words stay as they were (columns inside a line keep
// their alignment) but where a line breaks. A word wider than the room
// left is cut where it must be.
func hangingWrap(s string, width int) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, line := range lines {
		if width <= 0 || ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		body := strings.TrimLeft(line, " ")
		lead := len(line) - len(body)
		hang := strings.Repeat(" ", min(lead+2, width/2))
		indent := min(lead, width/2) // an indent as wide as the screen leaves no room
		var cur strings.Builder
		cur.WriteString(line[:indent])
		curW, started := indent, false
		emit := func() {
			out = append(out, strings.TrimRight(cur.String(), " "))
			cur.Reset()
			cur.WriteString(hang)
			curW, started = len(hang), false
		}
		for body != "" {
			word, rest, _ := strings.Cut(body, " ")
			gap := len(rest) - len(strings.TrimLeft(rest, " ")) + 1 // the spaces after word, as written
			if rest == "" && !strings.HasSuffix(body, " ") {
				gap = 0
			}
			body = strings.TrimLeft(rest, " ")
			w := ansi.StringWidth(word)
			if started && curW+w > width {
				emit()
			}
			for curW+w > width && !started { // wider than a whole line: cut it
				part := ansi.Truncate(word, width-curW, "")
				pw := ansi.StringWidth(part)
				if pw == 0 {
					break // one character wider than the room: let it overflow
				}
				cur.WriteString(part)
				word, w = ansi.TruncateLeft(word, pw, ""), w-pw
				emit()
			}
			cur.WriteString(word)
			curW, started = curW+w, true
			if body != "" && curW+gap < width {
				cur.WriteString(strings.Repeat(" ", gap))
				curW += gap
			} else if body != "" {
				emit() // the break falls in the gap
			}
		}
		if started {
			out = append(out, strings.TrimRight(cur.String(), " "))
		}
	}
	return strings.Join(out, "\n")
}
