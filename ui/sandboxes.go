package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/query"
)

// Sandboxes table columns, in display order.
const (
	colNamespace = iota
	colSandbox
	colClaim
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
	// The agent-sandbox claim a Sandbox is bound to: shown only while a
	// sandbox in view has one, and the first column a narrow terminal drops.
	colClaim:    {Title: "CLAIM", Drop: 11, Max: 30},
	colEngine:   {Title: "ENGINE", Drop: 10},
	colPhase:    {Title: "PHASE", Drop: 9, Max: 12},
	colState:    {Title: "STATE", Max: 12},
	colIdentity: {Title: "IDENTITY", Max: 40},
	colIP:       {Title: "IP", Drop: 4, Max: 39},
	colPod:      {Title: "POD", Drop: 5, Max: 38}, // a UUID and its Pod index
	colNode:     {Title: "NODE", Drop: 8, Max: 20},
	colRestarts: {Title: "RESTARTS", Drop: 7, Right: true},
	colAge:      {Title: "AGE", Drop: 3, Right: true},
	colNotices:  {Title: "NOTICES", Drop: 2, Max: 40},
}

// sandboxCells formats one row, but for AGE, which the drawing renders live.
func sandboxCells(sb *model.Sandbox, disc bool) [nSandboxCols]string {
	var c [nSandboxCols]string
	c[colNamespace] = sb.Namespace()
	c[colSandbox] = sb.Name()
	c[colClaim] = sb.Claim() // "" (no width) when unclaimed: the column then has no rows to show
	c[colEngine] = string(sb.Engine())
	c[colPhase] = textsafe.OrDash(sb.EnginePhase)
	c[colState] = sb.State.String()
	c[colIdentity] = identityCell(sb, disc)
	c[colRestarts] = strconv.Itoa(int(sb.Restarts))
	c[colNotices] = noticeCodes(sb.Notices)
	if sl := sb.PrimarySlot(); sl != nil {
		c[colIP] = textsafe.OrDash(sl.RecordedIP)
		c[colPod] = textsafe.OrDash(sl.PodName)
		if sl.Pod != nil {
			c[colNode] = textsafe.OrDash(sl.Pod.Spec.NodeName)
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
// what it changes: the rows follow each snapshot at the cost of what changed
// (rowset), the full sort order is carried through their row events (sorted
// again only when a row left its place, or the sort changed), and the
// filtered list is computed per filter change (narrowing on the previous
// result when the pattern only grew). Cells are formatted only for the rows
// drawn.
type sandboxesView struct {
	vid int

	rows    rowset
	order   []int // every row, sorted
	where   []int // where[row] = its index in order, valid while whereOK
	whereOK bool

	sort    query.SortOrder
	filter  query.Filter
	visible []int
	haveVis bool // typed holds the results of the rows and order as they are
	// typed are the filters applied since the rows or their order last
	// changed, each with its result, each narrowing the one before (the
	// pattern as it was typed, one character at a time): a backspace goes
	// back to the one before at no cost, where matching the fleet again
	// took a whole-fleet pass per key at 150,000 rows. The filter shown may
	// be any of them: those after it stay after a backspace, so that
	// typing the erased characters again costs nothing either.
	typed []filtered
	gapCursor
	wide      bool // ctrl+w: every column, whatever the width
	offset    int
	selKey    string
	selCtx    string // the context of the row selKey names
	selLabel  string // how the sandbox selKey names reads (for the gap it leaves)
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
	return tableTitle("Sandboxes", len(v.visible), v.rows.len(), v.filter, v.sort, v.wide)
}

// tableTitle is a table's title line: its name, the rows shown of how
// many, the filter, the sort order (none when Key is "") and wide.
func tableTitle(name string, shown, total int, f query.Filter, sort query.SortOrder, wide bool) string {
	s := fmt.Sprintf("%s [%d/%d]", name, shown, total)
	if fs := f.String(); fs != "" {
		s += "  /" + fs
		// The mode is the one typed, whatever the rows: "-f" is fuzzy
		// (and says so), anything else a substring or a regular expression.
		if f.Fuzzy {
			s += " (fuzzy)"
		} else if query.IsRegex(f.Text) {
			s += " (regex)"
		}
	}
	if f.ProblemsOnly {
		s += "  problems only"
	}
	if sort.Key != "" {
		s += "  sort:" + string(sort.Key)
		if sort.Desc {
			s += " (reversed)"
		}
	}
	if wide {
		s += "  wide"
	}
	return s
}

// snapshotChanged brings the rows up to the snapshots and carries the sort
// order, the filter and the cursor through what the rows report.
func (v *sandboxesView) snapshotChanged(c *shared) {
	ev := v.rows.update(c.fleets, c.nsScope, c.multi())
	switch {
	// Every row is new, or the order does not cover the rows the events
	// speak of: sort from scratch.
	case ev.reset || (ev.renumbered && len(v.order) != len(ev.oldToNew)) ||
		(!ev.renumbered && len(ev.changed) > 0 && len(v.order) != v.rows.len()):
		v.resort()
	case ev.renumbered:
		v.renumber(ev)
	case len(ev.changed) > 0:
		v.replaced(ev.changed)
	}
}

// renumber carries the sort order over to the rows' new indexes: kept rows
// keep their places and new ones are inserted at theirs. Replaced rows that
// left their places are taken out and inserted again with them.
func (v *sandboxesView) renumber(ev rowEvents) {
	var isChanged []bool
	if len(ev.changed) > 0 {
		isChanged = make([]bool, v.rows.len())
		for _, j := range ev.changed {
			isChanged[j] = true
		}
	}
	order := make([]int, 0, v.rows.len())
	var moved []int // positions in order of the rows that changed
	monotonic, last := true, -1
	for _, oi := range v.order {
		if ni := ev.oldToNew[oi]; ni >= 0 {
			if isChanged != nil && isChanged[ni] {
				moved = append(moved, len(order))
			}
			order = append(order, int(ni))
		}
	}
	for _, ni := range ev.oldToNew {
		if ni >= 0 {
			monotonic = monotonic && int(ni) > last
			last = int(ni)
		}
	}
	if !monotonic {
		// Rows that tie on every sort field (one key in two contexts) are
		// ordered by index, and the renumbering reordered some indexes
		// (contexts changed places): only a whole sort restores the order.
		order = append(order, ev.added...)
		query.Sort(v.rows.sandboxes, order, v.sort)
	} else {
		order = v.reinsert(order, moved, slices.Clone(ev.added))
	}
	v.order, v.whereOK = order, false
	v.haveVis = false
	v.refilter()
}

// reinsert inserts the rows add into order, sorted by v.sort but for the
// rows at positions (ascending), which were replaced: when one of those
// left its place, all of them are taken out and inserted with add. The
// rest of order did not change and stays sorted. order's array is written.
func (v *sandboxesView) reinsert(order, positions, add []int) []int {
	if len(positions) > 0 && !query.InOrderAround(v.rows.sandboxes, order, v.sort, positions) {
		kept, from := order[:0], 0
		for _, p := range positions {
			add = append(add, order[p])
			kept = append(kept, order[from:p]...) // moves down over the taken: copy allows it
			from = p + 1
		}
		order = append(kept, order[from:]...)
	}
	return query.Insert(v.rows.sandboxes, order, add, v.sort)
}

// replaced keeps the sort order over rows replaced in place, inserting
// again only those that left their places.
func (v *sandboxesView) replaced(rows []int) {
	moved := make([]int, len(rows)) // indexes in order of the rows replaced
	for i, j := range rows {
		moved[i] = v.orderIndex(j)
	}
	if !query.InOrderAround(v.rows.sandboxes, v.order, v.sort, moved) {
		slices.Sort(moved)
		v.order = v.reinsert(v.order, moved, nil)
		v.whereOK = false
		v.haveVis = false
		v.refilter()
		return
	}
	v.rematch(rows)
}

// rematch brings the filter results up to rows replaced in place, the
// order as it was: only those rows are matched again, each result gaining
// or losing them at their places, where matching the whole fleet again
// made every status write a whole-fleet pass while a filter was on. A
// fuzzy result is ranked by score, not in order, and is matched again
// whole.
func (v *sandboxesView) rematch(rows []int) {
	cur, whole := -1, !v.haveVis
	for k, t := range v.typed {
		whole = whole || t.f.Fuzzy
		if query.Same(t.f, v.filter) {
			cur = k
		}
	}
	if whole || (cur < 0 && !v.filter.IsZero()) {
		v.haveVis = false
		v.refilter()
		return
	}
	for k := range v.typed {
		v.typed[k].rows = v.rematchRows(v.typed[k].f, v.typed[k].rows, rows)
	}
	if cur >= 0 {
		v.visible = v.typed[cur].rows
	} else {
		v.visible = v.order
	}
	v.follow()
}

// rematchRows is result, a filter's rows in order, with changed matched
// again. It never writes to result's array: the view may be showing it.
func (v *sandboxesView) rematchRows(f query.Filter, result, changed []int) []int {
	var one [1]int
	for _, j := range changed {
		at := v.orderIndex(j)
		pos, _ := slices.BinarySearchFunc(result, at, func(r, at int) int { return v.orderIndex(r) - at })
		was := pos < len(result) && result[pos] == j
		one[0] = j
		now := len(f.ApplyKeys(v.rows.sandboxes, v.rows.keys, v.rows.keyBytes, one[:])) == 1
		switch {
		case now && !was:
			result = slices.Insert(slices.Clip(result), pos, j)
		case was && !now:
			result = append(result[:pos:pos], result[pos+1:]...)
		}
	}
	return result
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
	v.order = make([]int, v.rows.len())
	for i := range v.order {
		v.order[i] = i
	}
	query.Sort(v.rows.sandboxes, v.order, v.sort)
	v.whereOK = false
	v.haveVis = false
	v.refilter()
}

// filtered is a filter and the rows it kept, in the order shown.
type filtered struct {
	f    query.Filter
	rows []int
}

// maxTyped bounds typed: a pasted or very long pattern keeps the results
// of its last steps only. maxTypedRows bounds the rows they hold together,
// in multiples of the fleet: the results now outlive status writes, and
// a pattern every row matches a character at a time ("bench/" in a
// namespace of that name) would otherwise hold the fleet's row numbers
// once per character.
const (
	maxTyped     = 32
	maxTypedRows = 4
)

func (v *sandboxesView) refilter() {
	if !v.haveVis {
		clear(v.typed) // of rows or an order that is no more
		v.typed = v.typed[:0]
	}
	v.haveVis = true
	if v.filter.IsZero() {
		v.visible = v.order
		v.follow()
		return
	}
	// The latest filter typed that this one is, or narrows: its result
	// holds every row this one keeps.
	k := len(v.typed) - 1
	for ; k >= 0; k-- {
		if query.Same(v.typed[k].f, v.filter) {
			v.visible = v.typed[k].rows
			v.follow()
			return
		}
		if query.Narrows(v.typed[k].f, v.filter) {
			break
		}
	}
	within := v.order
	if k >= 0 {
		within = v.typed[k].rows
	}
	v.visible = v.filter.ApplyKeys(v.rows.sandboxes, v.rows.keys, v.rows.keyBytes, within)
	clear(v.typed[k+1:])
	v.typed = append(v.typed[:k+1], filtered{f: v.filter, rows: v.visible})
	drop, held := max(0, len(v.typed)-maxTyped), 0
	for _, t := range v.typed[drop:] {
		held += len(t.rows)
	}
	for ; held > maxTypedRows*len(v.order) && drop < len(v.typed)-1; drop++ {
		held -= len(v.typed[drop].rows) // the oldest, the widest
	}
	if drop > 0 {
		n := copy(v.typed, v.typed[drop:])
		clear(v.typed[n:])
		v.typed = v.typed[:n]
	}
	v.follow()
}

// follow keeps the cursor on the same sandbox when rows move. When that
// sandbox left the view, the cursor is on nothing (lost) where it was.
func (v *sandboxesView) follow() {
	if v.selKey != "" {
		// The selected row found by its key (the rows are in Key order),
		// then looked for among the visible by index: comparing each
		// visible row's Key read every sandbox, a few ms at 150,000 rows
		// on every keystroke of the filter.
		j := v.rows.find(v.selCtx, v.selKey)
		if j >= 0 && v.cursor < len(v.visible) && v.visible[v.cursor] == j {
			v.lost = ""
			return // still on it: no search
		}
		if j >= 0 {
			if i := slices.Index(v.visible, j); i >= 0 {
				v.found(i) // it came back (or moved)
				return
			}
		}
		if v.lost == "" && !v.showsContext(v.selCtx) {
			// The user switched contexts (:ctx): the sandbox did not
			// leave, its context did, and the view is a new one.
			v.cursor = 0
			v.remember()
			return
		}
		v.left(v.selLabel, len(v.visible))
		return
	}
	v.cursor = min(v.cursor, max(0, len(v.visible)-1))
	v.remember()
}

// showsContext: the rows include context kctx's fleet ("" is the one
// context of a single-context view).
func (v *sandboxesView) showsContext(kctx string) bool {
	for _, f := range v.rows.parts {
		if f.Context == kctx {
			return true
		}
	}
	return kctx == "" || len(v.rows.parts) == 0
}

// userRefiltered is refilter for a change the user made (a filter typed,
// problems only): what is on screen is what they asked for, so a cursor
// whose sandbox was filtered out goes to the first row, as in k9s.
func (v *sandboxesView) userRefiltered() {
	v.refilter()
	if v.lost != "" || (v.cursor < len(v.visible) && !v.isSelected(v.visible[v.cursor])) {
		v.cursor, v.lost = 0, ""
		v.remember()
	}
}

// isSelected: row j is the sandbox the cursor was on (the same Key may be
// in several contexts).
func (v *sandboxesView) isSelected(j int) bool {
	return v.rows.sandboxes[j].Key == v.selKey && (!v.rows.multi || v.rows.contextOf(j) == v.selCtx)
}

func (v *sandboxesView) remember() {
	if v.cursor < len(v.visible) {
		j := v.visible[v.cursor]
		v.selKey, v.selCtx, v.lost = v.rows.sandboxes[j].Key, v.rows.contextOf(j), ""
		v.selLabel = pick{v.rows.sandboxes[j], v.rows.contextOf(j)}.label()
	}
}

func (v *sandboxesView) setFilter(f query.Filter, c *shared) {
	f.ProblemsOnly = v.filter.ProblemsOnly
	v.filter = f
	v.userRefiltered()
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
	if v.onRow(len(v.visible)) {
		j := v.visible[v.cursor]
		return pick{sb: v.rows.sandboxes[j], ctx: v.rows.contextOf(j)}
	}
	return pick{}
}

func (v *sandboxesView) update(msg tea.Msg, c *shared) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		k := c.keys
		sk, sorts := sortKeyOf(msg, k)
		switch {
		case key.Matches(msg, k.Problems):
			v.filter.ProblemsOnly = !v.filter.ProblemsOnly
			v.userRefiltered()
		case sorts:
			v.setSort(sk, c)
		case key.Matches(msg, k.Wide):
			v.wide = !v.wide
		default:
			if v.move(msg, k, len(v.visible), v.pageLines) {
				v.remember()
			}
		}
	case tea.MouseMsg:
		if v.move(msg, c.keys, len(v.visible), v.pageLines) {
			v.remember()
		}
	}
	return nil
}

// uniqueNameLen is how many characters of a name tell apart the sandboxes
// of rows [from, to) of the view (the gap included): the shortest unique
// prefix of each, as a short git hash, at least shortIDLen.
func (v *sandboxesView) uniqueNameLen(from, to int) int {
	names := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		j, gap := v.line(i)
		if gap {
			continue
		}
		names = append(names, v.rows.sandboxes[v.visible[j]].Name())
	}
	slices.Sort(names)
	need := shortIDLen
	for i := 1; i < len(names); i++ {
		a, b := names[i-1], names[i]
		if a == b {
			continue // the same name in two contexts: the CONTEXT column tells them apart
		}
		common := 0
		for common < len(a) && common < len(b) && a[common] == b[common] {
			common++
		}
		need = max(need, common+1)
	}
	return need
}

