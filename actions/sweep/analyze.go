package sweep

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/sandscope/sandscope/actions/inspect"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/model/forensics"
)

// Analyze turns a synced snapshot of one context into findings: every
// sandbox notice (at the severity table's level), restart forensics for the
// Pods that restarted or were killed (their RESTARTED notice is replaced by
// the classified one), and, with opts.Probe, the live execd check that
// confirms or clears NOT_EXEC_READY. It returns notes where it was partial.
// Only Pods with something to explain are looked up, never the whole fleet.
func Analyze(ctx context.Context, contextName string, snap *fleet.Snapshot, lookup Lookup, opts Options) ([]model.Finding, []string) {
	opts = opts.withDefaults()
	if snap == nil {
		return []model.Finding{}, nil
	}
	var notes []string

	todo := restartedPods(snap)
	if len(todo) > opts.MaxForensics {
		notes = append(notes, fmt.Sprintf("%s: %d Pods restarted or were killed; forensics ran for the first %d (the rest keep their RESTARTED notice)",
			contextName, len(todo), opts.MaxForensics))
		todo = todo[:opts.MaxForensics]
	}
	explained, fnotes := runForensics(ctx, snap, todo, lookup)
	notes = append(notes, prefixed(contextName, fnotes)...)

	recreated, rnotes := recreationEvents(ctx, snap, lookup)
	notes = append(notes, prefixed(contextName, rnotes)...)

	var probed map[string]error
	if opts.Probe {
		var pnotes []string
		probed, pnotes = runProbes(ctx, snap, opts)
		notes = append(notes, prefixed(contextName, pnotes)...)
	}

	out := make([]model.Finding, 0, snap.NumSandboxes()/8)
	for _, sb := range snap.Sandboxes() {
		probeErr, wasProbed := probed[sb.Key]
		var statusExec *model.Notice
		for i := range sb.Notices {
			n := sb.Notices[i]
			switch {
			case n.Code == model.CodeRestarted && explained[podKey(sb.Namespace(), n.Pod)] != nil:
				continue // replaced by its forensics below
			case n.Code == model.CodeNotExecReady && wasProbed:
				statusExec = &n // the live check decides
				continue
			case n.Code == model.CodePodRecreated && recreated[sb.Key] != nil:
				continue // replaced below, with what the Events add
			}
			out = append(out, model.NewFinding(contextName, sb, n))
		}
		for _, sl := range sb.Slots {
			if sl.Pod == nil {
				continue
			}
			for _, n := range explained[podKey(sb.Namespace(), sl.Pod.Name)] {
				out = append(out, model.NewFinding(contextName, sb, n))
			}
		}
		for _, n := range recreated[sb.Key] {
			out = append(out, model.NewFinding(contextName, sb, n))
		}
		if wasProbed && probeErr != nil {
			out = append(out, model.NewFinding(contextName, sb, liveExecNotice(sb, probeErr, statusExec)))
		}
	}
	for _, x := range snap.ExtensionFindings(opts.Now()) {
		f := model.NewFinding(contextName, nil, x.Notice)
		f.Namespace, f.Sandbox = x.Namespace, x.Sandbox
		out = append(out, f)
	}
	model.SortFindings(out)
	return out, notes
}

// createEventsLookup is the optional part of a Lookup that lists a
// namespace's SuccessfulCreate Events (*kube.Clients has it).
type createEventsLookup interface {
	CreateEvents(ctx context.Context, namespace string) ([]corev1.Event, error)
}

// maxCreateEventNamespaces bounds the namespaces whose SuccessfulCreate
// Events are read (one paged list each).
const maxCreateEventNamespaces = 50

// recreationEvents reads the SuccessfulCreate Events of the namespaces of
// the sandboxes whose controller creates their Pods, and returns, per
// sandbox key, its POD_RECREATED notices with what the Events add (only
// for the sandboxes where they add something).
func recreationEvents(ctx context.Context, snap *fleet.Snapshot, lookup Lookup) (map[string][]model.Notice, []string) {
	cl, ok := lookup.(createEventsLookup)
	if !ok {
		return nil, nil
	}
	byNS := map[string][]*model.Sandbox{}
	var order []string
	for _, sb := range snap.Sandboxes() {
		if sb.Engine() == model.EnginePod || sb.Pool != "" || sb.PrimarySlot() == nil || sb.PrimarySlot().Pod == nil {
			continue
		}
		if _, seen := byNS[sb.Namespace()]; !seen {
			order = append(order, sb.Namespace())
		}
		byNS[sb.Namespace()] = append(byNS[sb.Namespace()], sb)
	}
	var notes []string
	if len(order) > maxCreateEventNamespaces {
		notes = append(notes, fmt.Sprintf("SuccessfulCreate Events read for %d of %d namespaces: POD_RECREATED elsewhere rests on timestamps alone", maxCreateEventNamespaces, len(order)))
		order = order[:maxCreateEventNamespaces]
	}
	out := map[string][]model.Notice{}
	for _, ns := range order {
		events, err := cl.CreateEvents(ctx, ns)
		if err != nil {
			notes = append(notes, err.Error()+": POD_RECREATED rests on timestamps alone there")
			continue
		}
		for _, sb := range byNS[ns] {
			if ns, changed := forensics.RecreatedFromEvents(sb, events); changed {
				out[sb.Key] = ns
			}
		}
	}
	return out, notes
}

