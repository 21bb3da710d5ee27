package query

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
)

func testRows() []*model.Sandbox {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	mk := func(name string, age time.Duration, st model.EffectiveState, id model.IdentityState, restarts int32, lbl map[string]string, notices ...model.Notice) *model.Sandbox {
		return &model.Sandbox{
			Key:   "bsbx/team/" + name,
			Meta:  model.ObjectMeta{Namespace: "team", Name: name, Labels: model.LabelsFrom(lbl)}.WithCreated(t0.Add(-age)),
			State: st, Restarts: restarts,
			Slots:   []model.Slot{{RecordedIP: "10.0.0.1", PodName: name + "-0", Identity: id}},
			Notices: notices,
		}
	}
	return []*model.Sandbox{
		mk("alpha", 3*time.Minute, model.StateRunning, model.IdentityOK, 0, map[string]string{"app": "x"}),
		mk("bravo", 1*time.Minute, model.StateDead, model.IdentityIPTaken, 2, map[string]string{"app": "y"}),
		mk("charlie", 2*time.Minute, model.StateRunning, model.IdentityOK, 5, map[string]string{"app": "x"},
			model.Notice{Code: model.CodeEntrypointNotRun, Severity: model.SeverityWarning}),
		mk("delta", 4*time.Minute, model.StateRunning, model.IdentityOK, 0, nil, model.Notice{Code: model.CodeRestarted, Severity: model.SeverityInfo}),
	}
}

func names(rows []*model.Sandbox, idx []int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, rows[i].Name())
	}
	return out
}

