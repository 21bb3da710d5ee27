package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// execdPort is the port `F` offers first: OpenSandbox's execd.
const execdPort = 44772

// ForwardInfo is an open port-forward as the Backend reports it.
type ForwardInfo struct {
	// LocalAddr is 127.0.0.1:PORT; it names the forward for StopForward.
	LocalAddr                    string
	Namespace, Sandbox, Pod, UID string
	RemotePort                   int
	Since                        time.Time
	// Done is closed when the forward has ended: stopped, or closed by the
	// backend because its Pod is no longer the one checked (re-created,
	// deleted, its address taken).
	Done <-chan struct{}
	// Err says why the forward ended on its own; nil after StopForward.
	Err func() error
}

// Messages of port-forwarding.
type (
	forwardOpened struct{ info ForwardInfo }
	forwardEnded  struct {
		info ForwardInfo
		err  error
	}
)

// forwardsView is the :pf list. Its rows are forwards, not sandboxes, so
// ctrl+d stops the forward under the cursor and never deletes a sandbox.
type forwardsView struct{ *listView }

var forwardCols = []column{
	{Title: "LOCAL", Max: 21},
	{Title: "SANDBOX", Max: 40},
	{Title: "POD", Drop: 2, Max: 40},
	{Title: "UID", Drop: 1, Max: 36},
	{Title: "PORT", Right: true},
	{Title: "AGE", Drop: 3, Right: true},
}

func newForwardsView(c *shared) *forwardsView {
	v := &listView{vid: c.newID(), title: "Port-forwards", base: forwardCols, ageCol: 5, build: buildForwardRows,
		nameCol: 1, stateCol: -1, restartsCol: -1, noSandbox: true}
	v.snapshotChanged(c)
	return &forwardsView{v}
}

func buildForwardRows(c *shared) []listRow {
	rows := make([]listRow, 0, len(c.forwards))
	for _, f := range c.forwards {
		r := listRow{created: f.Since}
		r.cells = []string{f.LocalAddr, f.Namespace + "/" + f.Sandbox, textsafe.OrDash(f.Pod), textsafe.OrDash(f.UID), strconv.Itoa(f.RemotePort), ""}
		r.fkey = strings.ToLower(strings.Join(r.cells[:5], " "))
		rows = append(rows, r)
	}
	return rows
}

// forwardsFollower views show the port-forwards, and are told when one
// opens or ends.
type forwardsFollower interface {
	forwardsChanged(c *shared)
}

// forwardsChanged shows the forwards as they are now.
func (v *forwardsView) forwardsChanged(c *shared) {
	v.built = false
	v.snapshotChanged(c)
}

// ownKey implements keyOwner: in :pf the delete key stops the forward
// under the cursor.
func (v *forwardsView) ownKey(msg tea.KeyMsg, a *App) (tea.Cmd, bool) {
	if !key.Matches(msg, a.gated["delete"]) {
		return nil, false
	}
	if addr := v.selectedForward(); addr != "" {
		a.dialog = newStopForwardConfirm(addr)
	}
	return nil, true
}

// selectedForward is the local address of the row under the cursor.
func (v *forwardsView) selectedForward() string { return v.firstCell() }

func (v *forwardsView) shortHelp(c *shared) []key.Binding {
	k := c.keys
	return []key.Binding{stopForwardBinding(c), k.Filter, k.Command, k.Back, k.Help, k.Quit}
}

func (v *forwardsView) fullHelp(c *shared) [][]key.Binding {
	k := c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {stopForwardBinding(c)},
		{k.Filter, k.Command, k.Back, k.Help, k.Quit}}
}

// stopForwardBinding is the delete key as configured, meaning "stop" here;
// it works even where deleting sandboxes is not offered.
func stopForwardBinding(c *shared) key.Binding {
	b := key.NewBinding(key.WithKeys(c.keys.Delete.Keys()...))
	b.SetHelp(c.keys.Delete.Help().Key, "stop forward")
	return b
}