// cutName is name cut to n characters: a UUID as a short hash is (never
// ending in one of its hyphens, which stand at fixed places and tell
// nothing apart; a Pod's "-0" after one read "…9c91--0"), any other name
// with a mark that it goes on.
func cutName(name string, n int) string {
	if len(name) <= n {
		return name
	}
	if len(name) == 36 && model.IsUUID(name) {
		return strings.TrimRight(name[:n], "-")
	}
	return name[:n] + "…"
}

// sortColumn is the column each sort key orders by.
var sortColumn = map[query.SortKey]int{query.SortName: colSandbox, query.SortAge: colAge,
	query.SortState: colState, query.SortRestarts: colRestarts}

// compactBelow is the terminal width under which the table always shows
// short ids: full UUIDs in SANDBOX, POD and IDENTITY take over a hundred
// columns and push AGE and NOTICES off an 80-column screen.
const compactBelow = 160

// compactCols are sandboxCols for a narrow terminal: the id columns capped
// at what a short id (and a Pod's suffix, a holder's name) needs.
var compactCols = func() []column {
	cols := slices.Clone(sandboxCols)
	cols[colSandbox].Max, cols[colPod].Max, cols[colIdentity].Max, cols[colNotices].Max = 14, 14, 20, 20
	return cols
}()

