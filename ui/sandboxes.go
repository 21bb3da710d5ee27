package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/query"
)

// Sandboxes table columns, in display order.
const (
	colNamespace = iota
	colSandbox
	colEngine
	colPhase
	colState
	colIdentity
	colIP
	colPod
	colNode
	colRestarts
	colAge
	colNotices
	nSandboxCols
)

var sandboxCols = []column{
	colNamespace: {Title: "NAMESPACE", Drop: 6, Max: 20},
	colSandbox:   {Title: "SANDBOX", Max: 36},
	colEngine:    {Title: "ENGINE", Drop: 10},
	colPhase:     {Title: "PHASE", Drop: 9, Max: 12},
	colState:     {Title: "STATE", Max: 12},
	colIdentity:  {Title: "IDENTITY", Max: 40},
	colIP:        {Title: "IP", Drop: 4, Max: 39},
	colPod:       {Title: "POD", Drop: 5, Max: 36},
	colNode:      {Title: "NODE", Drop: 8, Max: 20},
	colRestarts:  {Title: "RESTARTS", Drop: 7, Right: true},
	colAge:       {Title: "AGE", Drop: 3, Right: true},
	colNotices:   {Title: "NOTICES", Drop: 2, Max: 40},
}

// cellWidths is the byte length of each of one row's formatted cells,
// capped at 255 (no column is drawn wider than 40). The view keeps these and
// not the cells: only the rows on screen are formatted, as they are drawn,
// where cells kept for every row held 780 bytes a row at 50,000 sandboxes
// (the binary's heap profile); the widths let a full rebuild size the
// columns without formatting the whole fleet again.
type cellWidths [nSandboxCols]uint8

func widthsOf(sb *model.Sandbox, disc bool) cellWidths {
	cells := sandboxCells(sb, disc)
	var w cellWidths
	for k, cell := range cells {
		w[k] = uint8(min(len(cell), math.MaxUint8))
	}
	return w
}

// rowCount is one sandbox's part in the header's counts. A sandbox never
// changes, so the part it added is worked out from it again when it goes.
type rowCount struct {
	identity         model.IdentityState
	running          bool
	stuck, stuckInit int  // Pods stuck Terminating, and of those still in PodInitializing
	stuckObject      bool // the sandbox object itself, on finalizers
}

func countOf(sb *model.Sandbox) rowCount {
	c := rowCount{identity: sb.Identity(), running: sb.State == model.StateRunning}
	c.stuck, c.stuckInit = sb.StuckPods()
	c.stuckObject = sb.StuckObject()
	return c
}

// tally is the header's counts over a set of rows, kept up to date as rows
// come, change and go, so a live refresh does not recount the fleet.
type tally struct {
	total, running, stuck, stuckInit, stuckObjects int
	identity                                       map[model.IdentityState]int
}

func (t *tally) add(c rowCount, sign int) {
	if t.identity == nil {
		t.identity = map[model.IdentityState]int{}
	}
	t.total += sign
	if c.running {
		t.running += sign
	}
	t.stuck += sign * c.stuck
	t.stuckInit += sign * c.stuckInit
	if c.stuckObject {
		t.stuckObjects += sign
	}
	t.identity[c.identity] += sign
}

// sandboxCells formats one row, but for AGE, which the drawing renders live.
func sandboxCells(sb *model.Sandbox, disc bool) [nSandboxCols]string {
	var c [nSandboxCols]string
	c[colNamespace] = sb.Namespace()
	c[colSandbox] = sb.Name()
	c[colEngine] = string(sb.Engine())
	c[colPhase] = orDash(sb.EnginePhase)
	c[colState] = string(sb.State)
	c[colIdentity] = identityCell(sb, disc)
	c[colRestarts] = strconv.Itoa(int(sb.Restarts))
	c[colNotices] = noticeCodes(sb.Notices)
	if sl := sb.PrimarySlot(); sl != nil {
		c[colIP] = orDash(sl.RecordedIP)
		c[colPod] = orDash(sl.PodName)
		if sl.Pod != nil {
			c[colNode] = orDash(sl.Pod.Spec.NodeName)
		} else {
			c[colNode] = "-"
		}
		if n := len(sb.Slots); n > 1 {
			c[colPod] += fmt.Sprintf(" +%d", n-1)
		}
	} else {
		c[colIP], c[colPod], c[colNode] = "-", "-", "-"
	}
	return c
}

