package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// imageSettleQuiet is how long image-config reads must have been idle before
// the snapshot is taken: the watcher starts them on change signals after
// sync, so "none in flight" alone could be read before the first one began.
const imageSettleQuiet = 300 * time.Millisecond

// connRefusedGrace is how long a one-shot read keeps trying a server that
// refuses connections before it calls the context unreachable: long enough
// for a few of the watcher's retries, far shorter than the timeout, which is
// for servers that are slow or silent.
const connRefusedGrace = 2 * time.Second

// ClientsSource reads a context through kube.Clients: a kube.Watcher for
// the fleet, and single-object reads for forensics.
func ClientsSource(c *kube.Clients) Source { return &clientsSource{Clients: c} }

type clientsSource struct {
	*kube.Clients
	notes   []string // where the last Snapshot was partial
	missing string   // the namespace the last Snapshot read, when it does not exist
}

// MissingNamespace is the namespace the last Snapshot was asked to read
// when the API server says it does not exist ("" otherwise): a sweep of a
// mistyped namespace read nothing, which is no clean bill of health.
func (s *clientsSource) MissingNamespace() string { return s.missing }

// Notes says where the last Snapshot was partial.
func (s *clientsSource) Notes() []string { return s.notes }

func (s *clientsSource) Server() string { return s.Clients.Server }

// Snapshot runs a watcher until its informers have synced and image-config
// reads have settled, takes the fleet snapshot and stops the watcher.
func (s *clientsSource) Snapshot(ctx context.Context, opts Options) (*fleet.Snapshot, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = s.Clients.Namespace
	}
	if opts.AllNamespaces || (opts.Namespace == "" && s.Clients.AllNamespaces) {
		ns = ""
	}
	var images *settlingReader
	wopts := kube.WatcherOptions{Namespace: ns, PodSelector: opts.PodSelector, StuckAfter: opts.StuckAfter}
	if opts.ImageConfig != nil {
		images = &settlingReader{next: opts.ImageConfig}
		images.touch()
		wopts.ImageConfig = images
	}
	w := kube.NewWatcher(s.Clients, wopts)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	crash.Go(func() { ran <- w.Run(runCtx) })
	synced := make(chan error, 1)
	crash.Go(func() { synced <- w.WaitForSync(runCtx) })

	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
	progress := NewProgressReporter(opts.Progress, "sandscope: ", s.Clients.Context, time.Now())
	var received int64 // so far, over every list: more extends the deadline
	// slow is the error of a deadline that passed while the lists were
	// arriving (or after they stopped halfway): the server answered.
	slow := func(err error) error {
		p := w.SyncProgress()
		if got, _ := model.SyncTotals(p); got > 0 && timedOut(ctx) {
			return &SlowError{Context: s.Clients.Context, Progress: p, Silent: errors.Is(context.Cause(ctx), errSilent),
				Idle: opts.Timeout, Limit: max(opts.MaxTime, opts.Timeout), Undiscovered: !w.Discovered()}
		}
		return err
	}
