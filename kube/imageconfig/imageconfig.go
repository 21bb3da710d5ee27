// Package imageconfig reads an image's start command from its registry: the
// manifest (an index is resolved to the requested platform) and the config
// blob, never a layer. It is how sandscope learns what an image would run
// before it creates a sandbox from it (the engine replaces the
// image's ENTRYPOINT, so somebody has to put it back or refuse).
//
// A Reader bounds every read by a deadline (queueing included), bounds the
// reads in flight, merges concurrent reads of the same reference, and caches
// successful reads by digest (plus tag→digest for a short TTL). Failures are
// not cached by default: a cached failure is what hid the incident's 46
// broken creates. Every failure is an *Error that names the registry host,
// the cause and whether trying again can help.
package imageconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/model"
)

// Defaults of Options.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultConcurrency = 4
	DefaultTagTTL      = 30 * time.Second
	// maxCached bounds the digest cache; configs are a few hundred bytes each.
	maxCached = 4096
	// The images are the tenants' choice, and so is what their registry
	// answers. A config blob is a few KB: MaxConfigBytes refuses one
	// declared larger (go-containerregistry verifies the declared size as
	// it reads). maxResponseBytes bounds every other answer (a manifest,
	// an index, a token), which go-containerregistry lets reach 100 MiB.
	MaxConfigBytes   = 1 << 20
	maxResponseBytes = 4 << 20
	// MaxArgvEntries and MaxArgvBytes bound ENTRYPOINT+CMD: the argv is
	// cached, shown and written into the sandbox's spec.
	MaxArgvEntries = 256
	MaxArgvBytes   = 64 << 10
	// maxCachedBytes bounds the digest cache in bytes as well as entries.
	maxCachedBytes = 4 << 20
)

// DefaultPlatform is the platform an index is resolved to when none is given.
var DefaultPlatform = v1.Platform{OS: "linux", Architecture: "amd64"}

// Options configure a Reader. Zero values take the defaults.
type Options struct {
	// Timeout bounds one Read, including the wait for a free slot. Default 5s.
	Timeout time.Duration
	// Platform an index is resolved to. Default linux/amd64.
	Platform *v1.Platform
	// Keychain supplies registry credentials. Default authn.DefaultKeychain
	// (docker config, credential helpers).
	Keychain authn.Keychain
	// Concurrency bounds the reads in flight. Default 4.
	Concurrency int
	// Transport for registry requests. Default remote.DefaultTransport.
	Transport http.RoundTripper
	// TagTTL is how long a tag stays resolved to a digest. Default 30s;
	// negative disables the tag cache.
	TagTTL time.Duration
	// FailureTTL is how long a failed read is remembered. Default 0: never.
	// Keep it to a few seconds at most; long-lived failures hide outages.
	FailureTTL time.Duration
	// Now is the clock (tests). Default time.Now.
	Now func() time.Time
	// Anonymous sends no credentials (Keychain is ignored): for reads of
	// images a tenant chose, which the operator's credentials should not
	// vouch for.
	Anonymous bool
	// Registries, when not empty, are the only registry hosts read from
	// ("docker.io" and "index.docker.io" are one); a reference elsewhere
	// fails as NotAllowed without a request.
	Registries []string
}

// Reader reads image configs. Safe for concurrent use.
type Reader struct {
	opts     Options
	allowed  map[string]bool // Options.Registries, normalised; empty: all
	platform v1.Platform
	slots    chan struct{}

	mu          sync.Mutex
	byDigest    map[string]model.ImageConfig // digest → config (immutable)
	cachedBytes int                          // the size of byDigest's entries
	tags        map[string]tagEntry          // ref → digest, with expiry
	failures    map[string]failureEntry      // ref → error, with expiry
	inflight    map[string]*call
}

type tagEntry struct {
	digest  string
	expires time.Time
}

type failureEntry struct {
	cfg     model.ImageConfig
	err     *Error
	expires time.Time
}

type call struct {
	done chan struct{}
	cfg  model.ImageConfig
	err  error
}