// rowSeverity is the row's highlight: none while disconnected, which never
// paints a verdict drawn from stale data.
func rowSeverity(sb *model.Sandbox, disc bool) rowSev {
	if disc {
		return sevNone
	}
	return sandboxSeverity(sb)
}

// sandboxesView is the default view. Work is staged so a keystroke costs only
// what it changes: rows are rebuilt per snapshot version (reusing the column
// widths of unchanged sandboxes), the full sort order per version or sort
// change, and the filtered list per filter change (narrowing on the previous
// result when the pattern only grew). Cells are formatted only for the rows
// drawn.
type sandboxesView struct {
	vid int

	// parts are the fleets the rows were built from, one per context in
	// view; the rows of parts[p] are rows[starts[p]:starts[p+1]], in Key
	// order, and discs[p] says they were masked (disconnected). With one
	// context these are one fleet and the table is exactly its own.
	parts   []Fleet
	discs   []bool
	starts  []int
	multi   bool // built with a CONTEXT column and context-prefixed keys
	built   bool
	rows    []*model.Sandbox
	widths  []cellWidths // widths[i] of rows[i]'s cells
	keys    []string     // keys[i]: rows[i]'s filter key, packed (rowkeys.go)
	stale   int          // keys replaced or dropped since they were last packed
	natural [nSandboxCols]int
	order   []int // every row, sorted
	where   []int // where[row] = its index in order, valid while whereOK
	whereOK bool
	nsScope string // the namespace the rows were picked for ("" = all)
	tally   tally  // the header's counts over rows

	sort      query.SortOrder
	filter    query.Filter
	applied   query.Filter // filter that produced visible
	exact     bool         // applied matched by substring (see query.Filter.Apply)
	visible   []int
	haveVis   bool
	cursor    int
	wide      bool // ctrl+w: every column, whatever the width
	offset    int
	selKey    string
	selCtx    string // the context of the row selKey names
	pageLines int
}

func newSandboxesView(c *shared) *sandboxesView {
	v := &sandboxesView{vid: c.newID(), sort: query.SortOrder{Key: query.SortName}}
	v.snapshotChanged(c)
	return v
}

func (v *sandboxesView) id() int { return v.vid }
func (v *sandboxesView) close()  {}

func (v *sandboxesView) name() string {
	s := fmt.Sprintf("Sandboxes [%d/%d]", len(v.visible), len(v.rows))
	if f := v.filter.String(); f != "" {
		s += "  /" + f
		if v.filter.Text != "" && !v.exact {
			// Say which mode matched: nothing contained the text, so rows are
			// fuzzy matches (or none, for an id-like text).
			if v.filter.Fuzzy || query.FuzzyApplies(v.filter.Text) {
				s += " (fuzzy)"
			} else {
				s += " (no match)"
			}
		}
	}
	if v.filter.ProblemsOnly {
		s += "  problems only"
	}
	s += "  sort:" + string(v.sort.Key)
	if v.sort.Desc {
		s += " (reversed)"
	}
	if v.wide {
		s += "  wide"
	}
	return s
}

