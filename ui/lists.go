package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/internal/textsafe"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
)

// listRow is one row of a secondary list (Pods, Pools).
type listRow struct {
	key     string // sandbox key this row belongs to, if any
	ctx     string // the context of the row's fleet ("" with one)
	cells   []string
	created time.Time
	labels  model.Labels
	fkey    string
	sev     rowSev
}

// listView is a filterable table rebuilt per snapshot version: Pods and Pools
// are far fewer than sandboxes' worst case, so they skip the per-row cache.
type listView struct {
	vid    int
	title  string
	cols   []column // base, with contextCol first when the rows are of several contexts
	base   []column
	ageCol int
	build  func(c *shared) []listRow
	// perContext: the rows come from the fleets in view, and with several
	// the table has a CONTEXT column; off is then 1, the shift of every
	// column index the view names.
	perContext bool
	off        int
	fleets     []Fleet // the fleets the rows were built from
	built      bool
	rows       []listRow
	natural    []int
	filter     query.Filter
	visible    []int
	gapCursor
	selID   string // the row the cursor is on (rowID)
	selName string // the name cell of the row selID names
	offset  int
	page    int
	// nameCol, stateCol and restartsCol are the columns N, S and R sort
	// by (-1: the view has none); A sorts by age.
	nameCol, stateCol, restartsCol int
	sort                           query.SortOrder
	wide                           bool // ctrl+w: every column, whatever the width
	// noSandbox: the rows are not sandboxes' (Pools), so d/y/l/e are not offered.
	noSandbox bool
}

func (v *listView) id() int { return v.vid }
func (v *listView) close()  {}
func (v *listView) name() string {
	return tableTitle(v.title, len(v.visible), len(v.rows), v.filter, v.sort, v.wide)
}

func (v *listView) snapshotChanged(c *shared) {
	if v.built && sameFleets(v.fleets, c.fleets) {
		return
	}
	v.built, v.fleets = true, slices.Clone(c.fleets)
	v.cols, v.off = v.base, 0
	if v.perContext && c.multi() {
		v.cols, v.off = append([]column{contextCol}, v.base...), 1
	}
	v.rows = v.build(c)
	v.sortRows()
	v.natural = make([]int, len(v.cols))
	for _, r := range v.rows {
		for j, cell := range r.cells {
			v.natural[j] = max(v.natural[j], len(cell))
		}
	}
	if v.ageCol >= 0 {
		v.natural[v.at(v.ageCol)] = 4
	}
	v.refilter()
}

// at is where column i of the view's base columns is in the rows' cells.
func (v *listView) at(i int) int {
	if i < 0 {
		return i
	}
	return i + v.off
}

// inContext places a row of fleet f: in a table of several contexts its
// context comes first, in the cells and in the filter key.
func inContext(c *shared, f Fleet, r listRow) listRow {
	r.ctx = f.Context
	if c.multi() {
		r.cells = append([]string{f.Context}, r.cells...)
		r.fkey = keyPrefix(f.Context) + r.fkey
	}
	return r
}

func (v *listView) refilter() {
	v.visible = v.visible[:0]
	var matched []bool
	if v.filter.Text != "" {
		keys := make([]string, len(v.rows))
		for i := range v.rows {
			keys[i] = v.rows[i].fkey
		}
		matched = v.filter.MatchText(keys) // the sandboxes view's rules
	}
	for i := range v.rows {
		if matched != nil && matched[i] == v.filter.Invert {
			continue
		}
		if v.filter.Selector != nil && !v.filter.Selector.Matches(v.rows[i].labels) {
			continue
		}
		if v.filter.ProblemsOnly && v.rows[i].sev == sevNone {
			continue
		}
		v.visible = append(v.visible, i)
	}
	v.follow()
}

// rowID names row i whatever its state: its context and the cells up to
// its name (namespace, name).
func (v *listView) rowID(i int) string {
	r := &v.rows[i]
	return r.ctx + "\x00" + strings.Join(r.cells[:min(v.at(v.nameCol)+1, len(r.cells))], "\x00")
}

