package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/sandscope/sandscope/model"
)

// View renders the frame: header, title, body (only the visible rows),
// footer. A frame the clock did not change is not rendered again.
func (a *App) View() string {
	w, h := a.width, a.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if a.frameOK {
		return a.frame
	}
	a.c.ageChange = time.Time{}
	header := a.headerLines(w)
	if h < 12 {
		header = header[:1] // tiny terminals keep the connection line only
	}
	title := a.c.st.title.Render(fitLine(a.breadcrumb(), w))
	footer := a.footerLines(w)
	bodyH := max(1, h-len(header)-1-len(footer))
	var body string
	if a.showHelp {
		help := a.fullHelpLines(w)
		a.helpOffset = min(a.helpOffset, max(len(help)-bodyH, 0))
		body = clipLines(strings.Join(help[a.helpOffset:], "\n"), w, bodyH)
	} else {
		body = a.top().render(a.c, w, bodyH)
	}
	lines := make([]string, 0, h)
	lines = append(lines, header...)
	lines = append(lines, title)
	lines = append(lines, padLines(body, bodyH)...)
	lines = append(lines, footer...)
	if len(lines) > h {
		lines = lines[:h]
	}
	a.frame, a.frameOK = strings.Join(lines, "\n"), true
	return a.frame
}

func (a *App) breadcrumb() string {
	names := make([]string, 0, len(a.stack))
	for _, v := range a.stack {
		n := v.name()
		if i := strings.Index(n, " ["); i > 0 && v != a.top() {
			n = n[:i]
		}
		names = append(names, n)
	}
	// The whole path: where "-" leads back to is part of where you are.
	return strings.Join(names, " › ")
}

// headerLines: connection and sync status, then counts per state, then notes.
func (a *App) headerLines(w int) []string {
	if a.c.multi() {
		return a.contextsHeader(w)
	}
	snap := a.c.snap
	st := snap.Status
	var b strings.Builder
	b.WriteString("sandscope")
	if st.Context != "" {
		fmt.Fprintf(&b, "  ctx:%s", st.Context)
	}
	if st.Cluster != "" && st.Cluster != st.Context {
		fmt.Fprintf(&b, "  cluster:%s", st.Cluster)
	}
	ns := "all"
	if a.c.nsScope != "" {
		ns = a.c.nsScope
	} else if len(st.Namespaces) > 0 {
		ns = strings.Join(st.Namespaces, ",")
	}
	fmt.Fprintf(&b, "  ns:%s", ns)
	var sync string
	switch {
	case st.DisconnectedSince != nil:
		sync = fmt.Sprintf("disconnected since %s · data as of %s", clock(*st.DisconnectedSince), clock(st.AsOf))
	case !st.Synced && model.SyncLine(st.Syncing) != "":
		// How far each list has come, and of how many: a slow server
		// is not a dead one.
		sync = "syncing: " + model.SyncLine(st.Syncing)
	case !st.Synced:
		sync = fmt.Sprintf("syncing… %d sandboxes so far", snap.Loading)
	case st.AsOf.IsZero():
		sync = "synced"
	default:
		sync = "synced · as of " + clock(st.AsOf)
	}
	line1 := b.String() + "  " + sync
	// Who and what, after the state: a narrow terminal cuts these first.
	if st.User != "" {
		line1 += "  user:" + st.User
	}
	if st.ServerVersion != "" {
		line1 += "  k8s " + st.ServerVersion
	}
	if v := a.c.opts.Version; v != "" {
		line1 += "  sandscope " + v
	}
	var notes []string
	for _, f := range st.Forbidden {
		notes = append(notes, "forbidden: "+f)
	}
	notes = append(notes, st.Notes...)
	return a.headerOf(w, line1, st.DisconnectedSince != nil, st.ReadOnly, st.Demo, notes)
}

// contextsHeader is the header with several contexts in view: each
// context's state on the first line, each one's notes prefixed with it.
func (a *App) contextsHeader(w int) []string {
	line1, trouble := a.contextsLine()
	if v := a.c.opts.Version; v != "" {
		line1 += "  sandscope " + v
	}
	var readOnly, demo bool
	for _, f := range a.c.fleets {
		readOnly, demo = readOnly || f.Snap.Status.ReadOnly, demo || f.Snap.Status.Demo
	}
	return a.headerOf(w, line1, trouble, readOnly, demo, a.contextNotes())
}

// headerOf lays the header out: the connection line (alarming when bad),
// its badges, the counts, and the notes when there are any.
func (a *App) headerOf(w int, line1 string, bad, readOnly, demo bool, notes []string) []string {
	var badges []string
	if readOnly || a.c.opts.ReadOnly {
		badges = append(badges, "READ-ONLY")
	}
	if demo || a.c.opts.Demo {
		badges = append(badges, "DEMO")
	}
	l1 := fitLine(line1, max(0, w-badgeWidth(badges)))
	if bad {
		l1 = a.c.st.flashErr.Render(l1)
	} else {
		l1 = a.c.st.header.Render(l1)
	}
	for _, bd := range badges {
		l1 += " " + a.c.st.badge.Render(bd)
	}
	lines := []string{l1, fitLine(a.countLine(), w)}
	if len(notes) > 0 {
		lines = append(lines, a.c.st.warnRow.Render(fitLine(strings.Join(notes, " │ "), w)))
	}
	return lines
}

func badgeWidth(badges []string) int {
	n := 0
	for _, b := range badges {
		n += len(b) + 1
	}
	return n
}