func (v *sandboxesView) snapshotChanged(c *shared) {
	fleets := c.fleets
	if len(fleets) == 0 {
		return
	}
	multi := c.multi()
	// Snapshots are immutable: the same pointers mean nothing changed. (The
	// version alone is not enough: ":ctx" and ":ns" start a new fleet whose
	// versions count from the beginning again.)
	if v.built && v.multi == multi && sameFleets(v.parts, fleets) {
		return
	}
	sameLayout := v.built && v.multi == multi && v.nsScope == c.nsScope && sameContexts(v.parts, fleets) && v.sameDiscs(fleets)
	// Only the status moved (the server answered, the clock ticked): the
	// fleets hand out the same sandboxes, so the rows stand as they are.
	if sameLayout && v.sameSandboxes(fleets) {
		v.parts = append(v.parts[:0], fleets...)
		return
	}
	// Only sandboxes replaced in place, none added or removed: the fleets
	// name their positions, so the refresh costs what changed, not the fleet.
	if sameLayout && c.nsScope == "" && len(v.order) == len(v.rows) {
		if positions, ok := v.changedSince(fleets); ok {
			v.parts = append(v.parts[:0], fleets...)
			v.replaceRows(positions)
			return
		}
	}
	first := !v.built || v.multi != multi // a CONTEXT column comes or goes: every key changes
	if first {
		v.rows, v.widths, v.keys, v.order, v.parts, v.discs, v.starts = nil, nil, nil, nil, nil, nil, nil
		v.tally, v.stale = tally{}, 0
	}
	oldParts, oldDiscs, oldStarts := v.parts, v.discs, v.starts
	v.built, v.nsScope, v.multi = true, c.nsScope, multi
	v.parts, v.discs = slices.Clone(fleets), make([]bool, len(fleets))
	total := 0
	for p, f := range fleets {
		v.discs[p] = discOf(f.Snap)
		total += f.Snap.NumSandboxes()
	}
	// The view owns its rows (replaceRows writes them in place), so it
	// copies them out of the snapshots, one context after the other.
	rows := make([]*model.Sandbox, 0, total)
	starts := make([]int, len(fleets)+1)
	for p, f := range fleets {
		starts[p] = len(rows)
		for i := range f.Snap.NumSandboxes() {
			if sb := f.Snap.SandboxAt(i); c.nsScope == "" || sb.Namespace() == c.nsScope {
				rows = append(rows, sb)
			}
		}
	}
	starts[len(fleets)] = len(rows)
	// Within a context both the old and the new rows are sorted by Key (the
	// Snapshot contract), so one merge pass pairs them: unchanged sandboxes
	// (same pointer) keep their column widths, and oldToNew carries the
	// previous sort order over to the new positions. Sandboxes are
	// immutable, so what a replaced or dropped one added to the tally is
	// counted again from it.
	oldRows, oldWidths, oldKeys := v.rows, v.widths, v.keys
	oldToNew := make([]int32, len(oldRows))
	drop := func(i int) {
		oldToNew[i] = -1
		v.tally.add(countOf(oldRows[i]), -1)
		v.stale++
	}
	widths := make([]cellWidths, len(rows))
	keys := make([]string, len(rows))
	batch := keyWriter{keys: keys} // the keys of new and replaced rows
	seen := make([]bool, len(rows))
	changed := make([]bool, len(rows)) // replaced: its sort fields may differ
	paired := make([]bool, len(oldParts))
	var nat [nSandboxCols]int
	for p, f := range fleets {
		i, end, discChanged := 0, 0, false // the old rows of the same context: oldRows[i:end]
		if q := slices.IndexFunc(oldParts, func(o Fleet) bool { return o.Context == f.Context }); q >= 0 && !paired[q] {
			paired[q] = true
			i, end, discChanged = oldStarts[q], oldStarts[q+1], oldDiscs[q] != v.discs[p]
		}
		disc, prefix := v.discs[p], v.keyPrefix(p)
		for j := starts[p]; j < starts[p+1]; j++ {
			sb := rows[j]
			for i < end && oldRows[i] != sb && oldRows[i].Key < sb.Key {
				drop(i)
				i++
			}
			switch {
			case i < end && (oldRows[i] == sb || oldRows[i].Key == sb.Key):
				oldToNew[i] = int32(j)
				seen[j] = true
				if old := oldRows[i]; old != sb {
					v.tally.add(countOf(old), -1)
					v.tally.add(countOf(sb), 1)
					widths[j] = widthsOf(sb, disc)
					batch.add(j, prefix, sb)
					changed[j] = true
					v.stale++
				} else {
					widths[j], keys[j] = oldWidths[i], oldKeys[i]
					if discChanged {
						widths[j] = widthsOf(sb, disc)
					}
				}
				i++
			default:
				widths[j] = widthsOf(sb, disc)
				batch.add(j, prefix, sb)
				v.tally.add(countOf(sb), 1)
			}
			for k, l := range widths[j] { // byte length: a cheap upper bound
				nat[k] = max(nat[k], int(l))
			}
		}
		for ; i < end; i++ {
			drop(i)
		}
	}
	for q := range oldParts { // contexts no longer in view
		if !paired[q] {
			for i := oldStarts[q]; i < oldStarts[q+1]; i++ {
				drop(i)
			}
		}
	}
	nat[colAge] = 4
	prevOrder := v.order
	batch.flush()
	if packKeys(keys, v.stale) {
		v.stale = 0
	}
	v.rows, v.widths, v.keys, v.natural, v.starts = rows, widths, keys, nat, starts
	if first || len(prevOrder) != len(oldRows) {
		v.resort()
		return
	}
	order := make([]int, 0, len(rows))
	var moved []int // positions in order of the rows that changed
	for _, oi := range prevOrder {
		if ni := oldToNew[oi]; ni >= 0 {
			if changed[ni] {
				moved = append(moved, len(order))
			}
			order = append(order, int(ni))
		}
	}
	kept := len(order)
	for j := range rows {
		if !seen[j] {
			order = append(order, j)
		}
	}
	// New rows (appended) need a sort; changed rows only if they left
	// their place.
	if len(order) > kept || !query.InOrderAround(v.rows, order, v.sort, moved) {
		query.Sort(v.rows, order, v.sort)
	}
	v.order, v.whereOK = order, false
	v.haveVis = false
	v.refilter()
}