// follow keeps the cursor on its row as rows come and go; when the row
// left, the cursor is on nothing where it was.
func (v *listView) follow() {
	if v.selID != "" {
		for i, r := range v.visible {
			if v.rowID(r) == v.selID {
				v.found(i)
				return
			}
		}
		v.left(v.selName, len(v.visible))
		return
	}
	v.cursor = min(v.cursor, max(0, len(v.visible)-1))
	v.remember()
}

func (v *listView) remember() {
	if v.cursor < len(v.visible) {
		i := v.visible[v.cursor]
		v.selID, v.lost = v.rowID(i), ""
		if cells := v.rows[i].cells; v.at(v.nameCol) < len(cells) {
			v.selName = cells[v.at(v.nameCol)]
		}
	}
}

// userRefiltered: the user changed the filter; a cursor whose row it
// filtered out goes to the first row.
func (v *listView) userRefiltered() {
	v.refilter()
	if v.lost != "" {
		v.cursor, v.lost = 0, ""
		v.remember()
	}
}

func (v *listView) setFilter(f query.Filter, c *shared) {
	f.ProblemsOnly = v.filter.ProblemsOnly
	v.filter = f
	v.userRefiltered()
}
func (v *listView) currentFilter() query.Filter { return v.filter }

// firstCell is the first cell of the row under the cursor ("" with none):
// what names the row in a list whose rows are not sandboxes.
func (v *listView) firstCell() string {
	if !v.onRow(len(v.visible)) {
		return ""
	}
	return v.rows[v.visible[v.cursor]].cells[0]
}

// selectedSandbox lets d/l/y work from the Pods view on the Pod's sandbox.
func (v *listView) selectedSandbox(c *shared) pick {
	if !v.onRow(len(v.visible)) {
		return pick{}
	}
	r := v.rows[v.visible[v.cursor]]
	snap := c.snapOf(r.ctx)
	if r.key == "" || snap == nil {
		return pick{}
	}
	if sb := snap.Sandbox(r.key); sb != nil {
		return pick{sb: sb, ctx: r.ctx}
	}
	return pick{}
}

func (v *listView) update(msg tea.Msg, c *shared) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		k := c.keys
		if key.Matches(msg, k.Problems) {
			v.filter.ProblemsOnly = !v.filter.ProblemsOnly
			v.userRefiltered()
			return nil
		}
		if sk, ok := sortKeyOf(msg, k); ok {
			v.setSort(sk)
			return nil
		}
		if key.Matches(msg, k.Wide) {
			v.wide = !v.wide
			return nil
		}
		if v.move(msg, k, len(v.visible), v.page) {
			v.remember()
		}
	case tea.MouseMsg:
		if v.move(msg, c.keys, len(v.visible), v.page) {
			v.remember()
		}
	}
	return nil
}

// shownCols are the columns as the table lays them out: with ctrl+w none
// may be dropped, and the column the rows are sorted by never is (a sort
// nobody can see reads as no order), as in the sandboxes view.
func (v *listView) shownCols() []column {
	sortCol := -1
	switch v.sort.Key {
	case query.SortName:
		sortCol = v.nameCol
	case query.SortAge:
		sortCol = v.ageCol
	case query.SortState:
		sortCol = v.stateCol
	case query.SortRestarts:
		sortCol = v.restartsCol
	}
	if !v.wide && (sortCol < 0 || v.cols[v.at(sortCol)].Drop == 0) {
		return v.cols
	}
	cols := slices.Clone(v.cols)
	for i := range cols {
		if v.wide || i == v.at(sortCol) {
			cols[i].Drop = 0
		}
	}
	return cols
}