// parsePorts reads the port prompt: REMOTE, or LOCAL:REMOTE (LOCAL 0 or
// empty: a free port).
func parsePorts(s string) (local, remote int, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, execdPort, nil
	}
	l, r, both := strings.Cut(s, ":")
	if !both {
		l, r = "", s
	}
	if remote, err = strconv.Atoi(r); err != nil || remote < 1 || remote > 65535 {
		return 0, 0, fmt.Errorf("%q is not a port (1-65535); type PORT or LOCAL:PORT", r)
	}
	if l != "" {
		if local, err = strconv.Atoi(l); err != nil || local < 0 || local > 65535 {
			return 0, 0, fmt.Errorf("%q is not a local port (0-65535, 0: a free one)", l)
		}
	}
	return local, remote, nil
}

// startForward asks the backend for the forward; the check and the tunnel
// run in the command, never in Update.
func (a *App) startForward(target pick, local, remote int) tea.Cmd {
	fwd := a.c.backendFor(target.ctx).Forward
	sb, name := target.sb, target.label()
	a.setFlash(fmt.Sprintf("port-forward %s:%d: checking the Pod…", name, remote), false)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		info, err := fwd(ctx, sb, local, remote)
		if err != nil {
			return actionDone{err: fmt.Errorf("port-forward %s:%d: %w", name, remote, err)}
		}
		return forwardOpened{info}
	}
}

func (a *App) onForwardOpened(info ForwardInfo) tea.Cmd {
	a.c.forwards = append(a.c.forwards, info)
	a.setFlash(fmt.Sprintf("forwarding %s → %s/%s:%d (pod %s, :pf lists forwards)", info.LocalAddr, info.Namespace, info.Sandbox,
		info.RemotePort, info.Pod), false)
	a.rebuildForwards()
	return waitForward(info)
}

// waitForward reports the forward's end, whoever ended it.
func waitForward(info ForwardInfo) tea.Cmd {
	return func() tea.Msg {
		<-info.Done
		var err error
		if info.Err != nil {
			err = info.Err()
		}
		return forwardEnded{info: info, err: err}
	}
}

func (a *App) onForwardEnded(msg forwardEnded) {
	kept := a.c.forwards[:0]
	for _, f := range a.c.forwards {
		if f.LocalAddr != msg.info.LocalAddr {
			kept = append(kept, f)
		}
	}
	a.c.forwards = kept
	a.rebuildForwards()
	what := fmt.Sprintf("port-forward %s → %s/%s:%d", msg.info.LocalAddr, msg.info.Namespace, msg.info.Sandbox, msg.info.RemotePort)
	if msg.err != nil {
		a.flashErr(fmt.Errorf("%s closed: %w", what, msg.err))
		return
	}
	a.setFlash(what+" stopped", false)
}

func (a *App) rebuildForwards() {
	for _, v := range a.stack {
		if fv, ok := v.(forwardsFollower); ok {
			fv.forwardsChanged(a.c)
		}
	}
}

// stopForward stops one forward; its end arrives through waitForward.
func (a *App) stopForward(addr string) tea.Cmd {
	stop := a.c.be.StopForward
	if stop == nil {
		return nil
	}
	return func() tea.Msg {
		if err := stop(addr); err != nil {
			return actionDone{err: fmt.Errorf("stop port-forward %s: %w", addr, err)}
		}
		return nil
	}
}

// stopAllForwards closes every forward (on quit): they belong to this UI.
func (a *App) stopAllForwards() tea.Cmd {
	stop := a.c.be.StopForward
	if stop == nil || len(a.c.forwards) == 0 {
		return nil
	}
	addrs := make([]string, len(a.c.forwards))
	for i, f := range a.c.forwards {
		addrs[i] = f.LocalAddr
	}
	return func() tea.Msg {
		for _, addr := range addrs {
			_ = stop(addr) // best effort: the program is ending
		}
		return nil
	}
}