// New builds a Reader.
func New(opts Options) *Reader {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Keychain == nil {
		opts.Keychain = authn.DefaultKeychain
	}
	if opts.Anonymous {
		opts.Keychain = authn.NewMultiKeychain() // of none: anonymous for every registry
	}
	allowed := map[string]bool{}
	for _, h := range opts.Registries {
		if reg, err := name.NewRegistry(strings.TrimSpace(h)); err == nil {
			allowed[reg.RegistryStr()] = true
		}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Transport == nil {
		opts.Transport = remote.DefaultTransport
	}
	opts.Transport = limitedBodies{opts.Transport}
	if opts.TagTTL == 0 {
		opts.TagTTL = DefaultTagTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := DefaultPlatform
	if opts.Platform != nil {
		p = *opts.Platform
	}
	return &Reader{
		opts:     opts,
		allowed:  allowed,
		platform: p,
		slots:    make(chan struct{}, opts.Concurrency),
		byDigest: map[string]model.ImageConfig{},
		tags:     map[string]tagEntry{},
		failures: map[string]failureEntry{},
		inflight: map[string]*call{},
	}
}

// Platform is the platform this Reader resolves indexes to.
func (r *Reader) Platform() v1.Platform { return r.platform }

// Timeout is the deadline of one Read.
func (r *Reader) Timeout() time.Duration { return r.opts.Timeout }

// ParsePlatform parses "os/arch[/variant]".
func ParsePlatform(s string) (*v1.Platform, error) {
	p, err := v1.ParsePlatform(s)
	if err != nil {
		return nil, fmt.Errorf("platform %q: %w", s, err)
	}
	if p.OS == "" || p.Architecture == "" {
		return nil, fmt.Errorf("platform %q: want os/arch, e.g. linux/amd64", s)
	}
	return p, nil
}

// Read returns the image config of ref within the Reader's deadline (or
// ctx's, whichever is sooner). On failure the error is an *Error. An image
// that has neither Entrypoint nor Cmd returns its config (with Digest) AND an
// *Error of Kind NoEntrypoint. The returned config's Err is set on failure.
func (r *Reader) Read(ctx context.Context, ref string) (model.ImageConfig, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	cfg, err := r.read(ctx, ref)
	if err != nil {
		cfg.Ref = ref
		cfg.Err = err.Error()
	}
	return cfg, err
}

// admit parses ref and checks its registry against Options.Registries: an
// *Error (Invalid, NotAllowed) when it may not be read.
func (r *Reader) admit(ref string) (name.Reference, error) {
	parsed, err := name.ParseReference(strings.TrimSpace(ref))
	if err != nil {
		return nil, &Error{Kind: Invalid, Ref: ref, Err: err}
	}
	if host := parsed.Context().RegistryStr(); len(r.allowed) > 0 && !r.allowed[host] {
		return nil, &Error{Kind: NotAllowed, Host: host, Ref: ref}
	}
	return parsed, nil
}

// ConfigReader is what reads image configs: a Reader, or a stand-in for
// the registries (the demo's simulated one).
type ConfigReader interface {
	Read(ctx context.Context, ref string) (model.ImageConfig, error)
}

// Restrict returns inner held to r's allowlist (Options.Registries): a
// reference r would refuse fails exactly as r's own Read does, and inner
// is not asked. With no allowlist it is inner itself. For a reader that
// answers in place of the registries under the same flags.
func (r *Reader) Restrict(inner ConfigReader) ConfigReader {
	if len(r.allowed) == 0 {
		return inner
	}
	return restricted{r: r, inner: inner}
}

type restricted struct {
	r     *Reader
	inner ConfigReader
}

func (x restricted) Read(ctx context.Context, ref string) (model.ImageConfig, error) {
	if _, err := x.r.admit(ref); err != nil {
		return model.ImageConfig{Ref: ref, Err: err.Error()}, err
	}
	return x.inner.Read(ctx, ref)
}

func (r *Reader) read(ctx context.Context, ref string) (model.ImageConfig, error) {
	parsed, err := r.admit(ref)
	if err != nil {
		return model.ImageConfig{Ref: ref}, err
	}
	key := parsed.Name()
	if cfg, err, ok := r.cached(parsed); ok {
		cfg.Ref = ref
		return cfg, err
	}

	// Merge concurrent reads of one reference: during an outage 46 creates
	// wait on one read instead of 46. The shared read runs on a context of
	// its own (same deadline, no caller's cancellation), so one caller's
	// Ctrl-C does not fail the others; each caller still stops waiting at
	// its own deadline or cancellation.
	r.mu.Lock()
	c, joined := r.inflight[key]
	if !joined {
		c = &call{done: make(chan struct{})}
		r.inflight[key] = c
		deadline, _ := ctx.Deadline()
		shared, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		crash.Go(func() {
			defer cancel()
			c.cfg, c.err = r.fetch(shared, parsed)
			r.remember(parsed, c.cfg, c.err)
			r.mu.Lock()
			delete(r.inflight, key)
			r.mu.Unlock()
			close(c.done)
		})
	}
	r.mu.Unlock()

	select {
	case <-c.done:
		cfg := c.cfg
		cfg.Ref = ref
		return cfg, c.err
	case <-ctx.Done():
		return model.ImageConfig{Ref: ref}, r.contextError(ctx, parsed, ref)
	}
}

// cached answers from the caches: digest references directly, tags through
// a fresh tag→digest entry, and recent failures when FailureTTL is set.
func (r *Reader) cached(ref name.Reference) (model.ImageConfig, error, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	if f, ok := r.failures[ref.Name()]; ok {
		if now.Before(f.expires) {
			return f.cfg, f.err, true
		}
		delete(r.failures, ref.Name())
	}
	digest := ""
	if d, ok := ref.(name.Digest); ok {
		digest = d.DigestStr()
	} else if t, ok := r.tags[ref.Name()]; ok {
		if now.Before(t.expires) {
			digest = t.digest
		} else {
			delete(r.tags, ref.Name())
		}
	}
	if digest == "" {
		return model.ImageConfig{}, nil, false
	}
	cfg, ok := r.byDigest[digest]
	if !ok {
		return model.ImageConfig{}, nil, false
	}
	return cfg, noEntrypointError(ref, cfg), true
}

func (r *Reader) remember(ref name.Reference, cfg model.ImageConfig, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ie *Error
	if err != nil && !(errors.As(err, &ie) && ie.Kind == NoEntrypoint) {
		if r.opts.FailureTTL > 0 && ie != nil {
			r.failures[ref.Name()] = failureEntry{cfg: cfg, err: ie, expires: r.opts.Now().Add(r.opts.FailureTTL)}
		}
		return
	}
	if cfg.Digest == "" {
		return
	}
	cfg.Ref = ""
	cfg.Err = ""
	if old, ok := r.byDigest[cfg.Digest]; ok {
		r.cachedBytes -= configBytes(old)
		delete(r.byDigest, cfg.Digest)
	}
	size := configBytes(cfg)
	for k, v := range r.byDigest { // drop arbitrary entries; re-reading is cheap
		if len(r.byDigest) < maxCached && r.cachedBytes+size <= maxCachedBytes {
			break
		}
		delete(r.byDigest, k)
		r.cachedBytes -= configBytes(v)
	}
	r.byDigest[cfg.Digest] = cfg
	r.cachedBytes += size
	if _, isDigest := ref.(name.Digest); !isDigest && r.opts.TagTTL > 0 {
		r.tags[ref.Name()] = tagEntry{digest: cfg.Digest, expires: r.opts.Now().Add(r.opts.TagTTL)}
	}
}

// fetch does the registry round trips: manifest (and the platform's child
// manifest for an index), then the config blob.
func (r *Reader) fetch(ctx context.Context, ref name.Reference) (model.ImageConfig, error) {
	cfg := model.ImageConfig{Ref: ref.String()}
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-ctx.Done():
	}
	// A slot and the deadline can be ready together; select picks either.
	if ctx.Err() != nil {
		return cfg, r.contextError(ctx, ref, ref.String())
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithPlatform(r.platform),
		remote.WithAuthFromKeychain(r.opts.Keychain),
		remote.WithTransport(r.opts.Transport),
		// One quick retry for a flaky 5xx; the deadline bounds the rest.
		remote.WithRetryBackoff(remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 2}),
		remote.WithUserAgent("sandscope"),
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return cfg, r.classify(ctx, ref, err)
	}
	cfg.Digest = desc.Digest.String()
	img, err := desc.Image()
	if err != nil {
		return cfg, r.classify(ctx, ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return cfg, r.classify(ctx, ref, err)
	}
	if m.Config.Size > MaxConfigBytes {
		return cfg, &Error{Kind: Registry, Host: ref.Context().RegistryStr(), Ref: ref.String(),
			Err: fmt.Errorf("config blob declared %d bytes, more than the %d read", m.Config.Size, MaxConfigBytes)}
	}
	file, err := img.ConfigFile()
	if err != nil {
		return cfg, r.classify(ctx, ref, err)
	}
	if n, size := len(file.Config.Entrypoint)+len(file.Config.Cmd), argvBytes(file.Config.Entrypoint)+argvBytes(file.Config.Cmd); n > MaxArgvEntries || size > MaxArgvBytes {
		return cfg, &Error{Kind: Registry, Host: ref.Context().RegistryStr(), Ref: ref.String(),
			Err: fmt.Errorf("ENTRYPOINT+CMD is %d entries, %d bytes; at most %d entries, %d bytes are taken", n, size, MaxArgvEntries, MaxArgvBytes)}
	}
	cfg.Entrypoint = append([]string(nil), file.Config.Entrypoint...)
	cfg.Cmd = append([]string(nil), file.Config.Cmd...)
	return cfg, noEntrypointError(ref, cfg)
}

func argvBytes(argv []string) int {
	n := 0
	for _, a := range argv {
		n += len(a)
	}
	return n
}

// configBytes is what a cached config costs, roughly.
func configBytes(cfg model.ImageConfig) int {
	return 64 + len(cfg.Digest) + argvBytes(cfg.Entrypoint) + argvBytes(cfg.Cmd) + 16*(len(cfg.Entrypoint)+len(cfg.Cmd))
}

// limitedBodies cuts every registry answer at maxResponseBytes: reading
// more fails (http.MaxBytesError) instead of filling memory.
type limitedBodies struct{ rt http.RoundTripper }

func (l limitedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = http.MaxBytesReader(nil, resp.Body, maxResponseBytes)
	}
	return resp, err
}