// luxuries are the columns that compactCols narrow, in the order they are
// given their whole width back once every column that fits with short ids
// is placed: the notices first (they are not ids), then the ids.
var luxuries = [...]int{colNotices, colSandbox, colPod, colIdentity}

// sandboxLayout is the columns of the table at one width, and which of the
// id columns show whole ids.
type sandboxLayout struct {
	cols                         []column // with the CONTEXT column first when multi
	keep, widths                 []int
	nameLen                      int  // how much of a name a cut SANDBOX or POD shows
	wholeName, wholePod, wholeID bool // SANDBOX, POD, IDENTITY uncut
}

// layoutColumns chooses the columns for width. The columns are chosen with
// short ids, so that a wider terminal never shows fewer columns than a
// narrower one; whole ids are the luxury taken only with the room left
// once those columns are placed (wide, ctrl+w, takes every column whole).
func (v *sandboxesView) layoutColumns(width, from, to int) sandboxLayout {
	base := slices.Clone(sandboxCols)
	if sc, ok := sortColumn[v.sort.Key]; ok {
		// The column the table is sorted by is never the one dropped.
		base[sc].Drop = 0
	}
	if v.rows.severalNS {
		// Rows of several namespaces may share a name: which namespace a
		// row is in is never the column dropped.
		base[colNamespace].Drop = 0
	}
	if v.wide {
		// Wide shows every column (the line is cut at the edge).
		for i := range base {
			base[i].Drop = 0
		}
	}
	natural := v.rows.natural[:]
	if natural[colClaim] == 0 {
		// No sandbox in view is claimed: a column of dashes says nothing.
		base[colClaim].Hidden = true
	}
	off := 0
	if v.rows.multi {
		// Several contexts: which cluster a row is in comes first, and is
		// never the column dropped.
		base = append([]column{contextCol}, base...)
		natural = append([]int{contextWidth(v.rows.parts)}, natural...)
		off = 1
	}
	if v.wide {
		keep, widths := layout(base, natural, width)
		return sandboxLayout{cols: base, keep: keep, widths: widths, wholeName: true, wholePod: true, wholeID: true}
	}
	// Names as short as the rows on screen allow and no shorter: the
	// shortest prefix that tells each from the others.
	l := sandboxLayout{cols: slices.Clone(base), nameLen: v.uniqueNameLen(from, to)}
	for _, ci := range luxuries {
		l.cols[off+ci].Max = compactCols[ci].Max
	}
	l.cols[off+colSandbox].Max = max(l.nameLen+1, len(sandboxCols[colSandbox].Title))
	l.cols[off+colPod].Max = max(l.nameLen+1+len("-0"), len(sandboxCols[colPod].Title))
	l.keep, l.widths = layout(l.cols, natural, width)
	if width < compactBelow {
		return l
	}
	slack := width
	for _, w := range l.widths {
		slack -= w + 1
	}
	for _, ci := range luxuries {
		j := slices.Index(l.keep, off+ci)
		if j < 0 {
			continue
		}
		whole := max(min(natural[off+ci], base[off+ci].Max), len(base[off+ci].Title))
		extra := whole - l.widths[j]
		if extra <= 0 {
			extra = 0
		} else if extra > slack {
			if ci != colNotices {
				continue // an id cut short is the short id, or nothing
			}
			extra = slack // notices cut further on are still read from the left
		}
		l.widths[j] += extra
		l.cols[off+ci].Max = base[off+ci].Max
		slack -= extra
		switch ci {
		case colSandbox:
			l.wholeName = true
		case colPod:
			l.wholePod = true
		case colIdentity:
			l.wholeID = true
		}
	}
	return l
}

