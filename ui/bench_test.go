package ui

import (
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
)

// BenchmarkFilterKeystroke measures keystroke-to-frame in process: one
// Update for a key typed into the "/" filter plus the View that follows.
// narrow: a character added to an existing pattern (the common case);
// first: the first character of a fresh filter (a whole-fleet search);
// erase: a backspace, the pattern shorter than the one before (typed a
// moment ago, so its result may be at hand).
// Target: < 16 ms at 150,000 rows.
func BenchmarkFilterKeystroke(b *testing.B) {
	for _, n := range []int{1000, 50000, 150000} {
		for _, tc := range []struct {
			name, before, key string
		}{{"narrow", "sandbox-00", "1"}, {"first", "", "s"}, {"erase", "sandbox-001", "backspace"}} {
			b.Run(fmt.Sprintf("rows=%d/%s", n, tc.name), func(b *testing.B) {
				app := benchApp(&fakeSource{snap: bigSnapshot(n)})
				// The first frame ranks the namespace favorites, a pass
				// over the fleet that no keystroke repeats: drawn here, it
				// is not timed as the first iteration's keystroke.
				_ = app.View()
				app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
				sv := app.top().(*sandboxesView)
				filter := app.dialog.(*prompt)
				key := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(tc.key)}
				if tc.key == "backspace" {
					key = tea.KeyMsg{Type: tea.KeyBackspace}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					// As typed: every prefix of the pattern in turn.
					for k := range len(tc.before) + 1 {
						f, _ := query.ParseFilter(tc.before[:k])
						sv.setFilter(f, app.c)
					}
					filter.input.SetValue(tc.before)
					filter.input.CursorEnd()
					filter.last = tc.before // else the prompt takes the edit for one it saw
					if tc.before == "" {
						sv.typed = nil // a fresh search: no result of it at hand
					}
					b.StartTimer()
					app.Update(key)
					_ = app.View()
				}
				b.StopTimer()
				if len(sv.visible) == 0 {
					b.Fatal("filter matched nothing")
				}
			})
		}
	}
}

// BenchmarkFilterTyping replays the generator benchmark's typing
// (test/bench filterLatency) on 150,000 rows named by UUIDs, as the
// generator names them: five rounds of typing eight characters of a name
// and erasing them, each key timed with its frame, on a fresh view each
// iteration. It reports the keys' p95 and max; ns/op is the 80 keys.
func BenchmarkFilterTyping(b *testing.B) {
	const n = 150000
	snap := uuidSnapshot(n)
	target := snap.Sandboxes()[n/2].Name()[:8]
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		app := benchApp(&fakeSource{snap: snap})
		_ = app.View()
		b.StartTimer()
		for range 5 {
			app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
			keys := make([]tea.KeyMsg, 0, 2*len(target))
			for _, r := range target {
				keys = append(keys, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
			}
			for range target {
				keys = append(keys, tea.KeyMsg{Type: tea.KeyBackspace})
			}
			for _, k := range keys {
				t := time.Now()
				app.Update(k)
				_ = app.View()
				lat = append(lat, time.Since(t))
			}
			app.Update(tea.KeyMsg{Type: tea.KeyEsc})
			_ = app.View()
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[(len(lat)*95+99)/100-1].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// uuidSnapshot has n running sandboxes in one namespace, named by UUIDs
// (random, from a fixed seed), each with its Pod on one of 50 nodes.
func uuidSnapshot(n int) *fleet.Snapshot {
	r := rand.New(rand.NewSource(1))
	sbs := make([]*model.Sandbox, n)
	for i := range sbs {
		var u [16]byte
		r.Read(u[:])
		name := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
		p := pod("bench", name+"-0", "uid-"+name, "", fmt.Sprintf("node-%d", i%50), "Running", t0)
		sbs[i] = &model.Sandbox{
			Key:         "bsbx/bench/" + name,
			Meta:        model.ObjectMeta{Namespace: "bench", Name: name}.WithCreated(t0.Add(-time.Duration(i) * time.Second)),
			EnginePhase: "Succeed", State: model.StateRunning,
			Slots: []model.Slot{{RecordedIP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), PodName: name + "-0", Pod: p,
				Identity: model.IdentityOK}},
		}
	}
	slices.SortFunc(sbs, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
	return fleet.NewSnapshot(1, model.SourceStatus{Context: "bench", Synced: true, AsOf: t0}, sbs, nil, nil)
}

// BenchmarkLiveUpdate measures taking a new snapshot version in which 1% of
// the sandboxes changed (row cache reuse, resort, refilter) plus one frame.
func BenchmarkLiveUpdate(b *testing.B) {
	for _, n := range []int{1000, 50000, 150000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			src := &fakeSource{snap: bigSnapshot(n)}
			app := benchApp(src)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				prev := src.snap
				sbs := append([]*model.Sandbox(nil), prev.Sandboxes()...)
				for j := i % 100; j < n; j += 100 {
					c := *sbs[j]
					c.Restarts++
					sbs[j] = &c
				}
				src.snap = fleet.NewSnapshot(prev.Version+1, prev.Status, sbs, nil, nil)
				b.StartTimer()
				app.Update(refreshMsg{})
				_ = app.View()
			}
		})
	}
}

