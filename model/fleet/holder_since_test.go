package fleet

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// IP_TAKEN says what its time is: the holder's start when it was first
// seen already holding the IP with a startTime, else the time sandscope
// saw it take the IP (observed), never a plain "since".
func TestIPTakenSaysWhatItsTimeIs(t *testing.T) {
	c := &testClock{now: ft0.Add(time.Hour)}
	f := New(Options{Now: c.Now}) // not synced yet: the initial list
	stranger := func(name, uid, ip string, opts ...modeltest.PodOption) *model.Pod {
		p := modeltest.RunningPod(name, uid, ip, opts...)
		delete(p.Labels, osv1.LabelSandboxID)
		return model.SlimPod(p)
	}
	linkedSandbox(f, "a", "ua", "10.0.9.1", modeltest.Exited(1, "Error"))
	started := stranger("web-1", "uw1", "10.0.9.1")
	f.UpsertPod(started)
	linkedSandbox(f, "b", "ub", "10.0.9.2", modeltest.Exited(1, "Error"))
	f.UpsertPod(stranger("web-2", "uw2", "10.0.9.2", func(p *corev1.Pod) { p.Status.StartTime = nil }))
	f.SetStatus(model.SourceStatus{Synced: true})
	listed := c.Now()

	// Watched: web-3 takes c's address ten minutes later.
	linkedSandbox(f, "c", "uc", "10.0.9.3", modeltest.Exited(1, "Error"))
	c.Advance(10 * time.Minute)
	f.UpsertPod(stranger("web-3", "uw3", "10.0.9.3"))
	taken := c.Now()

	start, _ := started.Status.StartTime()
	for _, tc := range []struct {
		sandbox, want, holderSince string
		observed                   bool
	}{
		{"a", "is held by Pod web-1, started " + start.UTC().Format(time.TimeOnly) + ":", start.UTC().Format(time.TimeOnly), false},
		{"b", "is held by Pod web-2, observed holding it since " + listed.UTC().Format(time.TimeOnly) + ":", listed.UTC().Format(time.TimeOnly), true},
		{"c", "is held by Pod web-3, observed holding it since " + taken.UTC().Format(time.TimeOnly) + ":", taken.UTC().Format(time.TimeOnly), true},
	} {
		sb := mustSandbox(t, f, bsKey(tc.sandbox))
		n := hasNotice(sb, model.CodeIPTaken)
		if n == nil || !strings.Contains(n.Message, tc.want) {
			t.Errorf("%s: IP_TAKEN %+v, want %q", tc.sandbox, n, tc.want)
			continue
		}
		if h := sb.Slots[0].Holder; h == nil || h.Since.UTC().Format(time.TimeOnly) != tc.holderSince || !holderSinceObserved(h, tc.observed) {
			t.Errorf("%s: holder %+v, want since %s (observed: %v)", tc.sandbox, h, tc.holderSince, tc.observed)
		}
	}
}

func holderSinceObserved(h *model.Holder, observed bool) bool {
	return h.SinceObserved == observed && strings.HasPrefix(h.SinceText(time.TimeOnly), map[bool]string{true: "observed", false: "started"}[observed]) &&
		(&model.Holder{}).SinceText(time.TimeOnly) == ""
}

// A deleting Pod's summary says when the deletion was requested and when
// its grace period ends: deletionTimestamp is the latter.
func TestDeletingPodSaysWhatItsTimesAre(t *testing.T) {
	graceEnds := ft0.Add(time.Minute)
	p := model.SlimPod(modeltest.RunningPod("a-0", "ua", "10.0.9.4", modeltest.DeletingAt(graceEnds, 30)))
	if got, want := podSummary(p), "Running, deletion requested ~17:24:35 (grace ends 17:25:05)"; got != want {
		t.Errorf("podSummary = %q, want %q", got, want)
	}
	// Without deletionGracePeriodSeconds only the end is known.
	p.SetDeletionGracePeriodSeconds(nil)
	if got, want := podSummary(p), "Running, deleting, grace ends 17:25:05"; got != want {
		t.Errorf("podSummary = %q, want %q", got, want)
	}
	p.DeletionTimestamp = nil
	if got := podSummary(p); got != "Running" {
		t.Errorf("podSummary of a Pod not deleting = %q", got)
	}
}

func TestPodDeletionTimes(t *testing.T) {
	graceEnds := ft0.Add(time.Minute)
	p := model.SlimPod(modeltest.RunningPod("a-0", "ua", "10.0.9.4", modeltest.DeletingAt(graceEnds, 30)))
	requested, ends, exact, ok := p.DeletionTimes()
	if !ok || !exact || !requested.Equal(graceEnds.Add(-30*time.Second)) || !ends.Equal(graceEnds) {
		t.Errorf("DeletionTimes = %s %s %v %v", requested, ends, exact, ok)
	}
	if _, _, _, ok := model.SlimPod(modeltest.RunningPod("b-0", "ub", "10.0.9.5")).DeletionTimes(); ok {
		t.Error("a Pod not deleting has deletion times")
	}
}