// sandboxTally is the counts over the sandboxes in view and in scope: the
// root view's running tally when it is of these snapshots (the usual case,
// kept up to date row by row), else counted now.
func (a *App) sandboxTally() tally {
	if sv, ok := a.stack[0].(*sandboxesView); ok && sv.rows.built && sameFleets(sv.rows.parts, a.c.fleets) && sv.rows.nsScope == a.c.nsScope {
		return sv.rows.tally
	}
	var t tally
	for _, sb := range a.c.sandboxes() {
		if a.c.nsScope == "" || sb.Namespace() == a.c.nsScope {
			t.add(countOf(sb), 1)
		}
	}
	return t
}

// countLine is computed once per snapshot version: a whole-fleet pass.
func (a *App) countLine() string {
	disc := a.c.disconnected()
	if a.counts != "" && sameFleets(a.c.fleets, a.headerFleets) && a.c.nsScope == a.headerNS {
		return a.counts
	}
	t := a.sandboxTally()
	total, running, stuck := t.total, t.running, t.stuck
	ipTaken, dead, gone := t.identity[model.IdentityIPTaken], t.identity[model.IdentityPodDead], t.identity[model.IdentityPodGone]
	uidChanged, stale, unknown := t.identity[model.IdentityUIDChanged], t.identity[model.IdentityIPStale], t.identity[model.IdentityUnknown]
	// Problems only when present, so the line stays short at 80 columns.
	s := fmt.Sprintf("%d sandboxes  running %d", total, running)
	for _, c := range []struct {
		name string
		n    int
	}{{"IP_TAKEN", ipTaken}, {"POD_DEAD", dead}, {"POD_GONE", gone}, {"stuck", stuck}, {"stuck objects", t.stuckObjects},
		{"UID_CHANGED", uidChanged}, {"IP_STALE", stale}, {"UNKNOWN", unknown}} {
		if c.n > 0 && !(disc && c.name == "UNKNOWN") {
			s += fmt.Sprintf("  %s %d", c.name, c.n)
			if c.name == "stuck" && t.stuckInit > 0 {
				s += fmt.Sprintf(" (%d init)", t.stuckInit) // as the sweep's stuck block counts them
			}
		}
	}
	if disc {
		s += "  identity UNKNOWN (disconnected)"
	} else if down := a.c.disconnectedContexts(); len(down) > 0 {
		s += "  identity UNKNOWN in " + strings.Join(down, ", ") + " (disconnected)"
	}
	// Which namespace each number key shows, as k9s's header says.
	keys := []string{"<0>all"}
	for i, ns := range a.favorites() {
		keys = append(keys, fmt.Sprintf("<%d>%s", i+1, ns))
	}
	s += "  │ " + strings.Join(keys, " ")
	a.counts, a.headerFleets, a.headerNS = s, append(a.headerFleets[:0], a.c.fleets...), a.c.nsScope
	return s
}

func (a *App) footerLines(w int) []string {
	var first string
	switch {
	case a.dialog != nil:
		first = a.dialog.view(a.c, w)
	case a.flash != "":
		st := a.c.st.flashOK
		if a.flashIsErr {
			st = a.c.st.flashErr
		}
		first = st.Render(fitLine(a.flash, w))
	}
	return []string{clipLine(first, w), a.shortHelpLine(w)}
}

// shortHelpLine is the footer's key line. When the view's keys do not fit,
// the ones before the last two go first: help and quit (or back) always
// show, so that a narrow terminal still says how to get out.
func (a *App) shortHelpLine(w int) string {
	bs := firstKeys(a.top().shortHelp(a.c))
	h := a.help
	h.Width = 0 // cut here, not by bubbles: it would cut the end
	for {
		line := h.ShortHelpView(bs)
		if ansi.StringWidth(line) <= w || len(bs) <= 2 {
			return clipLine(line, w)
		}
		bs = append(bs[:len(bs)-3], bs[len(bs)-2:]...)
	}
}

func padLines(s string, h int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

func clipLines(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i := range lines {
		lines[i] = clipLine(lines[i], w)
	}
	return strings.Join(lines, "\n")
}

// firstKeys shows each binding by its first key only: the footer has room
// for one; the full help (?) lists them all.
func firstKeys(bs []key.Binding) []key.Binding {
	out := make([]key.Binding, len(bs))
	for i, b := range bs {
		out[i] = b
		if ks := b.Keys(); len(ks) > 0 {
			out[i].SetHelp(helpKeys(ks[:1]), b.Help().Desc)
		}
	}
	return out
}

// fullHelpLines is the help of the view on top: its groups side by side
// when they fit in w, else one binding a line, group after group, so that
// a narrow terminal cuts none of them (the help scrolls instead).
func (a *App) fullHelpLines(w int) []string {
	groups := a.top().fullHelp(a.c)
	h := a.help
	h.Width = 0 // whole: bubbles would drop the groups past the width behind a styled "…"
	wide := strings.Split(h.FullHelpView(groups), "\n")
	fits := true
	for _, l := range wide {
		if ansi.StringWidth(l) > w {
			fits = false
			break
		}
	}
	if fits {
		return wide
	}
	keyW := 0
	for _, g := range groups {
		for _, b := range g {
			if b.Enabled() {
				keyW = max(keyW, ansi.StringWidth(b.Help().Key))
			}
		}
	}
	var out []string
	for _, g := range groups {
		if len(out) > 0 {
			out = append(out, "")
		}
		for _, b := range g {
			if b.Enabled() {
				out = append(out, fmt.Sprintf("%-*s  %s", keyW, b.Help().Key, b.Help().Desc))
			}
		}
	}
	return out
}
