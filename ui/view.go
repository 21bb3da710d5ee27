package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model"
)

// shared is the context every view reads: the current snapshot, the clock,
// keys, styles, options and the backend. Only the root model writes it.
type shared struct {
	snap     *model.Snapshot
	now      func() time.Time
	keys     KeyMap
	st       styles
	opts     Options
	be       Backend
	nsScope  string // ":ns NAME" applied locally ("" = every namespace in the snapshot)
	nextID   int
	selected *model.Sandbox // the sandbox under the cursor of the sandboxes view
	// ageChange is when the first of the ages drawn in the last frame reads
	// differently (zero: none drawn): until then, the clock alone changes
	// nothing on the screen.
	ageChange time.Time
}

// drawAge is age for a frame being rendered: it notes when the text
// changes. Every age drawn at render time must come through here, or the
// clock would leave it standing (see App.View).
func (c *shared) drawAge(now, t time.Time) string {
	if next := ageChanges(now, t); !next.IsZero() && (c.ageChange.IsZero() || next.Before(c.ageChange)) {
		c.ageChange = next
	}
	return age(now, t)
}

func (c *shared) newID() int { c.nextID++; return c.nextID }

func (c *shared) disconnected() bool {
	return c.snap != nil && c.snap.Status.DisconnectedSince != nil
}

// view is one screen of the stack. Views are pointers mutated in place by
// update; replies from async work carry the view's id and a generation so a
// view that was left (or refetched) ignores late answers.
type view interface {
	id() int
	name() string // title line text
	update(msg tea.Msg, c *shared) tea.Cmd
	render(c *shared, width, height int) string
	shortHelp(c *shared) []key.Binding
	fullHelp(c *shared) [][]key.Binding
	// snapshotChanged is called when a newer snapshot was taken.
	snapshotChanged(c *shared)
	// close releases what the view holds (log streams).
	close()
}

// filterable views accept "/" filters and ":sb /text".
type filterable interface {
	setFilter(f model.Filter, c *shared)
	currentFilter() model.Filter
}

// sortable views accept shift-letter sorts.
type sortable interface {
	setSort(k model.SortKey, c *shared)
}

// selecter views have a current sandbox (for d, y, l, e, s, x, ctrl-d).
type selecter interface {
	selectedSandbox(c *shared) *model.Sandbox
}

// asyncMsg is the envelope of every reply from a tea.Cmd: who asked, and when.
type asyncMsg struct {
	view int
	gen  int
	body any
}
