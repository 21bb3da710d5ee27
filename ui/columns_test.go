package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// uuidFleet is a fleet shaped as the demo's: sandboxes named by UUID in two
// namespaces, Pods named after them, one agent Sandbox bound to a claim and
// one whose IP a Pod of another sandbox took (a long IDENTITY cell).
func uuidFleet() *fleet.Snapshot {
	var sbs []*model.Sandbox
	for i := range 12 {
		ns := []string{"eval", "sandboxes"}[i%2]
		name := fmt.Sprintf("%08x-9c91-4e77-890f-3574d666f1%02d", 0x1729c28e+i*0x01000000, i)
		p := pod(ns, name+"-0", "uid-"+name, fmt.Sprintf("10.244.1.%d", 10+i), fmt.Sprintf("sim-node-%d", i%4), corev1.PodRunning, t0.Add(-time.Duration(i)*time.Minute))
		sb := &model.Sandbox{
			Key: "bsbx/" + ns + "/" + name, EnginePhase: "Succeed", State: model.StateRunning,
			Meta:  model.ObjectMeta{Namespace: ns, Name: name}.WithCreated(t0.Add(-time.Duration(i) * time.Minute)),
			Slots: []model.Slot{{RecordedIP: p.Status.PodIP, PodName: p.Name, BoundUID: string(p.UID), Pod: p, Identity: model.IdentityOK}},
		}
		switch i {
		case 1:
			sb.Key = "agent/" + ns + "/" + name
			sb.Meta.OwnerReferences = []model.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: model.KindSandboxClaim, Name: "alice-session"}}
		case 2:
			sb.State = model.StateDead
			sb.Slots[0].Identity = model.IdentityIPTaken
			sb.Slots[0].Holder = &model.Holder{Namespace: "eval", Pod: sbs[0].Slots[0].PodName, Sandbox: sbs[0].Key}
			sb.Notices = []model.Notice{{Code: model.CodeIPTaken, Severity: model.SeverityError}, {Code: model.CodePodDead, Severity: model.SeverityError}}
		case 3:
			sb.Notices = []model.Notice{{Code: model.CodeStuckTerminating, Severity: model.SeverityWarning}}
		}
		sbs = append(sbs, sb)
	}
	slices.SortFunc(sbs, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
	return fleet.NewSnapshot(1, model.SourceStatus{Context: "demo", Synced: true, AsOf: t0}, sbs, nil, nil)
}

// tableColumns are the titles of the sandboxes table's header line in view.
func tableColumns(t *testing.T, view string) []string {
	t.Helper()
	for _, l := range strings.Split(view, "\n") {
		if f := strings.Fields(strings.TrimLeft(l, " ›")); len(f) > 0 && slices.Contains(f, "SANDBOX") {
			return f
		}
	}
	t.Fatalf("no table header in:\n%s", view)
	return nil
}

// Widening the terminal never takes away a column a narrower one showed:
// whole ids are a luxury taken only with the room the columns leave, and
// NAMESPACE stays while the rows are of several namespaces (two sandboxes
// of one name are told apart by it alone).
func TestWiderTerminalNeverShowsFewerColumns(t *testing.T) {
	a := directApp(uuidFleet(), Options{Now: fixedNow}, 80, 30)
	var prev []string
	for w := 80; w <= 220; w++ {
		a.Update(tea.WindowSizeMsg{Width: w, Height: 30})
		v := a.View()
		cols := tableColumns(t, v)
		if !slices.Contains(cols, "NAMESPACE") {
			t.Errorf("width %d: rows of two namespaces and no NAMESPACE column: %v", w, cols)
		}
		for _, c := range prev {
			if !slices.Contains(cols, c) {
				t.Errorf("width %d drops %s, which width %d showed: %v, was %v", w, c, w-1, cols, prev)
			}
		}
		for _, l := range strings.Split(v, "\n") {
			if n := len([]rune(l)); n > w {
				t.Errorf("width %d: a line of %d cells: %q", w, n, l)
			}
		}
		prev = cols
	}
	for _, want := range []string{"NAMESPACE", "SANDBOX", "CLAIM", "ENGINE", "PHASE", "STATE", "IDENTITY", "IP", "POD", "NODE", "RESTARTS", "AGE", "NOTICES"} {
		if !slices.Contains(prev, want) {
			t.Errorf("220 columns lack %s: %v", want, prev)
		}
	}
	if v := a.View(); !strings.Contains(v, "1729c28e-9c91-4e77-890f-3574d666f100") {
		t.Errorf("220 columns, with every column placed, do not show the whole id:\n%s", v)
	}
}

