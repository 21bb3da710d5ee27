package ui

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
)

// MultiSource is a Source over the fleets of several cluster contexts at
// once (sandscope --context a,b). Each context keeps its own fleet model;
// the UI merges their snapshots into one table with a CONTEXT column, shows
// one connection state per context in the header, and acts on a sandbox
// through Backend.ForContext of the context it was read from. Snapshot is
// not read from a MultiSource.
type MultiSource interface {
	Source
	// Fleets returns the contexts in view, in a fixed order, each with its
	// latest snapshot.
	Fleets() []Fleet
}

// Fleet is one cluster context's fleet.
type Fleet struct {
	// Context is the kubeconfig context; "" for a Source of one context.
	Context string
	// Snap is its latest snapshot, never nil: a context not connected yet
	// has an empty one whose Status says why (DisconnectedSince and Notes
	// when its server does not answer, Forbidden when it refused the
	// credentials).
	Snap *fleet.Snapshot
}

// pick is a sandbox the user chose, and the context it was read from ("" for
// a Source of one context): an action on it goes to that context's backend.
type pick struct {
	sb  *model.Sandbox
	ctx string
}

// label names the sandbox for a title or a prompt, with its context when
// the Source has several: a delete must say in which cluster.
func (p pick) label() string {
	s := p.sb.Namespace() + "/" + p.sb.Name()
	if p.ctx != "" {
		s += " in " + p.ctx
	}
	return s
}

// multi reports whether more than one context is in view: the tables then
// show a CONTEXT column and the header one state per context.
func (c *shared) multi() bool { return len(c.fleets) > 1 }

// backendFor is the Backend that acts for context name: with a
// MultiSource always a context's own, never the top-level one, so that no
// action can reach a cluster by default.
func (c *shared) backendFor(name string) Backend {
	if c.be.ForContext == nil {
		return c.be
	}
	return c.be.ForContext(name)
}

// snapOf is the snapshot of context name, nil when it is not in view.
func (c *shared) snapOf(name string) *fleet.Snapshot {
	for _, f := range c.fleets {
		if f.Context == name {
			return f.Snap
		}
	}
	return nil
}

// sandboxes yields every sandbox in view with its context, context after
// context.
func (c *shared) sandboxes() iter.Seq2[string, *model.Sandbox] {
	return func(yield func(string, *model.Sandbox) bool) {
		for _, f := range c.fleets {
			for i := range f.Snap.NumSandboxes() {
				if !yield(f.Context, f.Snap.SandboxAt(i)) {
					return
				}
			}
		}
	}
}

// scoped reports whether some fleet in view watches chosen namespaces only:
// then no view of the fleet can say which namespaces hold sandboxes.
func (c *shared) scoped() bool {
	return slices.ContainsFunc(c.fleets, func(f Fleet) bool { return len(f.Snap.Status.Namespaces) > 0 })
}

// loading reports whether some fleet in view has not yet synced its first
// list.
func (c *shared) loading() bool {
	return slices.ContainsFunc(c.fleets, func(f Fleet) bool { return !f.Snap.Status.Synced })
}

// contextsInView lists the contexts in view (none for a Source of one).
func (c *shared) contextsInView() []string {
	var out []string
	for _, f := range c.fleets {
		if f.Context != "" {
			out = append(out, f.Context)
		}
	}
	return out
}

// discOf reports whether a snapshot was taken while its API server could
// not be reached: its identities read UNKNOWN, and nothing from it is
// highlighted as a verdict.
func discOf(s *fleet.Snapshot) bool { return s != nil && s.Status.DisconnectedSince != nil }

// fleetState is one context's connection state as the header shows it.
func fleetState(s *fleet.Snapshot) string {
	st := s.Status
	switch {
	case st.DisconnectedSince != nil:
		return "disconnected since " + clock(*st.DisconnectedSince)
	case len(st.Forbidden) > 0:
		return "forbidden"
	case !st.Synced:
		if received, total := model.SyncTotals(st.Syncing); total > 0 {
			return "syncing " + model.Thousands(received) + " of " + model.Thousands(total)
		} else if received > 0 {
			return "syncing " + model.Thousands(received) + "…"
		}
		return fmt.Sprintf("syncing… %d", s.Loading)
	}
	return "synced"
}

