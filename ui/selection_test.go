package ui

import (
	"context"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// lookalikes is a fleet of sandboxes whose ids share prefixes and digits,
// as generated names do: code-runner-80e0… and code-runner-8efd263d,
// agent-9122… and agent-9fff6642 (whose Pod is dead).
func lookalikes(without ...string) *fleet.Snapshot {
	mk := func(name, ip, node string, phase corev1.PodPhase) *model.Sandbox {
		p := pod("fleet", name+"-0", "pod-uid-"+name, ip, node, phase, t0.Add(-time.Hour))
		state, id := model.StateRunning, model.IdentityOK
		if phase == corev1.PodFailed {
			state, id = model.StateDead, model.IdentityPodDead
		}
		return &model.Sandbox{
			Key: "bsbx/fleet/" + name, EnginePhase: "Succeed", State: state,
			Meta:  model.ObjectMeta{Namespace: "fleet", Name: name, UID: types.UID("uid-" + name)}.WithCreated(t0.Add(-time.Hour)),
			Slots: []model.Slot{{RecordedIP: ip, PodName: name + "-0", BoundUID: string(p.UID), Pod: p, Identity: id}},
		}
	}
	all := []*model.Sandbox{
		mk("agent-91220c4e", "10.244.0.12", "worker-0e0", corev1.PodRunning),
		mk("agent-9fff6642", "10.244.9.122", "worker-0e0", corev1.PodFailed),
		mk("code-runner-80e0aa11", "10.244.8.10", "worker-0e0", corev1.PodRunning),
		mk("code-runner-8efd263d", "10.244.0.80", "worker-0e0", corev1.PodRunning),
	}
	all = slices.DeleteFunc(all, func(sb *model.Sandbox) bool { return slices.Contains(without, sb.Name()) })
	return fleet.NewSnapshot(uint64(10-len(all)), model.SourceStatus{Context: "kind", Synced: true, AsOf: t0}, all, nil, nil)
}

// actionLog records what the backend was asked to act on.
type actionLog struct {
	mu   sync.Mutex
	acts []string
}

func (l *actionLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acts = append(l.acts, s)
}

func (l *actionLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.acts)
}

func recordingBackend(log *actionLog) Backend {
	return Backend{
		Delete: func(_ context.Context, sb *model.Sandbox) error { log.add("delete " + sb.Name()); return nil },
		Exec: func(_ context.Context, sb *model.Sandbox, cmd []string, out io.Writer) (int, error) {
			log.add("exec " + sb.Name() + " " + strings.Join(cmd, " "))
			_, _ = io.WriteString(out, "ok\n")
			return 0, nil
		},
	}
}

// Filtered to one sandbox and acted on it: deleted it, or exec'd into it
// and it went while the output was open. When it goes, the filter keeps
// its meaning (no fuzzy match of what is left: the lookalike matched the
// filter fuzzily before), the cursor is on nothing, and the same key again
// acts on no other sandbox.
func TestActedOnFilteredRowNeverHandsItsCursorOn(t *testing.T) {
	type step struct {
		keys []string
		want string // on screen after the keys
	}
	for _, tc := range []struct {
		name, filter, target, lookalike string
		key                             string
		act                             []step // after key, before the sandbox goes
		back                            []string
		refused                         string // what the key again must not open
		acted                           string // the backend's one action
	}{
		{name: "deleted", filter: "code-runner-80e0", target: "code-runner-80e0aa11", lookalike: "code-runner-8efd263d", key: "ctrl+d",
			act: []step{
				{nil, "Delete bsbx fleet/code-runner-80e0aa11?"},
				{[]string{"y"}, "delete requested for fleet/code-runner-80e0aa11"},
			},
			refused: "Delete bsbx", acted: "delete code-runner-80e0aa11"},
		{name: "exec output open", filter: "agent-9122", target: "agent-91220c4e", lookalike: "agent-9fff6642", key: "x",
			act: []step{
				{nil, "exec fleet/agent-91220c4e>"},
				{[]string{"ls", "enter"}, "Exec fleet/agent-91220c4e: ls"},
			},
			back:    []string{"esc"},
			refused: "exec fleet/agent-9fff6642", acted: "exec agent-91220c4e ls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &actionLog{}
			src := &fakeSource{snap: lookalikes()}
			app, tm := newTestApp(t, src, recordingBackend(log), Options{})
			screenContains(t, tm, app, "Sandboxes [4/4]")
			keys(tm, "/", tc.filter, "enter")
			screenContains(t, tm, app, "Sandboxes [1/4]")
			keys(tm, tc.key)
			for _, st := range tc.act {
				keys(tm, st.keys...)
				screenContains(t, tm, app, st.want)
			}

			src.set(lookalikes(tc.target)) // the API server removed it
			if len(tc.back) > 0 {
				time.Sleep(50 * time.Millisecond)
				keys(tm, tc.back...)
			}
			s := screenContains(t, tm, app, "Sandboxes [0/3]")
			if strings.Contains(s, "fuzzy") || strings.Contains(s, tc.lookalike) {
				t.Fatalf("the filter changed its meaning when its sandbox went:\n%s", s)
			}
			if !strings.Contains(s, tc.target+" left the view") {
				t.Fatalf("the cursor's gap is not marked:\n%s", s)
			}
			keys(tm, tc.key)
			s = screenContains(t, tm, app, "no sandbox under the cursor")
			if strings.Contains(s, tc.refused) {
				t.Fatalf("%s acted on another sandbox:\n%s", tc.key, s)
			}
			if got := log.list(); !slices.Equal(got, []string{tc.acted}) {
				t.Fatalf("the backend acted on %v", got)
			}
		})
	}
}