func (v *listView) render(c *shared, width, height int) string {
	v.page = height - 1
	keep, widths := layout(v.shownCols(), v.natural, width)
	head := make([]string, len(v.cols))
	for i, col := range v.cols {
		head[i] = col.Title
	}
	var b strings.Builder
	renderCells(&b, head, v.cols, keep, widths)
	out := []string{c.st.colHead.Render(c.st.markRow(fitLine(b.String(), width), false))}
	n := v.lines(len(v.visible))
	v.offset = window(v.cursor, v.offset, height-1, n)
	now := c.now()
	cells := make([]string, len(v.cols))
	for i := v.offset; i < min(n, v.offset+height-1); i++ {
		j, gap := v.line(i)
		if gap {
			out = append(out, gapLine(c, v.lost, width))
			continue
		}
		r := &v.rows[v.visible[j]]
		copy(cells, r.cells)
		if v.ageCol >= 0 {
			cells[v.at(v.ageCol)] = c.drawAge(now, r.created)
		}
		b.Reset()
		renderCells(&b, cells, v.cols, keep, widths)
		out = append(out, styleRow(c, fitLine(b.String(), width), r.sev, i == v.cursor && v.lost == ""))
	}
	if len(v.visible) == 0 && v.lost == "" {
		out = append(out, c.st.dim.Render(fitLine("nothing to show", width)))
	}
	return strings.Join(out, "\n")
}

func (v *listView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	if v.noSandbox {
		return []key.Binding{k.Filter, k.Problems, k.Command, k.Back, k.Help, k.Quit}
	}
	return []key.Binding{k.Detail, k.Filter, k.Command, k.Back, k.Help, k.Quit}
}

func (v *listView) fullHelp(c *shared) [][]key.Binding {
	k := c.keys
	sorts := []key.Binding{k.SortName, k.SortAge}
	if v.stateCol >= 0 {
		sorts = append(sorts, k.SortState)
	}
	if v.restartsCol >= 0 {
		sorts = append(sorts, k.SortRestarts)
	}
	groups := [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, append(sorts, k.Wide)}
	if !v.noSandbox {
		groups = append(groups, []key.Binding{k.Detail, k.YAML, k.Logs, k.Events})
	}
	return append(groups, []key.Binding{k.Filter, k.Problems, k.Command, k.Back, k.Help, k.Quit})
}

// setSort sorts by key; the same key again reverses. The cursor stays on
// its row.
func (v *listView) setSort(k query.SortKey) {
	if (k == query.SortState && v.stateCol < 0) || (k == query.SortRestarts && v.restartsCol < 0) {
		return
	}
	if v.sort.Key == k {
		v.sort.Desc = !v.sort.Desc
	} else {
		v.sort = query.SortOrder{Key: k}
	}
	v.sortRows()
	v.refilter() // follows the cursor's row
}

// sortRows orders the rows by the view's sort (build order when none).
func (v *listView) sortRows() {
	if v.sort.Key == "" {
		return
	}
	cell := func(r listRow, col int) string {
		if col < 0 || col >= len(r.cells) {
			return ""
		}
		return r.cells[col]
	}
	slices.SortStableFunc(v.rows, func(a, b listRow) int {
		var c int
		switch v.sort.Key {
		case query.SortAge:
			c = b.created.Compare(a.created) // youngest first, as the sandboxes view
		case query.SortState:
			c = cmp.Or(cmp.Compare(b.sev, a.sev), strings.Compare(cell(a, v.at(v.stateCol)), cell(b, v.at(v.stateCol))))
		case query.SortRestarts:
			ra, _ := strconv.Atoi(cell(a, v.at(v.restartsCol)))
			rb, _ := strconv.Atoi(cell(b, v.at(v.restartsCol)))
			c = cmp.Compare(rb, ra)
		}
		c = cmp.Or(c, strings.Compare(cell(a, v.at(v.nameCol)), cell(b, v.at(v.nameCol))))
		if v.sort.Desc {
			return -c
		}
		return c
	})
}

var podCols = []column{
	{Title: "NAMESPACE", Drop: 2, Max: 20}, // Pods of several namespaces share names
	{Title: "POD", Max: 40, Shrink: 14},
	{Title: "SANDBOX", Drop: 5, Max: 36, Shrink: 12},
	{Title: "PHASE", Max: 10},
	{Title: "IP", Drop: 3, Max: 39},
	{Title: "NODE", Drop: 6, Max: 20},
	{Title: "CONTAINER", Drop: 4, Max: 32},
	{Title: "DELETING", Drop: 1, Right: true},
	{Title: "RESTARTS", Drop: 7, Right: true},
	{Title: "AGE", Drop: 8, Right: true},
}