// sameDiscs: every fleet is as connected as when the rows were built.
func (v *sandboxesView) sameDiscs(fleets []Fleet) bool {
	for p, f := range fleets {
		if discOf(f.Snap) != v.discs[p] {
			return false
		}
	}
	return true
}

// sameSandboxes: every fleet hands out the same sandboxes as the rows'.
func (v *sandboxesView) sameSandboxes(fleets []Fleet) bool {
	for p, f := range fleets {
		if !f.Snap.SameSandboxes(v.parts[p].Snap) {
			return false
		}
	}
	return true
}

// changedSince lists the rows whose sandboxes the fleets replaced in place
// since the rows' snapshots (Snapshot.ChangedSince), when every fleet can
// tell; ok is false when one cannot, and the rows must be compared.
func (v *sandboxesView) changedSince(fleets []Fleet) (positions []int, ok bool) {
	for p, f := range fleets {
		if f.Snap.SameSandboxes(v.parts[p].Snap) {
			continue
		}
		changed, ok := f.Snap.ChangedSince(v.parts[p].Snap)
		if !ok {
			return nil, false
		}
		if positions == nil && v.starts[p] == 0 {
			positions = changed // one fleet (the usual case): its positions are the rows'
			continue
		}
		for _, j := range changed {
			positions = append(positions, v.starts[p]+j)
		}
	}
	return positions, true
}

// partOf is the fleet row j belongs to.
func (v *sandboxesView) partOf(j int) int {
	p := 0
	for p+1 < len(v.parts) && j >= v.starts[p+1] {
		p++
	}
	return p
}

