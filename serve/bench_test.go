package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// benchState is a fleet of n sandboxes over 50 namespaces with a finding on
// every tenth and a stuck Pod on every hundredth.
func benchState(n int) State {
	states := []model.EffectiveState{model.StateRunning, model.StateRunning, model.StateRunning, model.StateStarting, model.StateDead}
	ids := []model.IdentityState{model.IdentityOK, model.IdentityOK, model.IdentityOK, model.IdentityIPStale, model.IdentityIPTaken}
	sbs := make([]*model.Sandbox, n)
	var findings []model.Finding
	for i := range sbs {
		ns := fmt.Sprintf("team-%02d", i%50)
		name := fmt.Sprintf("sb-%06d", i)
		sl := slot(ids[i%len(ids)], name+"-0")
		if i%100 == 0 {
			sl.Stuck = &model.StuckInfo{DeletingSince: t0.Add(-time.Duration(i) * time.Second), PodInitializing: i%200 == 0}
		}
		sbs[i] = sandbox(model.EngineBatchSandbox, ns, name, states[i%len(states)], sl)
		if i%10 == 0 {
			findings = append(findings, model.Finding{Code: model.CodeIPTaken, Severity: model.SeverityError, Namespace: ns, Sandbox: name})
		}
	}
	// NewSnapshot wants them sorted by Key; the names sort with the index.
	sortByKey(sbs)
	snap := fleet.NewSnapshot(1, model.SourceStatus{Synced: true, AsOf: t0}, sbs, nil, nil)
	return State{Snapshot: snap, Report: &sweep.Report{Findings: findings}, Now: t0}
}

func sortByKey(sbs []*model.Sandbox) {
	slices.SortFunc(sbs, func(a, b *model.Sandbox) int { return strings.Compare(a.Key, b.Key) })
}

// BenchmarkScrape is one scrape of the sandscope metrics: collect from the
// snapshot and encode the exposition text. The target is ≤ 50 ms at 50,000.
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprintf("sandboxes=%d", n), func(b *testing.B) {
			st := benchState(n)
			reg := prometheus.NewRegistry()
			reg.MustRegister(NewCollector(func() State { return st }))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				mfs, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
				for _, mf := range mfs {
					if err := enc.Encode(mf); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// fixtureSource serves a fixed snapshot to the sweep's analysis, with no
// cluster behind it (the fixture has no restarted Pod to look up).
type fixtureSource struct{ snap *fleet.Snapshot }

func (f fixtureSource) Snapshot(context.Context, sweep.Options) (*fleet.Snapshot, error) {
	return f.snap, nil
}
func (fixtureSource) Server() string { return "fixture" }
func (fixtureSource) LivePod(context.Context, string, string) (*corev1.Pod, error) {
	return nil, errors.New("no cluster")
}
func (fixtureSource) PodEvents(context.Context, string, string) ([]corev1.Event, error) {
	return nil, nil
}
func (fixtureSource) Node(context.Context, string) (*corev1.Node, error) {
	return nil, errors.New("no cluster")
}
func (fixtureSource) NodeEvents(context.Context, string) ([]corev1.Event, error) { return nil, nil }

// BenchmarkAnalysis is one analysis of a changed fleet as serve runs it (at
// most once per --analyze-every): the sweep's findings, score and report
// over the snapshot, without forensics (no restarted Pod in the fixture).
func BenchmarkAnalysis(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprintf("sandboxes=%d", n), func(b *testing.B) {
			st := benchState(n)
			// Findings come from the sandboxes' notices here.
			for i, sb := range st.Snapshot.Sandboxes() {
				if i%10 == 0 {
					sb.Notices = []model.Notice{{Code: model.CodeIPTaken, Severity: model.SeverityError, Pod: sb.Name() + "-0"}}
				}
			}
			src := fixtureSource{st.Snapshot}
			target := sweep.Target{Name: "bench", Open: func(context.Context) (sweep.Source, error) { return src, nil }}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rep := sweep.Sweep(context.Background(), []sweep.Target{target}, sweep.Options{})
				if len(rep.Findings) != n/10 {
					b.Fatalf("%d findings, want %d", len(rep.Findings), n/10)
				}
			}
		})
	}
}
