package ui

import (
	"slices"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
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
	check := func(step, line string) {
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
	}
	typeLine := func(line string) {
		t.Helper()
		f, err := query.ParseFilter(line)
		if err != nil {
			return // on its way to a filter ("-", "a(b"): the one in force stays
		}
		sv.setFilter(f, app.c)
		_ = app.View()
		check("typed", line)
	}
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