// keyPrefix is what the filter keys of fleet p's rows start with.
func (v *sandboxesView) keyPrefix(p int) string {
	if !v.multi {
		return ""
	}
	return keyPrefix(v.parts[p].Context)
}

// replaceRows takes the sandboxes at positions of the rows, the only ones
// that differ from the current rows (see Snapshot.ChangedSince). Column
// widths only grow here; a full rebuild (any add or remove) lets them shrink.
func (v *sandboxesView) replaceRows(positions []int) {
	var moved []int // indexes in order of the rows replaced
	for _, j := range positions {
		p := v.partOf(j)
		sb, old := v.parts[p].Snap.SandboxAt(j-v.starts[p]), v.rows[j]
		if old == sb {
			continue
		}
		v.rows[j] = sb
		v.tally.add(countOf(old), -1)
		v.tally.add(countOf(sb), 1)
		v.widths[j], v.keys[j] = widthsOf(sb, v.discs[p]), rowKey(v.keyPrefix(p), sb)
		v.stale++
		for k, l := range v.widths[j] {
			v.natural[k] = max(v.natural[k], int(l))
		}
		moved = append(moved, v.orderIndex(j))
	}
	if packKeys(v.keys, v.stale) {
		v.stale = 0
	}
	if len(moved) == 0 {
		return
	}
	if !query.InOrderAround(v.rows, v.order, v.sort, moved) {
		query.Sort(v.rows, v.order, v.sort)
		v.whereOK = false
	}
	v.haveVis = false
	v.refilter()
}

// orderIndex is where row j sits in order.
func (v *sandboxesView) orderIndex(j int) int {
	if !v.whereOK {
		if len(v.where) != len(v.order) {
			v.where = make([]int, len(v.order))
		}
		for i, ri := range v.order {
			v.where[ri] = i
		}
		v.whereOK = true
	}
	return v.where[j]
}

// resort sorts every row from scratch (first build, sort order changed).
func (v *sandboxesView) resort() {
	v.order = make([]int, len(v.rows))
	for i := range v.order {
		v.order[i] = i
	}
	query.Sort(v.rows, v.order, v.sort)
	v.whereOK = false
	v.haveVis = false
	v.refilter()
}

func (v *sandboxesView) refilter() {
	switch {
	case v.filter.IsZero():
		v.visible, v.exact = v.order, false
	case v.haveVis && query.Narrows(v.applied, v.filter):
		vis, exact := v.filter.Apply(v.rows, v.keys, v.visible)
		if v.exact && !exact && v.filter.Text != "" {
			vis, exact = v.filter.Apply(v.rows, v.keys, v.order)
		}
		v.visible, v.exact = vis, exact
	default:
		v.visible, v.exact = v.filter.Apply(v.rows, v.keys, v.order)
	}
	v.applied, v.haveVis = v.filter, true
	v.follow()
}

// follow keeps the cursor on the same sandbox when rows move.
func (v *sandboxesView) follow() {
	if v.cursor < len(v.visible) && v.isSelected(v.visible[v.cursor]) {
		return // still on it: no search
	}
	if v.selKey != "" {
		for i, ri := range v.visible {
			if v.isSelected(ri) {
				v.cursor = i
				return
			}
		}
	}
	v.cursor = min(v.cursor, max(0, len(v.visible)-1))
	v.remember()
}

// isSelected: row j is the sandbox the cursor was on (the same Key may be
// in several contexts).
func (v *sandboxesView) isSelected(j int) bool {
	return v.rows[j].Key == v.selKey && (!v.multi || v.parts[v.partOf(j)].Context == v.selCtx)
}

func (v *sandboxesView) remember() {
	if v.cursor < len(v.visible) {
		j := v.visible[v.cursor]
		v.selKey, v.selCtx = v.rows[j].Key, v.parts[v.partOf(j)].Context
	}
}

func (v *sandboxesView) setFilter(f query.Filter, c *shared) {
	f.ProblemsOnly = v.filter.ProblemsOnly
	v.filter = f
	v.refilter()
}