func newPodsView(c *shared) *listView {
	v := &listView{vid: c.newID(), title: "Pods", base: podCols, ageCol: 9, build: buildPodRows,
		nameCol: 1, stateCol: 3, restartsCol: 8, perContext: true}
	v.snapshotChanged(c)
	return v
}

func buildPodRows(c *shared) []listRow {
	var rows []listRow
	for _, f := range c.fleets {
		rows = slices.Grow(rows, f.Snap.NumPods())
		for _, p := range f.Snap.Pods() {
			if c.nsScope != "" && p.Namespace != c.nsScope {
				continue
			}
			rows = append(rows, inContext(c, f, podRow(c, f.Snap, p)))
		}
	}
	return rows
}

// podRow is one Pod's row.
func podRow(c *shared, snap *fleet.Snapshot, p *model.Pod) listRow {
	now := c.now()
	r := listRow{created: p.Created(), labels: p.Labels}
	sbName := "-"
	if sb := snap.SandboxOfPod(p.Namespace, p.Name); sb != nil {
		r.key, sbName = sb.Key, sb.Name()
	}
	cont := "-"
	if _, cs := p.Main(); cs != nil {
		cont = containerState(cs.State)
	}
	deleting := "-"
	if p.DeletionTimestamp != nil {
		deleting = age(now, p.DeletionTimestamp.Time)
		r.sev = sevWarn
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		r.sev = sevErr
	}
	r.cells = []string{p.Namespace, p.Name, sbName, string(p.Status.Phase), textsafe.OrDash(p.Status.PodIP),
		textsafe.OrDash(p.Spec.NodeName), cont, deleting, strconv.Itoa(int(p.Restarts())), ""}
	r.fkey = strings.ToLower(strings.Join(r.cells[:7], " "))
	return r
}

var poolCols = []column{
	{Title: "NAMESPACE", Drop: 3, Max: 20},
	{Title: "POOL", Max: 40},
	{Title: "ENGINE", Drop: 4},
	{Title: "DESIRED", Right: true, Drop: 2},
	{Title: "MEMBERS", Right: true},
	{Title: "READY", Right: true},
	{Title: "CLAIMED", Right: true},
	{Title: "WAITING", Right: true, Drop: 1},
	{Title: "AGE", Drop: 5, Right: true},
}

// newCellsList is a list of rows that are not sandboxes, with no age,
// state or restarts column, named by column nameCol: each row's filter key
// is its cells.
func newCellsList(c *shared, title string, cols []column, nameCol int, build func(*shared) []listRow) *listView {
	v := &listView{vid: c.newID(), title: title, base: cols, ageCol: -1, nameCol: nameCol, stateCol: -1, restartsCol: -1, noSandbox: true,
		build: func(c *shared) []listRow {
			rows := build(c)
			for i := range rows {
				rows[i].fkey = strings.ToLower(strings.Join(rows[i].cells, " "))
			}
			return rows
		}}
	v.snapshotChanged(c)
	return v
}

// newPoolsView lists OpenSandbox Pools and agent-sandbox SandboxWarmPools,
// as `get pools` does: an OpenSandbox Pool's DESIRED is its idle buffer,
// MEMBERS its total, READY what is available and CLAIMED what is
// allocated; a warm pool's are its replicas, status, ready members and the
// claims bound through it, WAITING its claims not yet bound.
func newPoolsView(c *shared) *listView {
	v := &listView{vid: c.newID(), title: "Pools", base: poolCols, ageCol: 8, build: buildPoolRows,
		nameCol: 1, stateCol: -1, restartsCol: -1, noSandbox: true, perContext: true}
	v.snapshotChanged(c)
	return v
}