// BenchmarkFleetUpdate is a live refresh as the fleet drives it: a few Pod
// status writes (at 100 writes/s and a 16 ms redraw period, about two per
// refresh) through a real fleet.Fleet, then the refresh and one frame. The
// fleet names the replaced rows, so the cost should not grow with the fleet;
// BenchmarkLiveUpdate is the same work when every row must be compared.
// "filtered/": the same with a filter typed ("sbx-1", a character at a
// time), which the replaced rows must be matched against. "by-restarts/":
// sorted by restarts, which every write changes, so the written rows leave
// their places.
func BenchmarkFleetUpdate(b *testing.B) {
	for _, c := range []struct{ prefix, filter, sort string }{{"", "", ""}, {"filtered/", "sbx-1", ""}, {"by-restarts/", "", "R"}} {
		for _, n := range []int{1000, 50000, 150000} {
			b.Run(fmt.Sprintf("%srows=%d", c.prefix, n), func(b *testing.B) { benchFleetUpdate(b, n, c.filter, c.sort) })
		}
	}
}

// benchFleetApp is the TUI over fleet f with filter typed a character at a
// time and sortKey pressed (none when ""), its first frame drawn: where a
// refresh benchmark starts. src hands the App the fleet's snapshots.
func benchFleetApp(f *fleet.Fleet, filter, sortKey string) (*App, *fakeSource) {
	src := &fakeSource{snap: f.Snapshot()}
	app := benchApp(src)
	sv := app.top().(*sandboxesView)
	for k := range len(filter) {
		fl, _ := query.ParseFilter(filter[:k+1])
		sv.setFilter(fl, app.c)
	}
	if sortKey != "" {
		app.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(sortKey)})
	}
	_ = app.View() // the first frame's ranking of the favorites, as above
	return app, src
}

func benchFleetUpdate(b *testing.B, n int, filter, sortKey string) {
	const ns, perRefresh = "bench", 2
	at := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	name := func(i int) string { return fmt.Sprintf("sbx-%05d", i) }
	ip := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255) }
	f := fleet.New(fleet.Options{Now: func() time.Time { return at }})
	f.SetStatus(model.SourceStatus{Synced: true})
	pods := make([]*model.Pod, n)
	restarted := make([]*model.Pod, n)
	for i := range n {
		f.UpsertBatchSandbox(fleetSandbox(ns, name(i), at, ip(i)))
		p := fleetPod(ns, name(i), "uid-"+name(i), ip(i), at)
		pods[i] = model.SlimPod(p)
		p.Status.ContainerStatuses[0].RestartCount = 1
		restarted[i] = model.SlimPod(p)
		f.UpsertPod(pods[i])
	}
	app, src := benchFleetApp(f, filter, sortKey)
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		for k := range perRefresh {
			i := (it*perRefresh + k) * 7919 % n
			if it/n%2 == 0 {
				f.UpsertPod(restarted[i])
			} else {
				f.UpsertPod(pods[i])
			}
		}
		src.set(f.Snapshot())
		b.StartTimer()
		app.Update(refreshMsg{})
		_ = app.View()
	}
}

// BenchmarkFleetChurn is a live refresh in which the fleet gained one
// sandbox and lost another (creates and deletes at an engine's pace, a few
// a second, land one or two to a refresh), then one frame. The new row has
// to find its place in the sort order and the gone one to leave it; the
// fleet's size stays the same. "filtered/" as in BenchmarkFleetUpdate.
func BenchmarkFleetChurn(b *testing.B) {
	for _, c := range []struct{ prefix, filter string }{{"", ""}, {"filtered/", "sbx-1"}} {
		for _, n := range []int{1000, 50000, 150000} {
			for _, sort := range []string{"N", "S"} {
				b.Run(fmt.Sprintf("%srows=%d/sort=%s", c.prefix, n, sort), func(b *testing.B) { benchFleetChurn(b, n, c.filter, sort) })
			}
		}
	}
}

func benchFleetChurn(b *testing.B, n int, filter, sortKey string) {
	const ns = "bench"
	at := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	name := func(i int) string { return fmt.Sprintf("sbx-%07d", i*7919%(4*n)) } // new names land anywhere in the order
	ip := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255) }
	f := fleet.New(fleet.Options{Now: func() time.Time { return at }})
	f.SetStatus(model.SourceStatus{Synced: true})
	pods := map[int]*model.Pod{}
	add := func(i int) {
		f.UpsertBatchSandbox(fleetSandbox(ns, name(i), at, ip(i)))
		pods[i] = model.SlimPod(fleetPod(ns, name(i), "uid-"+name(i), ip(i), at))
		f.UpsertPod(pods[i])
	}
	remove := func(i int) {
		f.DeleteBatchSandbox(ns, name(i))
		f.DeletePod(pods[i])
		delete(pods, i)
	}
	for i := range n {
		add(i)
	}
	app, src := benchFleetApp(f, filter, sortKey)
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		add(n + it)
		remove(it)
		src.set(f.Snapshot())
		b.StartTimer()
		app.Update(refreshMsg{})
		_ = app.View()
	}
}

