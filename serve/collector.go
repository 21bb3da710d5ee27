package serve

import (
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// State is what one scrape reads: the latest fleet snapshot, the watches'
// health, and the latest analysis (findings, score, restart causes). Every
// field may be empty before the first sync or the first analysis.
type State struct {
	Snapshot *fleet.Snapshot
	Watches  []kube.WatchState
	// Report is the latest analysis in the sweep's contract; nil until the
	// first one ran.
	Report *sweep.Report
	// Restarts are the restarts explained since the process started, by
	// cause and namespace (monotonic).
	Restarts map[RestartKey]float64
	Now      time.Time
}

// RestartKey is one series of sandscope_restarts_total.
type RestartKey struct {
	Cause     string // oom, liveness, evicted, unexplained
	Namespace string
}

// restartCauses maps the forensics codes to the cause label.
var restartCauses = map[string]string{
	model.CodeRestartOOM:         "oom",
	model.CodeRestartLiveness:    "liveness",
	model.CodeRestartEvicted:     "evicted",
	model.CodeRestartUnexplained: "unexplained",
}

// identityStates are reported for every namespace that has sandboxes, zero
// included, so a state that clears reads 0 instead of vanishing.
var identityStates = []model.IdentityState{
	model.IdentityOK, model.IdentityIPTaken, model.IdentityPodDead, model.IdentityPodGone,
	model.IdentityUIDChanged, model.IdentityIPStale, model.IdentityUnassigned, model.IdentityUnknown,
}

// Collector turns the latest State into metrics at scrape time: nothing is
// updated per event, so an idle fleet costs nothing between scrapes and a
// scrape always sees one consistent snapshot. Labels are bounded by
// namespaces, engines, states, codes and resources: never a sandbox or Pod
// name.
type Collector struct {
	state func() State

	sandboxes, identity, findings, stuck, stuckOldest *prometheus.Desc
	restarts, score, watchUp, lastSync, analyzed      *prometheus.Desc
}

// NewCollector reads the state through state at each scrape.
func NewCollector(state func() State) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("sandscope_"+name, help, labels, nil)
	}
	return &Collector{
		state:       state,
		sandboxes:   d("sandboxes", "Sandboxes by engine, namespace and effective state.", "engine", "namespace", "state"),
		identity:    d("identity", "Sandboxes by namespace and identity state (the worst of their recorded addresses).", "namespace", "state"),
		findings:    d("findings", "Findings of the latest analysis by code, severity and namespace.", "code", "severity", "namespace"),
		stuck:       d("stuck_terminating_pods", "Pods stuck Terminating past their grace period, by namespace and whether the main container was still initializing.", "namespace", "phase"),
		stuckOldest: d("stuck_terminating_oldest_seconds", "Age of the deletion of the oldest Pod stuck Terminating, by namespace.", "namespace"),
		restarts:    d("restarts_total", "Container restarts and kills explained by restart forensics since the exporter started, by cause.", "cause", "namespace"),
		score:       d("fleet_score", "Fleet score of the latest analysis (0-100; 100 means no finding)."),
		watchUp:     d("watch_up", "1 while the watch of a resource is synced and answered, else 0.", "resource"),
		lastSync:    d("last_sync_timestamp_seconds", "Unix time the data was last proven current (a consistent read of the API server's storage)."),
		analyzed:    d("last_analysis_timestamp_seconds", "Unix time of the latest analysis (findings, score, restart causes)."),
	}
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.sandboxes, c.identity, c.findings, c.stuck, c.stuckOldest,
		c.restarts, c.score, c.watchUp, c.lastSync, c.analyzed} {
		ch <- d
	}
}

// Collect reads the state once and sends the metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.state()
	if st.Now.IsZero() {
		st.Now = time.Now()
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, w := range st.Watches {
		gauge(c.watchUp, b2f(w.Up), w.Resource)
	}
	if snap := st.Snapshot; snap != nil {
		if !snap.Status.AsOf.IsZero() {
			gauge(c.lastSync, float64(snap.Status.AsOf.UnixNano())/1e9)
		}
		c.collectFleet(ch, snap, st.Now)
	}
	if r := st.Report; r != nil {
		gauge(c.score, float64(r.Summary.Score))
		gauge(c.analyzed, float64(r.GeneratedAt.UnixNano())/1e9)
		type fkey struct{ code, severity, namespace string }
		counts := map[fkey]int{}
		for i := range r.Findings {
			f := &r.Findings[i]
			counts[fkey{f.Code, string(f.Severity), f.Namespace}]++
		}
		for k, n := range counts {
			gauge(c.findings, float64(n), k.code, k.severity, k.namespace)
		}
	}
	c.collectRestarts(ch, st)
}

// collectRestarts reports every cause for every namespace of the fleet, 0
// included: a series that appears at 1 would hide that first restart from
// increase() and rate().
func (c *Collector) collectRestarts(ch chan<- prometheus.Metric, st State) {
	namespaces := map[string]struct{}{}
	if st.Snapshot != nil {
		n := st.Snapshot.NumSandboxes()
		last := ""
		for i := range n {
			// Sorted by engine/namespace/name: runs of one namespace skip the map.
			if ns := st.Snapshot.SandboxAt(i).Namespace(); ns != last {
				namespaces[ns], last = struct{}{}, ns
			}
		}
	}
	for k := range st.Restarts {
		namespaces[k.Namespace] = struct{}{}
	}
	for ns := range namespaces {
		for _, cause := range []string{"oom", "liveness", "evicted", "unexplained"} {
			ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, st.Restarts[RestartKey{cause, ns}], cause, ns)
		}
	}
}