func TestFilterApply(t *testing.T) {
	rows := testRows()
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = RowKey(r)
	}
	tests := []struct {
		in   string
		prob bool
		want []string
	}{
		{"", false, []string{"alpha", "bravo", "charlie", "delta"}},
		{"alph", false, []string{"alpha"}},
		{"chr", false, []string{}},             // no substring anywhere: nothing, never a fuzzy guess
		{"-f chr", false, []string{"charlie"}}, // fuzzy only when asked: c-h-(a)-r
		{"ie", false, []string{"charlie"}},
		{"^bravo|^delta", false, []string{"bravo", "delta"}}, // a regular expression
		{"DEAD|ip_taken", false, []string{"bravo"}},          // case-insensitive, as k9s's (?i)
		{"!^(alpha|bravo)", false, []string{"charlie", "delta"}},
		{"10.0.0.1", false, []string{"alpha", "bravo", "charlie", "delta"}}, // dots alone: literal
		{"Alpha", false, []string{"alpha"}},                                 // case-insensitive
		{"!alph", false, []string{"bravo", "charlie", "delta"}},
		{"!", false, []string{"alpha", "bravo", "charlie", "delta"}},
		{"-l app=x", false, []string{"alpha", "charlie"}},
		{"-l app!=x", false, []string{"bravo", "delta"}},
		{"char -l app=x", false, []string{"charlie"}},
		{"!char -l app=x", false, []string{"alpha"}},
		{"IP_TAKEN", false, []string{"bravo"}},
		{"", true, []string{"bravo", "charlie"}},
		{"!bravo", true, []string{"charlie"}},
		{"zzzz", false, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			f, err := ParseFilter(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			f.ProblemsOnly = tt.prob
			res := f.Apply(rows, keys, nil)
			got := names(rows, res)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("filter %q problems=%v = %v, want %v", tt.in, tt.prob, got, tt.want)
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	for _, in := range []string{"-l", "-l a b", "x -l !!"} {
		if _, err := ParseFilter(in); err == nil {
			t.Errorf("ParseFilter(%q): want error", in)
		}
	}
	f, err := ParseFilter("!web -l app=x")
	if err != nil || !f.Invert || f.Text != "web" || f.Selector.String() != "app=x" {
		t.Fatalf("ParseFilter = %+v, %v", f, err)
	}
	if f.String() != "!web -l app=x" {
		t.Fatalf("String() = %q", f.String())
	}
}

func TestFilterNarrowsWithin(t *testing.T) {
	rows := testRows()
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = RowKey(r)
	}
	prev, _ := ParseFilter("a")
	next, _ := ParseFilter("al")
	if !Narrows(prev, next) {
		t.Fatal("'al' should narrow 'a'")
	}
	if Narrows(next, prev) {
		t.Fatal("'a' does not narrow 'al'")
	}
	inv, _ := ParseFilter("!a")
	if Narrows(prev, inv) || Narrows(inv, next) {
		t.Fatal("inverted filters never narrow")
	}
	alt, _ := ParseFilter("a|b")
	if Narrows(prev, alt) {
		t.Fatal("'a|b' widens 'a': a regular expression never narrows")
	}
	within := prev.Apply(rows, keys, nil)
	got := next.Apply(rows, keys, within)
	want := next.Apply(rows, keys, nil)
	if !slices.Equal(got, want) {
		t.Fatalf("narrowed %v != full %v", got, want)
	}
}

func TestSort(t *testing.T) {
	rows := testRows()
	tests := []struct {
		o    SortOrder
		want []string
	}{
		{SortOrder{Key: SortName}, []string{"alpha", "bravo", "charlie", "delta"}},
		{SortOrder{Key: SortName, Desc: true}, []string{"delta", "charlie", "bravo", "alpha"}},
		{SortOrder{Key: SortAge}, []string{"bravo", "charlie", "alpha", "delta"}},
		{SortOrder{Key: SortState}, []string{"bravo", "alpha", "charlie", "delta"}},
		{SortOrder{Key: SortRestarts}, []string{"charlie", "bravo", "alpha", "delta"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.o.Key), func(t *testing.T) {
			idx := []int{3, 1, 0, 2}
			Sort(rows, idx, tt.o)
			if got := names(rows, idx); !slices.Equal(got, tt.want) {
				t.Fatalf("sort %+v = %v, want %v", tt.o, got, tt.want)
			}
		})
	}
}

// Sorting is total: any input permutation gives the same order, so live
// updates that reorder the snapshot never reshuffle equal rows.
func TestSortIsTotal(t *testing.T) {
	rows := testRows()
	for _, k := range SortKeys {
		a := []int{0, 1, 2, 3}
		b := []int{3, 2, 1, 0}
		Sort(rows, a, SortOrder{Key: k})
		Sort(rows, b, SortOrder{Key: k})
		if !slices.Equal(a, b) {
			t.Fatalf("sort %s depends on input order: %v vs %v", k, a, b)
		}
	}
}

// Rows of two fleets (two cluster contexts) may share a Key: the order is
// still total, the earlier position first, and InOrderAround agrees.
func TestSortTiesOnKeyByPosition(t *testing.T) {
	one, two := testRows(), testRows()
	rows := append(one, two...) // every Key twice
	for _, k := range SortKeys {
		a := []int{7, 6, 5, 4, 3, 2, 1, 0}
		b := []int{0, 4, 1, 5, 2, 6, 3, 7}
		Sort(rows, a, SortOrder{Key: k})
		Sort(rows, b, SortOrder{Key: k})
		if !slices.Equal(a, b) {
			t.Fatalf("sort %s depends on input order: %v vs %v", k, a, b)
		}
		for i := 0; i+1 < len(a); i++ {
			if rows[a[i]].Key == rows[a[i+1]].Key && a[i] > a[i+1] {
				t.Fatalf("sort %s: equal rows %d and %d not in position order: %v", k, a[i], a[i+1], a)
			}
		}
		if !InOrderAround(rows, a, SortOrder{Key: k}, []int{0, 3, 7}) {
			t.Fatalf("sort %s: InOrderAround says a sorted order is not", k)
		}
		swapped := slices.Clone(a)
		for i := 0; i+1 < len(swapped); i++ {
			if rows[swapped[i]].Key == rows[swapped[i+1]].Key {
				swapped[i], swapped[i+1] = swapped[i+1], swapped[i]
				if InOrderAround(rows, swapped, SortOrder{Key: k}, []int{i}) {
					t.Fatalf("sort %s: InOrderAround accepts two equal rows out of position order", k)
				}
				break
			}
		}
	}
}

// InOrderAround agrees with a full sort: after changing one row, it says
// "in order" exactly when sorting again would not move anything.
func TestInOrderAroundAgreesWithSort(t *testing.T) {
	for _, k := range SortKeys {
		for changed := range testRows() {
			for _, restarts := range []int32{0, 1, 5, 100} {
				rows := testRows()
				idx := []int{0, 1, 2, 3}
				o := SortOrder{Key: k}
				Sort(rows, idx, o)
				c, meta := *rows[changed], *rows[changed].Meta // a changed row: new values, never edits
				c.Restarts = restarts
				meta.SetCreated(c.CreatedAt().Add(time.Duration(restarts) * time.Hour))
				c.Meta = &meta
				rows[changed] = &c
				pos := slices.Index(idx, changed)
				resorted := slices.Clone(idx)
				Sort(rows, resorted, o)
				want := slices.Equal(idx, resorted)
				if got := InOrderAround(rows, idx, o, []int{pos}); got != want {
					t.Errorf("sort %s, %s changed to %d restarts: InOrderAround = %v, a sort %s", k, c.Name(), restarts, got, map[bool]string{true: "keeps the order", false: "moves rows"}[want])
				}
			}
		}
	}
}

// A row key is lower-case, non-ASCII included, and appending one leaves
// what the buffer held before it alone (keys are packed into one buffer).
func TestAppendRowKey(t *testing.T) {
	sb := &model.Sandbox{
		Key:   "bsbx/Team/Ärger",
		Meta:  &model.ObjectMeta{Namespace: "Team", Name: "Ärger"},
		State: model.StateRunning,
		Slots: []model.Slot{{RecordedIP: "10.0.0.9", PodName: "Ärger-0", Identity: model.IdentityIPTaken,
			Pod: &model.Pod{Spec: model.PodSpec{NodeName: "Node-A"}}}},
		Notices: []model.Notice{{Code: model.CodeEntrypointNotRun}},
	}
	want := "team/ärger bsbx running ip_taken ärger-0 10.0.0.9 node-a entrypoint_not_run"
	if got := RowKey(sb); got != want {
		t.Fatalf("RowKey = %q, want %q", got, want)
	}
	buf := AppendRowKey([]byte("PREFIX|"), sb)
	if got := string(buf); got != "PREFIX|"+want {
		t.Fatalf("AppendRowKey after a prefix = %q", got)
	}
	ascii := &model.Sandbox{Key: "bsbx/ns/web", Meta: &model.ObjectMeta{Namespace: "ns", Name: "web"}, State: model.StateDead}
	buf = AppendRowKey(buf[:0], ascii)
	if got := string(buf); got != "ns/web bsbx dead unassigned" {
		t.Fatalf("reused buffer: %q", got)
	}
}

// A filter that matched a sandbox matches nothing once that sandbox is
// gone: it never turns into a fuzzy match over the rows left (an id's
// digits, or an IP's, in order in another row).
func TestFilterNeverLoosensWhenItsRowGoes(t *testing.T) {
	mk := func(name, ip string) *model.Sandbox {
		return &model.Sandbox{Key: "bsbx/ns/" + name, Meta: &model.ObjectMeta{Namespace: "ns", Name: name},
			Slots: []model.Slot{{RecordedIP: ip, PodName: name + "-0"}}}
	}
	rows := []*model.Sandbox{mk("code-runner-80e0aa11", "10.0.8.1"), mk("code-runner-8efd263d", "10.0.0.80")}
	keys := []string{RowKey(rows[0]), RowKey(rows[1])}
	f, err := ParseFilter("code-runner-80e0")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rows, f.Apply(rows, keys, nil)); !slices.Equal(got, []string{"code-runner-80e0aa11"}) {
		t.Fatalf("before: %v", got)
	}
	left := rows[1:] // code-runner-80e0aa11 was deleted
	if got := names(left, f.Apply(left, keys[1:], nil)); len(got) != 0 {
		t.Fatalf("the filter matched %v after its sandbox went", got)
	}
}