func (v *sandboxesView) currentFilter() query.Filter { return v.filter }

func (v *sandboxesView) setSort(k query.SortKey, c *shared) {
	if v.sort.Key == k {
		v.sort.Desc = !v.sort.Desc
	} else {
		v.sort = query.SortOrder{Key: k}
	}
	v.resort()
}

func (v *sandboxesView) selectedSandbox(c *shared) pick {
	if v.cursor < len(v.visible) {
		j := v.visible[v.cursor]
		return pick{sb: v.rows[j], ctx: v.parts[v.partOf(j)].Context}
	}
	return pick{}
}

func (v *sandboxesView) update(msg tea.Msg, c *shared) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		k := c.keys
		switch {
		case key.Matches(msg, k.Problems):
			v.filter.ProblemsOnly = !v.filter.ProblemsOnly
			v.refilter()
		case key.Matches(msg, k.SortName):
			v.setSort(query.SortName, c)
		case key.Matches(msg, k.SortAge):
			v.setSort(query.SortAge, c)
		case key.Matches(msg, k.SortState):
			v.setSort(query.SortState, c)
		case key.Matches(msg, k.SortRestarts):
			v.setSort(query.SortRestarts, c)
		case key.Matches(msg, k.Wide):
			v.wide = !v.wide
		default:
			if moveCursor(msg, k, &v.cursor, len(v.visible), v.pageLines) {
				v.remember()
			}
		}
	case tea.MouseMsg:
		if wheelCursor(msg, &v.cursor, len(v.visible)) {
			v.remember()
		}
	}
	return nil
}

// sortColumn is the column each sort key orders by.
var sortColumn = map[query.SortKey]int{query.SortName: colSandbox, query.SortAge: colAge,
	query.SortState: colState, query.SortRestarts: colRestarts}

// compactBelow is the terminal width under which the table shows short
// ids: full UUIDs in SANDBOX, POD and IDENTITY take over a hundred columns
// and push AGE and NOTICES off an 80-column screen.
const compactBelow = 160

// compactCols are sandboxCols for a narrow terminal: the id columns capped
// at what a short id (and a Pod's suffix, a holder's name) needs.
var compactCols = func() []column {
	cols := slices.Clone(sandboxCols)
	cols[colSandbox].Max, cols[colPod].Max, cols[colIdentity].Max, cols[colNotices].Max = 14, 14, 20, 20
	return cols
}()