func noEntrypointError(ref name.Reference, cfg model.ImageConfig) error {
	if len(cfg.Entrypoint)+len(cfg.Cmd) > 0 {
		return nil
	}
	return &Error{Kind: NoEntrypoint, Host: ref.Context().RegistryStr(), Ref: ref.String(),
		Err: fmt.Errorf("image %s has neither ENTRYPOINT nor CMD", cfg.Digest)}
}

// Argv is what the image would run under Docker: Entrypoint followed by Cmd.
func Argv(cfg model.ImageConfig) []string {
	argv := make([]string, 0, len(cfg.Entrypoint)+len(cfg.Cmd))
	argv = append(argv, cfg.Entrypoint...)
	return append(argv, cfg.Cmd...)
}

// ResolveDigest returns the digest ref names at its registry, reading the
// same way as Read (so a table keyed by it matches what Read reports).
func (r *Reader) ResolveDigest(ctx context.Context, ref string) (string, error) {
	cfg, err := r.Read(ctx, ref)
	var ie *Error
	if err != nil && !(errors.As(err, &ie) && ie.Kind == NoEntrypoint) {
		return "", err
	}
	return cfg.Digest, nil
}

func (r *Reader) contextError(ctx context.Context, ref name.Reference, raw string) *Error {
	e := &Error{Host: ref.Context().RegistryStr(), Ref: raw}
	if errors.Is(ctx.Err(), context.Canceled) {
		e.Kind, e.Err = Canceled, errors.New("read canceled")
		return e
	}
	e.Kind, e.Err = Timeout, fmt.Errorf("no answer within %s", r.opts.Timeout)
	return e
}