// Without a filter too: the row under the cursor goes, the cursor stays on
// a marked gap, and only a move puts it on a sandbox again.
func TestCursorStaysOnTheGapUntilMoved(t *testing.T) {
	log := &actionLog{}
	src := &fakeSource{snap: lookalikes()}
	app, tm := newTestApp(t, src, recordingBackend(log), Options{})
	screenContains(t, tm, app, "Sandboxes [4/4]")
	keys(tm, "j") // agent-9fff6642
	src.set(lookalikes("agent-9fff6642"))
	s := screenContains(t, tm, app, "agent-9fff6642 left the view")
	// The gap sits where the row was: between its neighbours.
	if !regexp.MustCompile(`(?s)agent-91220c4e.*left the view.*code-runner-8`).MatchString(s) {
		t.Fatalf("the gap is not where the row was:\n%s", s)
	}
	keys(tm, "x")
	screenContains(t, tm, app, "no sandbox under the cursor (fleet/agent-9fff6642 left the view)")
	keys(tm, "j") // down from the gap: the row below it
	screenContains(t, tm, app, "Sandboxes [3/3]")
	waitScreen(t, tm, app, "no gap", func(s string) bool { return !strings.Contains(s, "the cursor is on nothing") })
	keys(tm, "x")
	screenContains(t, tm, app, "exec fleet/code-runner-80e0aa11>")
}

// A confirmation whose sandbox went (or was re-created under its name)
// before y is refused, saying so; nothing is deleted.
func TestConfirmationRefusedWhenItsTargetChanged(t *testing.T) {
	for _, tc := range []struct {
		name, want, shows string
		next              *fleet.Snapshot
	}{
		{"gone", "delete refused: fleet/code-runner-80e0aa11 is gone since you asked", "Sandboxes [0/3]", lookalikes("code-runner-80e0aa11")},
		{"recreated", "delete refused: fleet/code-runner-80e0aa11 was re-created since you asked", "Pending",
			withSandbox(lookalikes(), "code-runner-80e0aa11", func(sb model.Sandbox) model.Sandbox {
				m := *sb.Meta
				m.UID = "uid-new"
				sb.Meta, sb.EnginePhase = &m, "Pending"
				return sb
			})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &actionLog{}
			src := &fakeSource{snap: lookalikes()}
			app, tm := newTestApp(t, src, recordingBackend(log), Options{})
			keys(tm, "/", "code-runner-80e0", "enter")
			screenContains(t, tm, app, "Sandboxes [1/4]")
			keys(tm, "ctrl+d")
			screenContains(t, tm, app, "Delete bsbx fleet/code-runner-80e0aa11?")
			src.set(tc.next)
			screenContains(t, tm, app, tc.shows)
			keys(tm, "y")
			screenContains(t, tm, app, tc.want)
			if got := log.list(); len(got) != 0 {
				t.Fatalf("the backend acted on %v", got)
			}
		})
	}
}