wait:
	for {
		select {
		case err := <-ran:
			if err == nil {
				err = ctx.Err()
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				// Discovery runs beside the first list: a server gone while it
				// answers ends Run, and is as unreachable as one the lists lost.
				return nil, connRefusedError(s.Clients.Server, time.Now(), err)
			}
			err = fmt.Errorf("watching the fleet: %w", err)
			if timedOut(ctx) {
				// The time ran out while discovery still waited for an
				// answer: the fleet did not sync, as when the lists wait.
				err = syncError(w.Status(), err)
			}
			return nil, slow(err)
		case err := <-synced:
			if err != nil {
				return nil, slow(syncError(w.Status(), err))
			}
			break wait
		case <-check.C:
			if since, ok := w.ConnRefusedSince(); ok && time.Since(since) >= connRefusedGrace {
				return nil, connRefusedError(s.Clients.Server, since, nil)
			}
			p := w.SyncProgress()
			if got, _ := model.SyncTotals(p); got > received {
				received = got
				opts.deadline.extend()
			}
			progress.Report(time.Now(), p)
		}
	}
	// The lists are in: what follows gets the whole --timeout.
	opts.deadline.extend()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if w.Unserved("pods") {
		// Without Pods there is no identity to check: nothing to report.
		return nil, fmt.Errorf("access forbidden: %s", strings.Join(w.Status().Forbidden, "; "))
	}
	var notes []string
	if images != nil && !images.settle(ctx) {
		notes = append(notes, fmt.Sprintf("%d image config read(s) still running when the sweep ended: ENTRYPOINT_NOT_RUN may be missing for them", images.inflight.Load()))
	}
	// A namespace's dead sandboxes may record IPs that Pods of other
	// namespaces hold now: looked up live, or said unchecked when forbidden.
	if err := w.ResolveAllForeignHolders(ctx); err != nil {
		notes = append(notes, "holders in other namespaces not looked up: "+err.Error())
	}
	snap := w.Fleet().Snapshot()
	stop()
	<-ran // the informers are shut down before the next context's work counts
	s.missing = ""
	if ns != "" && snap.NumSandboxes() == 0 && snap.NumPods() == 0 {
		// Listing a namespace that does not exist answers an empty list:
		// only the namespace itself says whether there was anything to see.
		exists, err := s.Clients.NamespaceExists(ctx, ns)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("namespace %s holds nothing, and whether it exists could not be read: %v", ns, err))
		case !exists:
			s.missing = ns
		}
	}
	s.notes = notes
	return snap, nil
}

// syncError explains why the informers did not sync, from the watcher's
// view of the connection.
func syncError(st model.SourceStatus, err error) error {
	var why []string
	if st.DisconnectedSince != nil {
		why = append(why, "connection lost since "+st.DisconnectedSince.UTC().Format(time.RFC3339))
	}
	why = append(why, st.Forbidden...)
	if len(why) == 0 {
		return fmt.Errorf("the fleet did not sync: %w", err)
	}
	return fmt.Errorf("the fleet did not sync (%s): %w", strings.Join(why, "; "), err)
}

// settlingReader counts image-config reads in flight so the sweep can wait
// until the watcher's checks are done before it takes its snapshot.
type settlingReader struct {
	next     kube.ImageConfigReader
	inflight atomic.Int64
	mu       sync.Mutex
	last     time.Time // last start or end of a read
}

func (r *settlingReader) Read(ctx context.Context, ref string) (model.ImageConfig, error) {
	r.inflight.Add(1)
	r.touch()
	defer func() {
		r.inflight.Add(-1)
		r.touch()
	}()
	return r.next.Read(ctx, ref)
}

func (r *settlingReader) touch() {
	r.mu.Lock()
	r.last = time.Now()
	r.mu.Unlock()
}

func (r *settlingReader) idleFor() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.last)
}

// settle waits until no read is in flight and none started for a quiet
// period, for at most half the time left (forensics need the rest). It
// reports whether the reads settled.
func (r *settlingReader) settle(ctx context.Context) bool {
	limit := time.Now().Add(10 * time.Second)
	if dl, ok := ctx.Deadline(); ok {
		limit = time.Now().Add(time.Until(dl) / 2)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if r.inflight.Load() == 0 && r.idleFor() >= imageSettleQuiet {
			// SetImageConfig follows Read's return; give the fleet a beat.
			time.Sleep(20 * time.Millisecond)
			return true
		}
		if time.Now().After(limit) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// connRefusedError says that nothing listens at server since then; cause,
// when there is one, is the request that found it so.
func connRefusedError(server string, since time.Time, cause error) error {
	msg := fmt.Sprintf("the API server refuses connections (nothing listens at %s) since %s", server, since.UTC().Format(time.RFC3339))
	if cause == nil {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %w", msg, cause)
}