// classify turns a ggcr/net error into an *Error.
func (r *Reader) classify(ctx context.Context, ref name.Reference, err error) *Error {
	e := &Error{Host: ref.Context().RegistryStr(), Ref: ref.String(), Err: err}
	var terr *transport.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		e.Kind = Canceled
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Err = Timeout, fmt.Errorf("no answer within %s (%w)", r.opts.Timeout, err)
	case errors.As(err, &terr):
		e.Kind = kindOfStatus(terr)
	case errors.As(err, &dnsErr), errors.As(err, &certErr), errors.As(err, &unknownAuth),
		errors.As(err, &hostErr), errors.As(err, &recordErr), errors.As(err, &opErr):
		e.Kind = Unreachable
	case errors.As(err, &netErr) && netErr.Timeout():
		e.Kind = Timeout
	case strings.Contains(err.Error(), "no child with platform"):
		e.Kind, e.Err = NotFound, fmt.Errorf("no %s variant: %w", platformString(r.platform), err)
	case strings.Contains(err.Error(), "connection refused"), strings.Contains(err.Error(), "no such host"),
		strings.Contains(err.Error(), "tls:"), strings.Contains(err.Error(), "x509:"):
		// Wrapped by layers that do not keep the typed error.
		e.Kind = Unreachable
	default:
		e.Kind = Registry
	}
	return e
}

func kindOfStatus(terr *transport.Error) Kind {
	for _, d := range terr.Errors {
		switch d.Code {
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
			return NotFound
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return Unauthorized
		case transport.TooManyRequestsErrorCode, transport.UnavailableErrorCode:
			return Unreachable
		}
	}
	switch code := terr.StatusCode; {
	case code == http.StatusNotFound:
		return NotFound
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return Unauthorized
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		// The registry (or a proxy before it) is not serving right now.
		return Unreachable
	}
	return Registry
}

func platformString(p v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}
