package serve

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/model"
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
	snap := model.NewSnapshot(1, model.SourceStatus{Synced: true, AsOf: t0}, sbs, nil, nil)
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
