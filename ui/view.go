package ui

import (
	"errors"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/query"
)

// shared is the context every view reads: the current snapshot, the clock,
// keys, styles, options and the backend. Only the root model writes it.
type shared struct {
	// fleets are the contexts in view with their snapshots: one, with no
	// context name, for a plain Source; snap is the first one's.
	fleets  []Fleet
	snap    *fleet.Snapshot
	now     func() time.Time
	keys    KeyMap
	st      styles
	opts    Options
	be      Backend
	nsScope string // ":ns NAME" applied locally ("" = every namespace in the snapshot)
	nextID  int
	// ageChange is when the first of the ages drawn in the last frame reads
	// differently (zero: none drawn): until then, the clock alone changes
	// nothing on the screen.
	ageChange time.Time
	// messages are the messages shown in the footer or a view's status,
	// oldest first, kept whole for :messages.
	messages []message
	// forwards are the open port-forwards, oldest first (:pf).
	forwards []ForwardInfo
}

// message is one message, kept whole for :messages: the footer cuts a long
// refusal at the terminal's width and drops it after a while.
type message struct {
	at       time.Time
	text     string
	isErr    bool
	evidence []string
}

// evidenced is an error that carries evidence lines (exec's refusal.Error).
type evidenced interface{ EvidenceLines() []string }

// maxMessages bounds the message log.
const maxMessages = 200

func (c *shared) logMessage(text string, isErr bool, evidence []string) {
	if text == "" {
		return
	}
	if len(c.messages) == maxMessages {
		c.messages = append(c.messages[:0], c.messages[1:]...)
	}
	c.messages = append(c.messages, message{at: c.now(), text: text, isErr: isErr, evidence: evidence})
}

// logError logs err as errText shows it, with its evidence if it has any.
func (c *shared) logError(err error) {
	var lines []string
	var ev evidenced
	if errors.As(err, &ev) {
		lines = ev.EvidenceLines()
	}
	c.logMessage(errText(err), true, lines)
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

// disconnected: the one context in view lost its API server. With several,
// each has its own state (discOf).
func (c *shared) disconnected() bool {
	return !c.multi() && discOf(c.snap)
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

// replier views start async work (a stream, a read) and take its tagged
// replies: the App hands each asyncMsg to the view whose id it carries, and
// the view drops a reply of an older generation itself.
type replier interface {
	onAsync(msg asyncMsg, c *shared) tea.Cmd
}

// chooser views act on Enter themselves (open a command, switch to a
// namespace or context) instead of opening the detail of a sandbox.
type chooser interface {
	choose(a *App) tea.Cmd
}

// keyOwner views handle some keys before the App's: ok says the key was
// theirs.
type keyOwner interface {
	ownKey(msg tea.KeyMsg, a *App) (cmd tea.Cmd, ok bool)
}

// searchable views take "/" as a search of their text, not a row filter.
type searchable interface {
	searchText() string
	setSearch(q string)
}

// filterable views accept "/" filters and ":sb /text".
type filterable interface {
	setFilter(f query.Filter, c *shared)
	currentFilter() query.Filter
}

// selecter views have a current sandbox (for d, y, l, e, s, x, ctrl-d).
type selecter interface {
	selectedSandbox(c *shared) pick
}

// asyncMsg is the envelope of every reply from a tea.Cmd: who asked, and when.
type asyncMsg struct {
	view int
	gen  int
	body any
}