// BenchmarkViewMemory is the heap the TUI keeps per sandbox on top of the
// snapshot it shows, once the sandboxes view is built and drawn: its rows,
// column widths, sort order and filter result. At 50,000 sandboxes every
// byte here is 50 KB of the process.
func BenchmarkViewMemory(b *testing.B) {
	const n = 50000
	snap := bigSnapshot(n)
	var perRow float64
	for range b.N {
		before := liveHeap()
		app := benchApp(&fakeSource{snap: snap})
		_ = app.View()
		perRow = float64(int64(liveHeap())-int64(before)) / n
		runtime.KeepAlive(app)
	}
	b.ReportMetric(perRow, "heapB/row")
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTextViewLayout is the cost of laying out a full log view (the
// most lines it keeps, every one longer than the screen is wide) once:
// plain, wrapped, and with a search that matches one line in ten.
func BenchmarkTextViewLayout(b *testing.B) {
	lines := make([]string, maxLogLines)
	for i := range lines {
		lines[i] = fmt.Sprintf("2026-11-30T16:40:%02d.000Z worker %05d: %s", i%60, i, strings.Repeat("payload ", 40))
	}
	for _, c := range []struct {
		name   string
		wrap   bool
		search string
	}{{"plain", false, ""}, {"wrap", true, ""}, {"search", false, "0: "}} {
		b.Run(c.name, func(b *testing.B) {
			v := &textView{kind: kindLogs, lines: lines, wrap: c.wrap, search: c.search, vp: viewport.New(120, 40)}
			v.findMatches()
			b.ReportAllocs()
			for b.Loop() {
				v.layout()
			}
		})
	}
}

// BenchmarkViewMemoryContexts is BenchmarkViewMemory over two contexts of
// 25,000 sandboxes each: a row of several contexts costs what a row of one
// does, plus its filter key's context prefix.
func BenchmarkViewMemoryContexts(b *testing.B) {
	const n = 50000
	one, two := bigSnapshot(n/2), bigSnapshot(n/2)
	src := &fakeFleets{fleets: []Fleet{{Context: "east", Snap: one}, {Context: "west", Snap: two}}}
	var perRow float64
	for range b.N {
		before := liveHeap()
		app := benchApp(src)
		_ = app.View()
		perRow = float64(int64(liveHeap())-int64(before)) / n
		runtime.KeepAlive(app)
	}
	b.ReportMetric(perRow, "heapB/row")
}

// benchApp is an App over src in a 160×50 terminal, driven by direct
// Update and View calls rather than a running program.
func benchApp(src Source) *App {
	app := New(src, Backend{}, Options{Now: fixedNow}, DefaultKeyMap())
	app.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	return app
}

// BenchmarkStatusRefresh is what an idle TUI does on each freshness probe:
// one fleet's status moves on (AsOf), its sandboxes do not; the refresh
// and the frame that follows. One context of 150,000 sandboxes, and ten
// contexts of 10,000 (ten probes every 2 s). It should not grow with the
// fleet.
func BenchmarkStatusRefresh(b *testing.B) {
	const ns = "bench"
	at := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	for _, c := range []struct{ contexts, n int }{{1, 150000}, {10, 10000}} {
		b.Run(fmt.Sprintf("contexts=%d/rows=%d", c.contexts, c.n), func(b *testing.B) {
			fleets := make([]*fleet.Fleet, c.contexts)
			src := &fakeFleets{}
			for k := range fleets {
				f := fleet.New(fleet.Options{Now: func() time.Time { return at }})
				f.SetStatus(model.SourceStatus{Synced: true, AsOf: at})
				for i := range c.n {
					name, ip := fmt.Sprintf("sbx-%06d", i), fmt.Sprintf("10.%d.%d.%d", k, (i>>8)&255, i&255)
					f.UpsertBatchSandbox(fleetSandbox(ns, name, at, ip))
					f.UpsertPod(model.SlimPod(fleetPod(ns, name, "uid-"+name, ip, at)))
				}
				fleets[k] = f
				src.fleets = append(src.fleets, Fleet{Context: fmt.Sprintf("ctx%02d", k), Snap: f.Snapshot()})
			}
			var app *App
			if c.contexts == 1 {
				app = benchApp(&fakeSource{snap: src.fleets[0].Snap})
			} else {
				app = benchApp(src)
			}
			_ = app.View()
			b.ReportAllocs()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				k := it % c.contexts
				fleets[k].SetStatus(model.SourceStatus{Synced: true, AsOf: at.Add(time.Duration(it+1) * time.Second)})
				snap := fleets[k].Snapshot()
				if c.contexts == 1 {
					app.src.(*fakeSource).set(snap)
				} else {
					fs := slices.Clone(src.fleets)
					fs[k].Snap = snap
					src.fleets = fs
				}
				b.StartTimer()
				app.Update(refreshMsg{})
				_ = app.View()
			}
		})
	}
}