// Below 160 columns names are cut to the shortest prefix that tells the
// rows on screen apart (the Pod's index kept); with room, ids are whole.
func TestNamesStayDistinguishable(t *testing.T) {
	src := &fakeSource{snap: lookalikes()}
	app, tm := newTestAppSized(t, src, Backend{}, Options{}, 120, 24)
	s := screenContains(t, tm, app, "Sandboxes [4/4]")
	for _, want := range []string{"code-runner-80…", "code-runner-8e…", "code-runner-80…-0", "agent-91220c4e ", "agent-9fff6642 "} {
		if !strings.Contains(s, want) {
			t.Errorf("at 120 columns, no %q:\n%s", want, s)
		}
	}

	id := "49704847-8497-4803-b474-264b0e523218"
	p := pod("sandboxes", id+"-0", "pod-uid", "10.244.0.5", "sim-node-0", corev1.PodRunning, t0.Add(-time.Hour))
	uuid := &model.Sandbox{Key: "bsbx/sandboxes/" + id, EnginePhase: "Succeed", State: model.StateRunning,
		Meta:    model.ObjectMeta{Namespace: "sandboxes", Name: id}.WithCreated(t0.Add(-time.Hour)),
		Slots:   []model.Slot{{RecordedIP: "10.244.0.5", PodName: id + "-0", Pod: p, Identity: model.IdentityOK}},
		Notices: []model.Notice{{Code: model.CodeFailedSticky, Severity: model.SeverityWarning}}}
	wide := fleet.NewSnapshot(1, model.SourceStatus{Context: "demo", Synced: true}, []*model.Sandbox{uuid}, nil, nil)
	app, tm = newTestAppSized(t, &fakeSource{snap: wide}, Backend{}, Options{}, 200, 24)
	s = screenContains(t, tm, app, "Sandboxes [1/1]")
	if !strings.Contains(s, id+" ") || !strings.Contains(s, id+"-0 ") {
		t.Errorf("at 200 columns the id or its Pod is cut:\n%s", s)
	}
}

// ctrl+k is k9s's kill: it asks, naming the finalizers that will still
// hold the object, and force-deletes the sandbox the key was pressed on.
func TestForceDeleteAsksAndNamesFinalizers(t *testing.T) {
	log := &actionLog{}
	be := recordingBackend(log)
	be.ForceDelete = func(_ context.Context, sb *model.Sandbox) error { log.add("force " + sb.Name()); return nil }
	snap := withSandbox(lookalikes(), "code-runner-80e0aa11", func(sb model.Sandbox) model.Sandbox {
		m := *sb.Meta
		m.SetFinalizers([]string{"batch-sandbox.sandbox.opensandbox.io/cleanup"})
		sb.Meta = &m
		return sb
	})
	app, tm := newTestAppSized(t, &fakeSource{snap: snap}, be, Options{}, 220, 24)
	keys(tm, "/", "code-runner-80e0", "enter")
	screenContains(t, tm, app, "Sandboxes [1/4]")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlK})
	screenContains(t, tm, app, "Force delete bsbx fleet/code-runner-80e0aa11 and its Pods, no grace period?")
	screenContains(t, tm, app, "Finalizers batch-sandbox.sandbox.opensandbox.io/cleanup still hold it")
	keys(tm, "y")
	screenContains(t, tm, app, "force delete requested for fleet/code-runner-80e0aa11")
	if got := log.list(); !slices.Equal(got, []string{"force code-runner-80e0aa11"}) {
		t.Fatalf("the backend acted on %v", got)
	}
}

// A regular expression in the filter, case-insensitive as k9s's: an
// alternation, and an anchor that matches the start of a field.
func TestFilterTakesARegex(t *testing.T) {
	src := &fakeSource{snap: lookalikes()}
	app, tm := newTestApp(t, src, Backend{}, Options{})
	screenContains(t, tm, app, "Sandboxes [4/4]")
	keys(tm, "/", "^AGENT", "enter")
	s := screenContains(t, tm, app, "Sandboxes [2/4]")
	if strings.Contains(s, "code-runner") {
		t.Errorf("/^AGENT kept a code-runner row:\n%s", s)
	}
	keys(tm, "esc", "/", "80e0|8efd", "enter")
	s = screenContains(t, tm, app, "Sandboxes [2/4]")
	if strings.Contains(s, "agent-9") {
		t.Errorf("/80e0|8efd kept an agent row:\n%s", s)
	}
}