func (v *sandboxesView) render(c *shared, width, height int) string {
	v.pageLines = height - 1
	cols, compact := sandboxCols, width < compactBelow && !v.wide
	if compact {
		cols = compactCols
	}
	if sc, ok := sortColumn[v.sort.Key]; v.wide || (ok && cols[sc].Drop > 0) {
		// Wide shows every column (the line is cut at the edge); otherwise
		// the column the table is sorted by is never the one dropped.
		cols = slices.Clone(cols)
		for i := range cols {
			if v.wide || i == sc {
				cols[i].Drop = 0
			}
		}
	}
	natural := v.natural[:]
	if v.multi {
		// Several contexts: which cluster a row is in comes first, and is
		// never the column dropped.
		cols = append([]column{contextCol}, cols...)
		natural = append([]int{contextWidth(v.parts)}, natural...)
	}
	keep, widths := layout(cols, natural, width)
	var b strings.Builder
	var titles [nSandboxCols + 1]string // the CONTEXT column too; an array, not garbage per frame
	head := titles[:len(cols)]
	for i, col := range cols {
		head[i] = col.Title
	}
	renderCells(&b, head, cols, keep, widths)
	out := make([]string, 0, height)
	out = append(out, c.st.colHead.Render(c.st.markRow(fitLine(b.String(), width), false)))
	rowsH := height - 1
	v.offset = window(v.cursor, v.offset, rowsH, len(v.visible))
	now := c.now()
	end := min(len(v.visible), v.offset+rowsH)
	for i := v.offset; i < end; i++ {
		j := v.visible[i]
		sb, p := v.rows[j], v.partOf(j)
		disc := v.discs[p]
		cells := sandboxCells(sb, disc)
		cells[colAge] = c.drawAge(now, sb.CreatedAt())
		if compact {
			for _, i := range []int{colSandbox, colPod, colIdentity} {
				cells[i] = shortIDs(cells[i])
			}
		}
		line := cells[:]
		if v.multi {
			line = append([]string{v.parts[p].Context}, line...)
		}
		b.Reset()
		renderCells(&b, line, cols, keep, widths)
		out = append(out, styleRow(c, fitLine(b.String(), width), rowSeverity(sb, disc), i == v.cursor))
	}
	if len(v.visible) == 0 {
		msg := "no sandboxes"
		switch loading, synced := v.loading(); {
		case !synced && len(v.rows) == 0:
			// A fleet lists nothing until its first full list is in.
			msg = fmt.Sprintf("loading: %d sandboxes so far; the table fills when the first full list is in", loading)
		case !v.filter.IsZero():
			msg = "no sandboxes match the filter (esc clears)"
		}
		out = append(out, c.st.dim.Render(fitLine(msg, width)))
	}
	return strings.Join(out, "\n")
}

// loading counts the sandboxes read so far by the fleets not synced yet,
// and reports whether every fleet is.
func (v *sandboxesView) loading() (n int, synced bool) {
	synced = true
	for _, f := range v.parts {
		if !f.Snap.Status.Synced {
			n, synced = n+f.Snap.Loading, false
		}
	}
	return n, synced
}

func styleRow(c *shared, line string, sev rowSev, selected bool) string {
	line = c.st.markRow(line, selected)
	st := c.st.cursor
	switch {
	case selected && sev == sevErr:
		st = c.st.errRow.Reverse(true)
	case selected && sev == sevWarn:
		st = c.st.warnRow.Reverse(true)
	case selected:
	case sev == sevErr:
		st = c.st.errRow
	case sev == sevWarn:
		st = c.st.warnRow
	default:
		return line
	}
	return st.Render(line)
}

func (v *sandboxesView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	return []key.Binding{k.Detail, k.Logs, k.YAML, k.Shell, k.Filter, k.Problems, k.Command, k.Help, k.Quit}
}

func (v *sandboxesView) fullHelp(c *shared) [][]key.Binding {
	k := c.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Detail, k.YAML, k.Logs, k.Previous, k.Events},
		{k.Shell, k.Exec, k.Forward, k.Create, k.Delete},
		{k.Filter, k.Problems, k.SortName, k.SortAge, k.SortState, k.SortRestarts, k.Wide},
		{k.Command, k.Commands, k.Back, k.Help, k.Quit},
	}
}

// moveCursor applies a navigation key; it reports whether the key was one.
func moveCursor(msg tea.KeyMsg, k KeyMap, cursor *int, n, page int) bool {
	page = max(1, page)
	switch {
	case key.Matches(msg, k.Up):
		*cursor--
	case key.Matches(msg, k.Down):
		*cursor++
	case key.Matches(msg, k.PageUp):
		*cursor -= page
	case key.Matches(msg, k.PageDown):
		*cursor += page
	case key.Matches(msg, k.Top):
		*cursor = 0
	case key.Matches(msg, k.Bottom):
		*cursor = n - 1
	default:
		return false
	}
	*cursor = max(0, min(*cursor, n-1))
	return true
}

func wheelCursor(msg tea.MouseMsg, cursor *int, n int) bool {
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		*cursor -= 3
	case tea.MouseButtonWheelDown:
		*cursor += 3
	default:
		return false
	}
	*cursor = max(0, min(*cursor, n-1))
	return true
}
