package kube

import (
	"context"
	"errors"
	"time"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
)

// ImageConfigReader reads an image's config (ENTRYPOINT, CMD) from its
// registry. *imageconfig.Reader satisfies it.
type ImageConfigReader interface {
	Read(ctx context.Context, ref string) (model.ImageConfig, error)
}

const (
	// imageCheckConcurrency bounds registry reads in flight from the watcher.
	imageCheckConcurrency = 4
	// imageCheckTimeout bounds one read, whatever the reader's own deadline.
	imageCheckTimeout = 15 * time.Second
	// imageRetryAfter is when a failed read is tried again. The fleet asks
	// for each reference once, so without this a registry outage at start
	// would leave "image config unreadable" up for the whole session.
	imageRetryAfter = time.Minute
	// maxImageRetries bounds the failed references kept for a retry.
	maxImageRetries = 256
)

// runImageChecks drains Fleet.PendingImageChecks into a local queue, reads
// with bounded concurrency and feeds the results back through
// SetImageConfig. It runs in its own goroutine so informer handlers never
// wait for a registry. The fleet returns each reference once, so nothing
// it returns may be dropped here.
//
// It starts only once the fleet has synced: registry reads share the link
// with the initial lists (a VPN, a proxy), and the lists are what the
// operator is waiting for.
func (w *Watcher) runImageChecks(ctx context.Context, changes <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-w.synced:
	}
	reader := w.opts.ImageConfig
	var queue []string
	queued := map[string]bool{}        // in queue or in flight
	failedAt := map[string]time.Time{} // failed reads waiting for a retry
	inflight := 0
	done := make(chan imageResult)
	retry := time.NewTicker(imageRetryAfter / 4)
	defer retry.Stop()
	enqueue := func(ref string) {
		if !queued[ref] {
			queued[ref] = true
			queue = append(queue, ref)
		}
	}
	for {
		for _, ref := range w.fleet.PendingImageChecks() {
			enqueue(ref)
		}
		for inflight < imageCheckConcurrency && len(queue) > 0 {
			ref := queue[0]
			queue = queue[1:]
			inflight++
			crash.Go(func() {
				res := readImageConfig(ctx, reader, ref)
				select {
				case done <- res:
				case <-ctx.Done():
				}
			})
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case now := <-retry.C:
			for ref, at := range failedAt {
				if now.Sub(at) >= imageRetryAfter {
					delete(failedAt, ref)
					enqueue(ref)
				}
			}
		case res := <-done:
			inflight--
			delete(queued, res.cfg.Ref)
			if res.canceled {
				continue
			}
			if res.cfg.Err != "" && len(failedAt) < maxImageRetries {
				failedAt[res.cfg.Ref] = time.Now()
			}
			w.fleet.SetImageConfig(res.cfg)
		}
	}
}

type imageResult struct {
	cfg      model.ImageConfig
	canceled bool // the watcher is stopping: the outcome says nothing about the image
}

func readImageConfig(ctx context.Context, reader ImageConfigReader, ref string) imageResult {
	readCtx, cancel := context.WithTimeout(ctx, imageCheckTimeout)
	defer cancel()
	cfg, err := reader.Read(readCtx, ref)
	if ctx.Err() != nil {
		return imageResult{cfg: model.ImageConfig{Ref: ref}, canceled: true}
	}
	cfg.Ref = ref
	var ie *imageconfig.Error
	switch {
	case err == nil:
		cfg.Err = ""
	case errors.As(err, &ie) && ie.Kind == imageconfig.NoEntrypoint:
		// A successful read of an image that starts nothing by itself: the
		// config is the answer, not a failure.
		cfg.Err = ""
	default:
		cfg = model.ImageConfig{Ref: ref, Digest: cfg.Digest, Err: err.Error()}
	}
	return imageResult{cfg: cfg}
}