// withPods is snap with the Pods of its sandboxes' slots listed, as the
// fleet lists them for :pods.
func withPods(snap *fleet.Snapshot) *fleet.Snapshot {
	var pods []*model.Pod
	for _, sb := range snap.Sandboxes() {
		for _, sl := range sb.Slots {
			if sl.Pod != nil {
				pods = append(pods, sl.Pod)
			}
		}
	}
	slices.SortFunc(pods, func(a, b *model.Pod) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	return fleet.NewSnapshot(snap.Version, snap.Status, snap.Sandboxes(), pods, snap.Pools)
}

// :pods filtered by an IP to the one Pod holding it; that Pod goes and, in
// the same change, another sandbox's new Pod takes the IP and so matches
// the filter. The cursor stays on the gap the Pod left: ctrl+d, l and y
// act on no Pod, never on the newcomer that took the row.
func TestPodsViewGapNeverMovesTheHand(t *testing.T) {
	log := &actionLog{}
	be := recordingBackend(log)
	be.YAML = func(_ context.Context, sb *model.Sandbox) (string, error) {
		log.add("yaml " + sb.Name())
		return "kind: X\n", nil
	}
	be.Logs = func(_ context.Context, sb *model.Sandbox, _ LogOptions, w io.Writer) error {
		log.add("logs " + sb.Name())
		_, err := io.WriteString(w, "a line\n")
		return err
	}
	src := &fakeSource{snap: withPods(lookalikes())}
	app, tm := newTestAppSized(t, src, be, Options{}, 200, 24)
	screenContains(t, tm, app, "Sandboxes [4/4]")
	keys(tm, ":", "pods", "enter")
	screenContains(t, tm, app, "Pods [4/4]")
	keys(tm, "/", "10.244.8.10", "enter")
	s := screenContains(t, tm, app, "Pods [1/4]")
	if !strings.Contains(s, "code-runner-80e0aa11-0") {
		t.Fatalf("the filter does not show the Pod at 10.244.8.10:\n%s", s)
	}

	// code-runner-80e0aa11 and its Pod go; agent-reuse's Pod gets the IP.
	next := lookalikes("code-runner-80e0aa11")
	p := pod("fleet", "agent-reuse-0", "pod-uid-agent-reuse", "10.244.8.10", "worker-0e0", corev1.PodRunning, t0)
	reuse := &model.Sandbox{Key: "bsbx/fleet/agent-reuse", EnginePhase: "Succeed", State: model.StateRunning,
		Meta:  model.ObjectMeta{Namespace: "fleet", Name: "agent-reuse", UID: "uid-agent-reuse"}.WithCreated(t0),
		Slots: []model.Slot{{RecordedIP: "10.244.8.10", PodName: "agent-reuse-0", BoundUID: string(p.UID), Pod: p, Identity: model.IdentityOK}}}
	sbs := append(slices.Clone(next.Sandboxes()), reuse)
	slices.SortFunc(sbs, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
	src.set(withPods(fleet.NewSnapshot(next.Version+1, next.Status, sbs, nil, nil)))
	s = screenContains(t, tm, app, "code-runner-80e0aa11-0 left the view")
	if !strings.Contains(s, "Pods [1/4]") || !strings.Contains(s, "agent-reuse-0") {
		t.Fatalf("the newcomer holding the IP is not listed under the gap:\n%s", s)
	}

	for _, k := range []string{"ctrl+d", "l", "y"} {
		keys(tm, k)
		// Help over whatever k left, and back: once the Pods table and its
		// gap show again, k was handled and opened nothing (a view it had
		// opened would be what help goes back to).
		keys(tm, "?")
		screenContains(t, tm, app, "sort restarts")
		keys(tm, "q")
		s = waitScreen(t, tm, app, "the Pods table after "+k, func(s string) bool {
			return strings.Contains(s, "Pods [1/4]") && !strings.Contains(s, "sort restarts")
		})
		if !strings.Contains(s, "code-runner-80e0aa11-0 left the view") || strings.Contains(s, "[y/N]") {
			t.Fatalf("after %s the cursor left its gap or a confirmation is open:\n%s", k, s)
		}
	}
	if got := log.list(); len(got) != 0 {
		t.Fatalf("the backend acted on %v", got)
	}
}