func (v *sandboxesView) render(c *shared, width, height int) string {
	v.pageLines = height - 1
	rowsH := height - 1
	n := v.lines(len(v.visible))
	v.offset = window(v.cursor, v.offset, rowsH, n)
	end := min(n, v.offset+rowsH)
	l := v.layoutColumns(width, v.offset, end)
	cols, keep, widths := l.cols, l.keep, l.widths
	var b strings.Builder
	var titles [nSandboxCols + 1]string // the CONTEXT column too; an array, not garbage per frame
	head := titles[:len(cols)]
	for i, col := range cols {
		head[i] = col.Title
	}
	renderCells(&b, head, cols, keep, widths)
	out := make([]string, 0, height)
	out = append(out, c.st.colHead.Render(c.st.markRow(fitLine(b.String(), width), false)))
	now := c.now()
	for i := v.offset; i < end; i++ {
		j, gap := v.line(i)
		if gap {
			out = append(out, gapLine(c, v.lost, width))
			continue
		}
		j = v.visible[j]
		sb, p := v.rows.sandboxes[j], v.rows.partOf(j)
		disc := v.rows.discs[p]
		cells := sandboxCells(sb, disc)
		cells[colAge] = c.drawAge(now, sb.CreatedAt())
		cells[colClaim] = textsafe.OrDash(cells[colClaim])
		if !l.wholeName {
			cells[colSandbox] = cutName(sb.Name(), l.nameLen)
		}
		switch pod := cells[colPod]; {
		case l.wholePod:
		case strings.HasPrefix(pod, sb.Name()):
			// The Pod's index (-0) stays: it tells the Pods apart.
			cells[colPod] = cutName(sb.Name(), l.nameLen) + pod[len(sb.Name()):]
		default:
			cells[colPod] = shortIDs(pod)
		}
		if !l.wholeID {
			cells[colIdentity] = shortIDs(cells[colIdentity])
		}
		line := cells[:]
		if v.rows.multi {
			line = append([]string{v.rows.parts[p].Context}, line...)
		}
		b.Reset()
		renderCells(&b, line, cols, keep, widths)
		out = append(out, styleRow(c, fitLine(b.String(), width), rowSeverity(sb, disc), i == v.cursor && v.lost == ""))
	}
	if len(v.visible) == 0 && v.lost == "" {
		msg := "no sandboxes"
		switch loading, synced := v.loading(); {
		case !synced && v.rows.len() == 0:
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
	for _, f := range v.rows.parts {
		if !f.Snap.Status.Synced {
			n, synced = n+f.Snap.Loading, false
		}
	}
	return n, synced
}

// gapLine is the line the cursor is on when the row it was on left the
// view: marked, so that nobody takes the row below it for the one chosen.
func gapLine(c *shared, lost string, width int) string {
	gap := "── " + lost + " left the view: the cursor is on nothing; ↑/↓ choose another ──"
	return c.st.flashErr.Render(c.st.markRow(fitLine(textsafe.Line(gap), width), true))
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
		{k.Shell, k.Exec, k.Forward, k.Copy, k.Create, k.Delete, k.ForceDelete},
		{k.Filter, k.Problems, k.SortName, k.SortAge, k.SortState, k.SortRestarts, k.Wide},
		{k.Command, k.Commands, favoritesBinding, k.Back, k.Help, k.Quit},
	}
}

// favoritesBinding is the number keys, for help: App.onKey reads them
// before any binding (they are not remappable).
var favoritesBinding = key.NewBinding(key.WithKeys("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
	key.WithHelp("0-9", "namespace favorites (0: all)"))

// sortKeyOf is the sort order a key asks for, if it asks for one; the
// sandboxes and the other lists sort by the same keys.
func sortKeyOf(msg tea.KeyMsg, k KeyMap) (query.SortKey, bool) {
	switch {
	case key.Matches(msg, k.SortName):
		return query.SortName, true
	case key.Matches(msg, k.SortAge):
		return query.SortAge, true
	case key.Matches(msg, k.SortState):
		return query.SortState, true
	case key.Matches(msg, k.SortRestarts):
		return query.SortRestarts, true
	}
	return "", false
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