// fleetTrouble: the context cannot be trusted to show its fleet whole.
func fleetTrouble(s *fleet.Snapshot) bool {
	return s.Status.DisconnectedSince != nil || len(s.Status.Forbidden) > 0
}

// contextsLine is the header's first line with several contexts in view:
// the namespace, then each context with its state, so that a cluster that
// is down is named where the eye looks first.
func (a *App) contextsLine() (line string, trouble bool) {
	var b strings.Builder
	b.WriteString("sandscope")
	ns := "all"
	if a.c.nsScope != "" {
		ns = a.c.nsScope
	} else if a.c.scoped() {
		var watched []string // the namespaces the contexts watch (each its own without -A)
		for _, f := range a.c.fleets {
			for _, n := range f.Snap.Status.Namespaces {
				if !slices.Contains(watched, n) {
					watched = append(watched, n)
				}
			}
		}
		slices.Sort(watched)
		ns = strings.Join(watched, ",")
	}
	fmt.Fprintf(&b, "  ns:%s ", ns)
	for i, f := range a.c.fleets {
		if i > 0 {
			b.WriteString(" ·")
		}
		fmt.Fprintf(&b, " %s %s", f.Context, fleetState(f.Snap))
		trouble = trouble || fleetTrouble(f.Snap)
	}
	return b.String(), trouble
}

// contextNotes are the header's notes of every context in view, each
// prefixed with its context.
func (a *App) contextNotes() []string {
	var notes []string
	for _, f := range a.c.fleets {
		st := f.Snap.Status
		for _, m := range st.Forbidden {
			notes = append(notes, f.Context+": forbidden: "+m)
		}
		for _, m := range st.Notes {
			notes = append(notes, f.Context+": "+m)
		}
	}
	return notes
}

// disconnectedContexts names the contexts in view whose rows are masked.
func (c *shared) disconnectedContexts() []string {
	var out []string
	for _, f := range c.fleets {
		if discOf(f.Snap) {
			out = append(out, f.Context)
		}
	}
	return out
}

// sameFleets: a and b are the same contexts with the same snapshots.
func sameFleets(a, b []Fleet) bool { return slices.Equal(a, b) }

// sameContexts: a and b are the same contexts in the same order.
func sameContexts(a, b []Fleet) bool {
	return slices.EqualFunc(a, b, func(x, y Fleet) bool { return x.Context == y.Context })
}

// contextCol is the CONTEXT column the tables gain with several contexts.
var contextCol = column{Title: "CONTEXT", Max: 24}

// contextWidth is the natural width of the CONTEXT column.
func contextWidth(fleets []Fleet) int {
	w := 0
	for _, f := range fleets {
		w = max(w, len(f.Context))
	}
	return w
}

// contextsView is ":ctx": the kubeconfig's contexts, those in view with
// their state and sandboxes. Enter (the detail key) shows the one under
// the cursor.
type contextsView struct{ *listView }

var contextsCols = []column{
	{Title: "CONTEXT", Max: 40},
	{Title: "IN VIEW"},
	{Title: "STATE", Max: 40},
	{Title: "SANDBOXES", Right: true},
	{Title: "SERVER", Drop: 1, Max: 50},
}

func newContextsView(c *shared) *contextsView {
	v := &listView{vid: c.newID(), title: "Contexts", base: contextsCols, ageCol: -1, build: buildContextRows,
		nameCol: 0, stateCol: 2, restartsCol: -1, noSandbox: true}
	v.snapshotChanged(c)
	return &contextsView{v}
}