func buildPoolRows(c *shared) []listRow {
	var rows []listRow
	for _, f := range c.fleets {
		for _, p := range f.Snap.Pools {
			if c.nsScope != "" && p.Namespace != c.nsScope {
				continue
			}
			r := listRow{created: p.Created(), labels: p.Labels}
			if p.Available == 0 && p.Total > 0 {
				r.sev = sevWarn
			}
			r.cells = []string{p.Namespace, p.Name, string(model.EngineBatchSandbox), fmt.Sprintf("%d-%d", p.BufferMin, p.BufferMax),
				itoa(p.Total), itoa(p.Available), itoa(p.Allocated), "-", ""}
			r.fkey = strings.ToLower(p.Namespace + "/" + p.Name)
			rows = append(rows, inContext(c, f, r))
		}
		for _, w := range f.Snap.WarmPoolRows() {
			p := w.Pool
			if c.nsScope != "" && p.Namespace != c.nsScope {
				continue
			}
			r := listRow{created: p.Created(), labels: p.Labels}
			if p.ReadyReplicas == 0 && p.Desired > 0 {
				r.sev = sevWarn
				if w.Waiting > 0 || w.Cold > 0 {
					r.sev = sevErr
				}
			}
			r.cells = []string{p.Namespace, p.Name, string(model.EngineAgent), itoa(p.Desired), itoa(p.Replicas), itoa(p.ReadyReplicas),
				strconv.Itoa(w.Claimed), strconv.Itoa(w.Waiting), ""}
			r.fkey = strings.ToLower(p.Namespace + "/" + p.Name)
			rows = append(rows, inContext(c, f, r))
		}
	}
	return rows
}

var claimCols = []column{
	{Title: "NAMESPACE", Drop: 3, Max: 20},
	{Title: "CLAIM", Max: 40},
	{Title: "STATE"},
	{Title: "SANDBOX", Max: 40},
	{Title: "SB STATE", Drop: 2},
	{Title: "IDENTITY", Max: 28},
	{Title: "POOL", Drop: 1, Max: 30},
	{Title: "LAUNCH", Drop: 4},
	{Title: "AGE", Drop: 5, Right: true},
}

// newClaimsView lists agent-sandbox SandboxClaims with the sandbox each is
// bound to; enter (d) opens that sandbox.
func newClaimsView(c *shared) *listView {
	v := &listView{vid: c.newID(), title: "Claims", base: claimCols, ageCol: 8, build: buildClaimRows,
		nameCol: 1, stateCol: 2, restartsCol: -1, perContext: true}
	v.snapshotChanged(c)
	return v
}

func buildClaimRows(c *shared) []listRow {
	var rows []listRow
	for _, f := range c.fleets {
		for _, cr := range f.Snap.ClaimRows() {
			cl := cr.Claim
			if c.nsScope != "" && cl.Namespace != c.nsScope {
				continue
			}
			r := listRow{created: cl.Created(), labels: cl.Labels}
			sandbox, state, identity, launch := textsafe.OrDash(cl.Sandbox), "-", "-", "-"
			if sb := cr.Sandbox; sb != nil {
				r.key = sb.Key
				sandbox, state, identity, launch = sb.Name(), sb.State.String(), string(sb.Identity()), textsafe.OrDash(sb.LaunchType())
				switch sb.Identity() {
				case model.IdentityIPTaken, model.IdentityPodDead, model.IdentityPodGone:
					r.sev = sevErr
				}
			} else if cl.Sandbox != "" {
				state, r.sev = "gone", sevErr
			}
			switch cl.State() {
			case model.ClaimPending:
				r.sev = max(r.sev, sevWarn)
			case model.ClaimFailed:
				r.sev = sevErr
			}
			r.cells = []string{cl.Namespace, cl.Name, cl.State(), sandbox, state, identity, textsafe.OrDash(cl.WarmPool), launch, ""}
			r.fkey = strings.ToLower(strings.Join(r.cells[:7], " "))
			rows = append(rows, inContext(c, f, r))
		}
	}
	return rows
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