// A line that only begins an option is not a filter, and a bad regular
// expression is an error, not a literal or an empty filter.
func TestParseFilterIncompleteAndBadRegex(t *testing.T) {
	for _, in := range []string{"-", "-f", "web -"} {
		if _, err := ParseFilter(in); !errors.Is(err, ErrIncomplete) {
			t.Errorf("ParseFilter(%q) = %v, want ErrIncomplete", in, err)
		}
	}
	if _, err := ParseFilter("(agent"); err == nil || errors.Is(err, ErrIncomplete) {
		t.Errorf("ParseFilter(\"(agent\") = %v, want a regular-expression error", err)
	}
}

// "-f text" matches fuzzily only, and fuzzy matches come best first, not
// in the table's sort order.
func TestForcedFuzzyRanksByScore(t *testing.T) {
	rows := testRows()
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = RowKey(r)
	}
	order := []int{0, 1, 2, 3} // alpha, bravo, charlie, delta
	f, err := ParseFilter("-f charl")
	if err != nil || !f.Fuzzy || f.Text != "charl" || f.String() != "-f charl" {
		t.Fatalf("parse: %+v %v", f, err)
	}
	idx := f.Apply(rows, keys, order)
	if len(idx) == 0 || rows[idx[0]].Name() != "charlie" {
		t.Fatalf("-f charl: %v, want charlie first", names(rows, idx))
	}
	// A weak fuzzy match sorts below a strong one whatever the table's order.
	mk := func(name string) *model.Sandbox {
		return &model.Sandbox{Key: "pod/ns/" + name, Meta: &model.ObjectMeta{Namespace: "ns", Name: name}}
	}
	two := []*model.Sandbox{mk("scattered-o-r-d-e-r"), mk("order")}
	twoKeys := []string{RowKey(two[0]), RowKey(two[1])}
	f, _ = ParseFilter("-f order")
	idx = f.Apply(two, twoKeys, []int{0, 1})
	if got := names(two, idx); len(got) != 2 || got[0] != "order" {
		t.Fatalf("-f order: %v, want order first", got)
	}
}