// collectFleet counts sandboxes, identity states and stuck Pods in one pass.
func (c *Collector) collectFleet(ch chan<- prometheus.Metric, snap *fleet.Snapshot, now time.Time) {
	type sbKey struct {
		engine    model.Engine
		namespace string
		state     model.EffectiveState
	}
	type idKey struct {
		namespace string
		state     model.IdentityState
	}
	type stuckKey struct{ namespace, phase string }
	sbs := map[sbKey]int{}
	ids := map[idKey]int{}
	namespaces := map[string]struct{}{}
	stuck := map[stuckKey]int{}
	oldest := map[string]time.Time{}
	seenPod := map[string]struct{}{} // a Pod in two slots is one stuck Pod
	n := snap.NumSandboxes()
	for i := range n {
		sb := snap.SandboxAt(i)
		ns := sb.Namespace()
		namespaces[ns] = struct{}{}
		sbs[sbKey{sb.Engine(), ns, sb.State}]++
		ids[idKey{ns, sb.Identity()}]++
		for j := range sb.Slots {
			sl := &sb.Slots[j]
			if sl.Stuck == nil {
				continue
			}
			pk := ns + "/" + sl.PodName
			if _, ok := seenPod[pk]; ok {
				continue
			}
			seenPod[pk] = struct{}{}
			phase := "running"
			if sl.Stuck.PodInitializing {
				phase = "init"
			}
			stuck[stuckKey{ns, phase}]++
			if o, ok := oldest[ns]; !ok || sl.Stuck.DeletingSince.Before(o) {
				oldest[ns] = sl.Stuck.DeletingSince
			}
		}
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for k, v := range sbs {
		gauge(c.sandboxes, float64(v), string(k.engine), k.namespace, k.state.String())
	}
	for ns := range namespaces {
		for _, s := range identityStates {
			gauge(c.identity, float64(ids[idKey{ns, s}]), ns, string(s))
		}
		gauge(c.stuck, float64(stuck[stuckKey{ns, "init"}]), ns, "init")
		gauge(c.stuck, float64(stuck[stuckKey{ns, "running"}]), ns, "running")
	}
	for ns, t := range oldest {
		gauge(c.stuckOldest, max(0, now.Sub(t).Seconds()), ns)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// restartCounter accumulates sandscope_restarts_total across analyses: the
// first analysis only takes each Pod's restarts so far as the baseline (a
// restarted exporter must not report old restarts as new ones); after it,
// each restart counts once, so the series only grows and increase() reads
// what happened since. A Pod first seen later counts all its restarts.
type restartCounter struct {
	primed bool
	last   map[string]int32 // "namespace/pod/code" -> restarts already counted
	totals map[RestartKey]float64
}

func newRestartCounter() *restartCounter {
	return &restartCounter{last: map[string]int32{}, totals: map[RestartKey]float64{}}
}

// observe adds what the analysis explains beyond what was counted, and
// returns a copy of the totals for the collector.
func (rc *restartCounter) observe(snap *fleet.Snapshot, findings []model.Finding) map[RestartKey]float64 {
	if snap == nil {
		return rc.copyTotals() // the fleet could not be read: no baseline either
	}
	live := map[string]struct{}{}
	for i := range findings {
		f := &findings[i]
		cause, ok := restartCauses[f.Code]
		if !ok || f.Pod == "" {
			continue
		}
		k := f.Namespace + "/" + f.Pod + "/" + f.Code
		live[k] = struct{}{}
		// A kill without a restart (restartPolicy Never, an eviction)
		// counts as one.
		n := max(restartsOf(snap, f.Namespace, f.Pod), 1)
		if n > rc.last[k] {
			if rc.primed {
				rc.totals[RestartKey{cause, f.Namespace}] += float64(n - rc.last[k])
			}
			rc.last[k] = n
		}
	}
	rc.primed = true
	// Forget Pods that left the fleet so the map stays the fleet's size; a
	// Pod still present keeps its count even when a capped analysis skipped it.
	for k := range rc.last {
		if _, ok := live[k]; ok {
			continue
		}
		parts := strings.SplitN(k, "/", 3)
		if len(parts) == 3 && podIn(snap, parts[0], parts[1]) == nil {
			delete(rc.last, k)
		}
	}
	return rc.copyTotals()
}

func (rc *restartCounter) copyTotals() map[RestartKey]float64 {
	out := make(map[RestartKey]float64, len(rc.totals))
	for k, v := range rc.totals {
		out[k] = v
	}
	return out
}

// podIn finds a Pod in the snapshot's list (sorted by namespace/name).
func podIn(snap *fleet.Snapshot, ns, name string) *model.Pod {
	if snap == nil {
		return nil
	}
	pods := snap.Pods()
	i := sort.Search(len(pods), func(i int) bool {
		p := pods[i]
		return p.Namespace > ns || (p.Namespace == ns && p.Name >= name)
	})
	if i < len(pods) && pods[i].Namespace == ns && pods[i].Name == name {
		return pods[i]
	}
	return nil
}

func restartsOf(snap *fleet.Snapshot, ns, name string) int32 {
	p := podIn(snap, ns, name)
	if p == nil {
		return 0
	}
	return p.Restarts()
}
