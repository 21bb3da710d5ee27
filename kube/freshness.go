package kube

import (
	"context"
	"os"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/internal/crash"
)

// Freshness is proven, not assumed. An API server that is cut off from etcd
// (etcd down, an HA member partitioned away) still answers /version, /livez
// and keeps its watches open; they only go silent, exactly as they do over
// a quiet fleet. So the watcher asks, every probeEvery, for a consistent
// read: a list of at most one Pod with no resourceVersion, which the server
// can only answer once it has read the storage's current revision (and,
// served from its watch cache, once that cache has caught up with it). Its
// answer within freshBudget proves the data current as of the request;
// anything else (an error, a 5xx, no answer) leaves AsOf where it was and
// counts the connection as lost, so identities read UNKNOWN and
// sandscope_watch_up drops to 0, until a read answers again.

// metadataListJSON asks for the list as object metadata only: the probe
// reads one Pod's name, never its spec.
const metadataListJSON = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

// storageProbe is the consistent read of the Pods the watcher lists (the
// watched namespace, or all).
type storageProbe struct {
	rc        rest.Interface // a core/v1 client through the health transport
	namespace string
	// liveOnly: the server refused the list (no right to list Pods there).
	// With no Pods there is no identity to vouch for; /version then only
	// says the server answers.
	liveOnly atomic.Bool
}

func newStorageProbe(rc rest.Interface, namespace string) *storageProbe {
	return &storageProbe{rc: rc, namespace: namespace}
}

func (p *storageProbe) read(ctx context.Context) error {
	if p.liveOnly.Load() {
		return p.rc.Get().AbsPath("/version").Do(ctx).Error()
	}
	req := p.rc.Get().Resource("pods").Param("limit", "1").SetHeader("Accept", metadataListJSON)
	if p.namespace != "" {
		req = req.Namespace(p.namespace)
	}
	err := req.Do(ctx).Error()
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
		p.liveOnly.Store(true)
		return p.read(ctx)
	}
	return err
}

// runProbe proves the data fresh at once and then on each multiple of
// probeEvery of the wall clock, at least half a period after the previous
// read ended, until ctx ends. On the clock rather than from its own start:
// the watchers of several contexts in one process then probe, and publish
// what they proved (runTicker), together, which wakes the process and
// redraws a TUI over them once per period rather than once per context.
// The multiples are shifted by a phase of the process's own (probePhase),
// so that many sandscope processes do not all probe one API server at the
// same instant.
func (w *Watcher) runProbe(ctx context.Context, read func(context.Context) error) {
	phase := probePhase(os.Getpid())
	w.probeOnce(ctx, read)
	repeatOnTheClock(ctx, func(now time.Time) time.Duration { return untilNextProbe(now, phase) },
		func() { w.probeOnce(ctx, read) })
}

// repeatOnTheClock calls do each time the wall clock reaches the moment
// until says, until ctx ends. until is asked again after each call, from
// the time do ended: a timer set once per call, not a ticker, so a call
// that ran long is not followed at once by the ticks it missed.
func repeatOnTheClock(ctx context.Context, until func(now time.Time) time.Duration, do func()) {
	next := time.NewTimer(until(time.Now()))
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-next.C:
		}
		do()
		next.Reset(until(time.Now()))
	}
}

// probePhase is where in each probeEvery of the wall clock the process
// with this pid probes: the same for every watcher of the process, which
// keeps its contexts together, and spread over the period across processes
// (Knuth's multiplicative hash of the pid).
func probePhase(pid int) time.Duration {
	return time.Duration(uint64(uint32(pid)) * 2654435761 % uint64(probeEvery))
}

// untilNextProbe is how long after a read that ended at now the next one
// is sent: on the next multiple of probeEvery, shifted by phase, at least
// half a period away.
func untilNextProbe(now time.Time, phase time.Duration) time.Duration {
	wait := untilOnTheClock(now, probeEvery, phase)
	if wait < probeEvery/2 {
		wait += probeEvery
	}
	return wait
}

// untilOnTheClock is how long from now until the wall clock next reads a
// multiple of every, plus offset (0 ≤ offset < every).
func untilOnTheClock(now time.Time, every, offset time.Duration) time.Duration {
	if every <= 0 {
		return 0
	}
	return every - time.Duration((now.UnixNano()-int64(offset))%int64(every))
}

// probeOnce sends one consistent read and records what it proved.
func (w *Watcher) probeOnce(ctx context.Context, read func(context.Context) error) {
	sent := w.now()
	pctx, cancel := context.WithTimeout(asProbe(ctx), freshBudget)
	defer cancel()
	done := make(chan error, 1)
	crash.Go(func() { done <- read(pctx) })
	stall := time.NewTimer(stallAfter)
	defer stall.Stop()
	var err error
	select {
	case err = <-done:
	case <-stall.C:
		if w.health.silentFor(stallAfter) {
			w.health.fail(storageKey) // frozen: say so now, not at the end of the budget
		}
		err = <-done
	}
	switch {
	case ctx.Err() != nil:
		// Stopping: the read says nothing about the server.
	case err != nil:
		w.health.fail(storageKey)
	default:
		w.health.provenFresh(sent)
	}
}

// proving says a freshness probe runs: from now on AsOf is what it proves.
func (h *apiHealth) proving() {
	h.mu.Lock()
	h.proves = true
	h.mu.Unlock()
}