// The name order reversed is exactly the name order backwards, ties on
// namespace/name (the same name under two engines) included.
func TestReversedNameSortReversesTheWholeKey(t *testing.T) {
	mk := func(key string) *model.Sandbox {
		return &model.Sandbox{Key: key, Meta: &model.ObjectMeta{Namespace: "ns", Name: "web"}}
	}
	rows := []*model.Sandbox{mk("agent/ns/web"), mk("bsbx/ns/web"), mk("pod/ns/web")}
	asc, desc := []int{2, 0, 1}, []int{0, 2, 1}
	Sort(rows, asc, SortOrder{Key: SortName})
	Sort(rows, desc, SortOrder{Key: SortName, Desc: true})
	if !slices.Equal(desc, []int{asc[2], asc[1], asc[0]}) {
		t.Fatalf("name %v, reversed %v: not the same order backwards", asc, desc)
	}
	if !InOrderAround(rows, desc, SortOrder{Key: SortName, Desc: true}, []int{0, 1, 2}) {
		t.Fatal("InOrderAround disagrees with the reversed sort")
	}
}

// A claim's name is what an agent-sandbox user holds and reports: the
// filter finds the Sandbox bound to it.
func TestFilterFindsAClaimedSandboxByItsClaim(t *testing.T) {
	claimed := &model.Sandbox{
		Key: "agent/team/pool-x7k2p",
		Meta: &model.ObjectMeta{Namespace: "team", Name: "pool-x7k2p",
			OwnerReferences: []model.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: model.KindSandboxClaim, Name: "alice-notebook"}}},
		State: model.StateRunning,
	}
	rows := append(testRows(), claimed)
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = RowKey(r)
	}
	f, err := ParseFilter("alice-notebook")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rows, f.Apply(rows, keys, nil)); !slices.Equal(got, []string{"pool-x7k2p"}) {
		t.Fatalf("filter by claim name matched %v, want [pool-x7k2p]", got)
	}
}

// ApplyKeys, with each key's bytes beside it, keeps exactly the rows Apply
// does, whatever the pattern: letters and digits (matched by their bit when
// alone), punctuation with a bit of its own and without (absent bytes that
// share a bit with one present: "{" and "#", "&" and "~"), non-ASCII text,
// inverted, regular expressions.
func TestApplyKeysIsApply(t *testing.T) {
	keys := []string{
		"team/alpha running ok alpha-0 10.0.0.1 node-1",
		"team/bravo dead ip-taken bravo-0 10.0.0.2",
		"prod-eu team/charlie_x running ok:1 charlie-0 ::1",
		"team/ünïcode running ok ünïcode-0 10.0.0.4 nœud",
		"",
		"team/delta#3 running ok delta-0 10.0.0.5 n~1",
		// Hex pairs, which the bytes kept per key name too: at the start,
		// across a dash, at the end.
		"c0ffee/9b8e7d6c-5a4b running ok 9b8e7d6c-5a4b-0 10.0.0.6 n3f",
		"c1/08e7d6c9-5a4b running ok 08e7d6c9-5a4b-0 10.0.0.7",
	}
	rows := make([]*model.Sandbox, len(keys)) // text filters read the keys only
	bytes := make([]KeyBytes, len(keys))
	for i, k := range keys {
		bytes[i] = BytesOf(k)
	}
	for _, line := range []string{"a", "z", "1", "5", "-", ".", "/", " ", ":", "_", "#", "~", "{", "&", "<", "!", "ü", "œ", "Ü",
		"al", "ALPHA", "0.0", "10.0.0.", "team/", "::", "#3", "n~", "nœ", "!a", "!#", "q", "alpha-0 10", "a.p", "^d", "ok$",
		"c0", "c1", "9b", "08", "3f", "b-0", "6c-5a", "ee/9", "e7d6", "4b", "0e", "ff", "10.0.0.6 n3f"} {
		f, err := ParseFilter(line)
		if err != nil {
			f = Filter{Text: line} // "-" is an option on its way when typed
		}
		want, got := f.Apply(rows, keys, nil), f.ApplyKeys(rows, keys, bytes, nil)
		if !slices.Equal(got, want) {
			t.Errorf("%q: ApplyKeys keeps %v, Apply %v", line, got, want)
		}
	}
}