func buildContextRows(c *shared) []listRow {
	var names []string
	if c.be.Contexts != nil {
		names = c.be.Contexts()
	}
	inView := map[string]*fleet.Snapshot{}
	for _, f := range c.fleets {
		name := f.Context
		if name == "" {
			name = f.Snap.Status.Context // a Source of one context names it in its status
		}
		inView[name] = f.Snap
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	rows := make([]listRow, 0, len(names))
	for _, name := range names {
		r := listRow{cells: []string{name, "", "-", "-", "-"}}
		if snap := inView[name]; snap != nil {
			r.cells[1], r.cells[2], r.cells[4] = "yes", fleetState(snap), textsafe.OrDash(snap.Status.Server)
			r.cells[3] = fmt.Sprint(snap.NumSandboxes())
			if fleetTrouble(snap) {
				r.sev = sevErr
			}
		}
		r.fkey = strings.ToLower(strings.Join(r.cells, " "))
		rows = append(rows, r)
	}
	return rows
}

// selectedContext is the context under the cursor.
func (v *contextsView) selectedContext() string { return v.firstCell() }

// choose implements chooser: as k9s does, Enter shows the fleet of the
// context chosen, not the list.
func (v *contextsView) choose(a *App) tea.Cmd {
	name := v.selectedContext()
	a.toRoot()
	return a.switchContext(name)
}

func (v *contextsView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	show := key.NewBinding(key.WithKeys(k.Detail.Keys()...), key.WithHelp(k.Detail.Help().Key, "show context"))
	return []key.Binding{show, k.Filter, k.Command, k.Back, k.Help, k.Quit}
}

// namespacesView is ":ns" alone, k9s's namespace view: every namespace
// with sandboxes in view, with its count, its problems and its favorite
// key (0-9). Enter (the detail key) shows the one under the cursor.
type namespacesView struct{ *listView }

var namespacesCols = []column{
	{Title: "KEY", Right: true},
	{Title: "NAMESPACE", Max: 63},
	{Title: "SANDBOXES", Right: true},
	{Title: "PROBLEMS", Right: true},
}

func (a *App) newNamespacesView() *namespacesView {
	build := func(c *shared) []listRow {
		count, problems := map[string]int{}, map[string]int{}
		total, totalProblems := 0, 0
		for _, sb := range c.sandboxes() {
			count[sb.Namespace()]++
			total++
			if query.IsProblem(sb) {
				problems[sb.Namespace()]++
				totalProblems++
			}
		}
		favs := a.favorites()
		names := make([]string, 0, len(count)+len(favs))
		for ns := range count {
			names = append(names, ns)
		}
		for _, ns := range favs {
			if _, seen := count[ns]; !seen {
				names = append(names, ns)
			}
		}
		slices.Sort(names)
		rows := []listRow{{cells: []string{"0", "all", fmt.Sprint(total), fmt.Sprint(totalProblems)}}}
		for _, ns := range names {
			k := "-"
			if i := slices.Index(favs, ns); i >= 0 {
				k = fmt.Sprint(i + 1)
			}
			r := listRow{cells: []string{k, ns, fmt.Sprint(count[ns]), fmt.Sprint(problems[ns])}}
			if problems[ns] > 0 {
				r.sev = sevWarn
			}
			rows = append(rows, r)
		}
		return rows
	}
	return &namespacesView{newCellsList(a.c, "Namespaces", namespacesCols, 1, build)}
}

// choose implements chooser: Enter watches the namespace chosen.
func (v *namespacesView) choose(a *App) tea.Cmd {
	if ns := v.selectedNamespace(); ns != "" {
		a.toRoot()
		return a.switchNamespace(ns)
	}
	return nil
}

// selectedNamespace is the namespace under the cursor ("all": every one;
// "" with none).
func (v *namespacesView) selectedNamespace() string {
	if !v.onRow(len(v.visible)) {
		return ""
	}
	return v.rows[v.visible[v.cursor]].cells[1]
}

func (v *namespacesView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	show := key.NewBinding(key.WithKeys(k.Detail.Keys()...), key.WithHelp(k.Detail.Help().Key, "show namespace"))
	return []key.Binding{show, k.Filter, k.Command, k.Back, k.Help, k.Quit}
}