type podRef struct {
	sb  *model.Sandbox
	pod *model.Pod
}

func podKey(namespace, name string) string { return namespace + "/" + name }

// restartedPods lists, once each, the Pods behind sandboxes that have a
// restart or a kill to explain.
func restartedPods(snap *fleet.Snapshot) []podRef {
	var out []podRef
	seen := map[string]bool{}
	for _, sb := range snap.Sandboxes() {
		for _, sl := range sb.Slots {
			p := sl.Pod
			if p == nil || !forensics.Needed(p) {
				continue
			}
			k := podKey(p.Namespace, p.Name)
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, podRef{sb: sb, pod: p})
		}
	}
	return out
}

// runForensics explains each Pod of todo, DefaultForensicsWorkers at a time:
// the full Pod (the snapshot's is slimmed: no resources), its Events, and its
// Node with the Node's Events (read once per node), as inspect.Forensics
// reads them for every caller.
func runForensics(ctx context.Context, snap *fleet.Snapshot, todo []podRef, lookup Lookup) (map[string][]model.Notice, []string) {
	explained := make(map[string][]model.Notice, len(todo))
	if len(todo) == 0 {
		return explained, nil
	}
	f := inspect.NewForensics(snap, lookup)
	var mu sync.Mutex
	var notes []string
	g := new(errgroup.Group)
	g.SetLimit(DefaultForensicsWorkers)
	for _, ref := range todo {
		g.Go(func() error {
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			notices, note := f.Explain(ctx, ref.sb, ref.pod)
			mu.Lock()
			defer mu.Unlock()
			if len(notices) > 0 {
				explained[podKey(ref.pod.Namespace, ref.pod.Name)] = notices
			}
			if note != "" {
				notes = append(notes, note)
			}
			return nil
		})
	}
	_ = g.Wait() // the workers report through explained and notes, never an error
	return explained, notes
}

// ---- live execd probe --------------------------------------------------------

// runProbes pings execd on every Running sandbox whose primary address is
// verified (identity OK: the address belongs to the sandbox's own Pod; a
// probe to a taken address would test a stranger's daemon). Bounded by
// MaxProbes, DefaultProbeWorkers in parallel, ProbeTimeout each.
func runProbes(ctx context.Context, snap *fleet.Snapshot, opts Options) (map[string]error, []string) {
	type target struct{ key, addr string }
	var targets []target
	skipped := 0
	for _, sb := range snap.Sandboxes() {
		sl := sb.PrimarySlot()
		if sb.State != model.StateRunning || sl == nil || sl.Identity != model.IdentityOK || sl.Pod == nil || sl.Pod.Status.PodIP == "" {
			continue
		}
		if len(targets) >= opts.MaxProbes {
			skipped++
			continue
		}
		targets = append(targets, target{sb.Key, net.JoinHostPort(sl.Pod.Status.PodIP, strconv.Itoa(execd.DefaultPort))})
	}
	results := make(map[string]error, len(targets))
	var notes []string
	if skipped > 0 {
		notes = append(notes, fmt.Sprintf("execd probe capped at %d sandboxes; %d not probed", opts.MaxProbes, skipped))
	}
	var mu sync.Mutex
	g := new(errgroup.Group)
	g.SetLimit(DefaultProbeWorkers)
	for _, t := range targets {
		g.Go(func() error {
			defer utilruntime.HandleCrash() // a panic: terminal back, stack, exit 70 (internal/crash)
			pctx, cancel := context.WithTimeout(ctx, opts.ProbeTimeout)
			defer cancel()
			err := opts.Ping(pctx, t.addr)
			if err != nil {
				err = fmt.Errorf("GET http://%s/ping: %w", t.addr, err)
			}
			mu.Lock()
			defer mu.Unlock()
			results[t.key] = err
			return nil
		})
	}
	_ = g.Wait() // each probe's outcome is in results
	return results, notes
}

func execdPing(ctx context.Context, hostPort string) error {
	c := &execd.Client{BaseURL: "http://" + hostPort}
	return c.Ping(ctx)
}

// liveExecNotice is NOT_EXEC_READY from the live check, keeping what the
// status said when it also pointed there.
func liveExecNotice(sb *model.Sandbox, probeErr error, fromStatus *model.Notice) model.Notice {
	n := model.Notice{Code: model.CodeNotExecReady, Severity: model.SeverityWarning,
		Message:  "Running, but its exec daemon does not answer: " + probeErr.Error(),
		Evidence: []model.Evidence{{Kind: model.Observed, Text: probeErr.Error()}}}
	if sl := sb.PrimarySlot(); sl != nil && sl.Pod != nil {
		n.Pod = sl.Pod.Name
	}
	if fromStatus != nil {
		n.Evidence = append(n.Evidence, fromStatus.Evidence...)
	}
	return n
}

func prefixed(contextName string, notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = contextName + ": " + n
	}
	return out
}
