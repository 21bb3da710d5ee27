package fleet

import "github.com/sandscope/sandscope/model"

// SetImageConfig stores what a registry said about an image (keyed by
// cfg.Ref, the string PendingImageChecks returned) and re-derives the
// sandboxes waiting for it.
func (f *Fleet) SetImageConfig(cfg model.ImageConfig) {
	if cfg.Ref == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	c := cfg
	f.images[cfg.Ref] = &c
	f.imageAsked[cfg.Ref] = true
	for k := range f.imageWaiters[cfg.Ref] {
		if f.sandboxes[k] == nil {
			delete(f.imageWaiters[cfg.Ref], k) // the sandbox is gone
			continue
		}
		f.enqueue(k)
	}
	if cfg.Err == "" {
		// A failed read stays watched: kube/ retries it, and the sandboxes
		// showing "image config unreadable" must hear the later answer.
		delete(f.imageWaiters, cfg.Ref)
	}
	f.process(f.opts.Now())
	f.notify()
}

// PendingImageChecks returns the image references (digest references when
// the runtime reported one) of keep-alive main containers whose config is not
// known yet. Each is returned once until SetImageConfig answers it.
func (f *Fleet) PendingImageChecks() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, k := range f.imagePending {
		if f.images[k] == nil && !f.imageAsked[k] {
			f.imageAsked[k] = true
			out = append(out, k)
		}
	}
	f.imagePending = f.imagePending[:0]
	return out
}

// needImage returns the config of image ref, and notes that sandbox key
// waits for it while it is unknown or its read failed.
func (f *Fleet) needImage(ref, key string) *model.ImageConfig {
	cfg := f.images[ref]
	if cfg != nil && cfg.Err == "" {
		return cfg
	}
	w := f.imageWaiters[ref]
	if w == nil {
		w = make(map[string]struct{})
		f.imageWaiters[ref] = w
		if !f.imageAsked[ref] {
			f.imagePending = append(f.imagePending, ref)
		}
	}
	w[key] = struct{}{}
	return cfg
}
