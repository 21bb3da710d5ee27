package ui

import (
	"fmt"
	"slices"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
)

// Whatever the view reuses as a filter is typed and erased (the result of
// the filter before, or of the same filter a moment ago), the rows it
// shows are exactly those a whole-fleet match of the same filter keeps,
// across live changes and sort changes in between.
func TestTypedFilterRowsAreAWholeMatch(t *testing.T) {
	src := &fakeSource{snap: bigSnapshot(3000)}
	app := benchApp(src)
	sv := app.top().(*sandboxesView)
	check, typeLine := typedFilterChecks(t, app, sv)
	typeAll := func(line string) { // every prefix, as typed
		t.Helper()
		for i := 1; i <= len(line); i++ {
			typeLine(line[:i])
		}
	}
	erase := func(line string, to int) { // backspaces down to line[:to]
		t.Helper()
		for i := len(line) - 1; i >= to; i-- {
			typeLine(line[:i])
		}
	}
	typeAll("sandbox-0012")
	erase("sandbox-0012", 8)
	typeAll("sandbox-002")
	erase("sandbox-002", 0)
	typeAll("sandbox-0012")
	typeLine("!sandbox-0012") // inverted: wider than the one before
	typeLine("sandbox-0012")
	typeAll("sandbox-00(1|2)")           // a regular expression
	typeAll("sandbox-0012|sandbox-0013") // one that widens as it grows
	erase("sandbox-00(1|2)", 9)
	typeAll("-f sbx12") // fuzzy
	erase("-f sbx12", 4)
	typeAll("sandbox-00 -l app=app-3")
	erase("sandbox-00 -l app=app-3", 10)

	// A live change between keys: the results typed before it are of rows
	// that are no more.
	typeAll("dead")
	for _, name := range []string{"sandbox-000005", "sandbox-000013"} {
		src.set(withSandbox(src.Snapshot(), name, func(sb model.Sandbox) model.Sandbox {
			sb.State = model.StateDead
			return sb
		}))
		app.Update(refreshMsg{})
		check("after a change", "dead")
		erase("dead", 2)
		typeAll("dead")
	}
	// Problems only, and a sort, between keys.
	app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("z")})
	check("problems only", "dead")
	erase("dead", 1)
	app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("z")})
	check("problems only off", "d")
	typeAll("dead")
	sv.setSort(query.SortAge, app.c)
	check("sorted by age", "dead")
	erase("dead", 0)
}

// The same in a fleet named by UUIDs, where a key is told from another by
// its pairs of hex digits: a name typed and erased, one that crosses a
// dash, and the Pod's index after the name.
func TestTypedFilterRowsAreAWholeMatchByUUID(t *testing.T) {
	snap := uuidSnapshot(2000)
	app := benchApp(&fakeSource{snap: snap})
	sv := app.top().(*sandboxesView)
	_, typeLine := typedFilterChecks(t, app, sv)
	name := snap.Sandboxes()[1000].Name()
	for _, line := range []string{name[:8], name[4:12], name[len(name)-6:] + "-0", "0." + name[:2]} {
		for i := 1; i <= len(line); i++ {
			typeLine(line[:i])
		}
		for i := len(line) - 1; i >= 0; i-- {
			typeLine(line[:i])
		}
	}
}