// The events view's columns are as wide as their widest cell: an object
// named by a UUID does not run into the message, and every message starts
// under MESSAGE.
func TestEventsColumnsFitTheirCells(t *testing.T) {
	a := directApp(uuidFleet(), Options{Now: fixedNow}, 160, 30)
	ev := func(kind, name, reason, msg string) corev1.Event {
		e := corev1.Event{Type: "Normal", Reason: reason, Message: msg, Count: 1}
		e.InvolvedObject.Kind, e.InvolvedObject.Name = kind, name
		e.LastTimestamp.Time = t0.Add(-time.Minute)
		return e
	}
	lines := formatEvents([]corev1.Event{
		ev("BatchSandbox", "1dbe3a5c-60bd-46cd-a6cd-7c60f1be910c", "SuccessfulCreate", "Created pod: 1dbe3a5c-60bd-46cd-a6cd-7c60f1be910c-0"),
		ev("Pod", "1dbe3a5c-60bd-46cd-a6cd-7c60f1be910c-0", "FailedCreatePodSandBoxAndThenSome", "Failed to create pod sandbox"),
		ev("Pod", "p", "Pulled", "Container image pulled"),
	}, a.c)
	cell := func(l, sub string) int { // the cell sub starts at in l
		i := strings.Index(l, sub)
		if i < 1 || l[i-1] != ' ' {
			return -1 // not there, or run into the cell before
		}
		return ansi.StringWidth(l[:i])
	}
	at := cell(lines[0], "MESSAGE")
	for i, want := range []string{"Created pod:", "Failed to create", "Container image"} {
		if got := cell(lines[i+1], want); got != at {
			t.Errorf("line %d: message at %d, MESSAGE at %d:\n%s\n%s", i+1, got, at, lines[0], lines[i+1])
		}
	}
	if !strings.Contains(lines[1], "batchsandbox/1dbe3a5c-60bd-46cd-a6cd-7c60f1be910c ") {
		t.Errorf("the object is not whole:\n%s", lines[1])
	}
}

// The header's first line is exactly the terminal's width at every width,
// and ends in its whole badge: the line is fitted by the measure the
// screen cuts lines by, whatever the names in it (an emoji with its
// variation selector, a flag, CJK), so the badge never loses its last
// cell at the edge.
func TestHeaderBadgeWholeAtEveryWidth(t *testing.T) {
	for _, cluster := range []string{"sandscope-demo", "prod-☁️", "🇩🇪-eu-central", "東京-1", "café-e\u0301"} {
		for _, ro := range []bool{false, true} {
			base := uuidFleet()
			st := base.Status
			st.Cluster, st.Demo, st.ReadOnly = cluster, true, ro
			a := directApp(fleet.NewSnapshot(1, st, base.Sandboxes(), nil, nil), Options{Now: fixedNow, Version: "devel"}, 80, 30)
			bad := 0
			for w := 20; w <= 220 && bad < 3; w++ {
				a.Update(tea.WindowSizeMsg{Width: w, Height: 30})
				head := strings.SplitN(a.View(), "\n", 2)[0]
				if got := ansi.StringWidth(head); got != w || !strings.HasSuffix(head, " DEMO") {
					bad++
					r := []rune(head)
					t.Errorf("cluster %q, width %d: the header is %d wide and ends %q", cluster, w, got, string(r[max(0, len(r)-12):]))
				}
			}
		}
	}
}

// A name column that may be cut is cut, down to its floor, before any
// column is dropped: at 80 columns the Pods view showed POD whole (38
// characters), PHASE and DELETING, and nothing else, not even NAMESPACE.
func TestLayoutCutsNamesBeforeDroppingColumns(t *testing.T) {
	cols := []column{{Title: "NS", Drop: 2}, {Title: "POD", Max: 40, Shrink: 14}, {Title: "PHASE"}, {Title: "IP", Drop: 3}, {Title: "AGE", Drop: 8}}
	natural := []int{9, 38, 9, 11, 4}
	keep, widths := layout(cols, natural, 60)
	if !slices.Equal(keep, []int{0, 1, 2, 3, 4}) || widths[1] >= 38 || widths[1] < 14 {
		t.Errorf("60 columns: kept %v widths %v; want every column, POD cut", keep, widths)
	}
	keep, widths = layout(cols, natural, 45)
	if !slices.Contains(keep, 0) || widths[slices.Index(keep, 1)] != 14 {
		t.Errorf("45 columns: kept %v widths %v; want NS kept and POD at its floor of 14 before NS goes", keep, widths)
	}
}

// A UUID cut for a narrow column never ends in one of its hyphens: the
// Pod cell adds "-0" after it, which read "1729c28e-9c91--0".
func TestCutNameNeverEndsInAHyphen(t *testing.T) {
	id := "1729c28e-9c91-4e77-890f-3574d666f10f"
	for n := 1; n < len(id); n++ {
		if got := cutName(id, n); strings.HasSuffix(got, "-") || !strings.HasPrefix(id, got) || len(got) < n-1 {
			t.Errorf("cutName(%d) = %q", n, got)
		}
	}
	if got := cutName("warm-python-59mgh", 10); got != "warm-pytho…" {
		t.Errorf("a name that is no UUID: %q", got)
	}
}