// typedFilterChecks are check, which fails the test unless the view shows
// the rows a whole-fleet match of line keeps (and the results kept stay
// within their bound), and typeLine, which sets the
// filter to line as the prompt does and checks it.
func typedFilterChecks(t *testing.T, app *App, sv *sandboxesView) (check func(step, line string), typeLine func(line string)) {
	check = func(step, line string) {
		t.Helper()
		f, err := query.ParseFilter(line)
		if err != nil {
			t.Fatalf("%s: %q: %v", step, line, err)
		}
		f.ProblemsOnly = sv.filter.ProblemsOnly
		want := sv.order
		if !f.IsZero() {
			want = f.Apply(sv.rows.sandboxes, sv.rows.keys, sv.order)
		}
		if !slices.Equal(sv.visible, want) {
			t.Fatalf("%s: filter %q shows %d rows, a whole match keeps %d", step, line, len(sv.visible), len(want))
		}
		held := 0
		for _, r := range sv.typed {
			held += len(r.rows)
		}
		if held > maxTypedRows*len(sv.order) && len(sv.typed) > 1 {
			t.Fatalf("%s: filter %q: the results typed hold %d rows, over %d times the %d rows", step, line, held, maxTypedRows, len(sv.order))
		}
	}
	typeLine = func(line string) {
		t.Helper()
		f, err := query.ParseFilter(line)
		if err != nil {
			return // on its way to a filter ("-", "a(b"): the one in force stays
		}
		sv.setFilter(f, app.c)
		_ = app.View()
		check("typed", line)
	}
	return check, typeLine
}

// The same when rows change in place under a filter: status writes through
// a real fleet, which names the rows it replaced, so that each result
// typed is matched again at those rows only. The result shown and those a
// backspace, a retyped key or a cleared filter go back to must all still
// be whole matches.
func TestTypedFilterRowsAreAWholeMatchAcrossStatusWrites(t *testing.T) {
	const ns, n = "team", 300
	f := fleet.New(fleet.Options{Now: fixedNow})
	f.SetStatus(model.SourceStatus{Synced: true})
	name := func(i int) string { return fmt.Sprintf("sbx-%03d", i) }
	ip := func(i int) string { return fmt.Sprintf("10.0.%d.%d", i/250, i%250) }
	for i := range n {
		f.UpsertBatchSandbox(fleetSandbox(ns, name(i), t0, ip(i)))
		f.UpsertPod(model.SlimPod(fleetPod(ns, name(i), "uid-"+name(i), ip(i), t0)))
	}
	src := &fakeSource{snap: f.Snapshot()}
	app := benchApp(src)
	sv := app.top().(*sandboxesView)
	check, typeLine := typedFilterChecks(t, app, sv)
	typeAll := func(line string) {
		t.Helper()
		for i := 1; i <= len(line); i++ {
			typeLine(line[:i])
		}
	}
	erase := func(line string, to int) {
		t.Helper()
		for i := len(line) - 1; i >= to; i-- {
			typeLine(line[:i])
		}
	}
	write := func(line string, i int, dead bool) {
		t.Helper()
		p := fleetPod(ns, name(i), "uid-"+name(i), ip(i), t0)
		if dead {
			p = killed(p)
		}
		f.UpsertPod(model.SlimPod(p))
		src.set(f.Snapshot())
		app.Update(refreshMsg{})
		_ = app.View()
		check(fmt.Sprintf("after %s's Pod was written (dead: %v)", name(i), dead), line)
	}
	typeAll("dead")
	write("dead", 5, true) // rows come into the filter
	write("dead", 17, true)
	erase("dead", 1) // results typed before the writes
	typeAll("dead")
	write("dead", 5, false) // and leave it
	erase("dead", 2)
	typeAll("dead")
	typeLine("") // cleared: the results typed are kept, and must follow too
	write("", 17, false)
	write("", 200, true)
	typeAll("dead")
	typeLine("!running") // inverted
	write("!running", 40, true)
	write("!running", 40, false)
	typeAll("sbx-0(05|17)") // a regular expression, rows changed and matching still
	write("sbx-0(05|17)", 5, true)
	typeAll("sbx-00")
	app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("z")}) // problems only
	check("problems only", "sbx-00")
	write("sbx-00", 7, true)
	write("sbx-00", 5, false)
	app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("z")})
	check("problems only off", "sbx-00")
	typeLine("g") // one byte, matched by the bytes kept per key: "running" has it, "dead" not
	write("g", 9, true)
	write("g", 9, false)
	typeAll("-f sbx05") // fuzzy: ranked, matched whole again
	write("-f sbx05", 5, true)
	sv.setSort(query.SortState, app.c) // a write may move a row
	typeAll("sbx-1")
	write("sbx-1", 150, true)
	write("sbx-1", 150, false)
}
