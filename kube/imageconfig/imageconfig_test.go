package imageconfig_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/kube/imageconfig/registrytest"
	"github.com/sandscope/sandscope/model"
)

func newReader(opts imageconfig.Options) *imageconfig.Reader {
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Second
	}
	return imageconfig.New(opts)
}

// startWithImage starts a registry holding repoTag, an image whose
// entrypoint is entrypoint, with its request log emptied after the push.
func startWithImage(t *testing.T, repoTag, entrypoint string) (reg *registrytest.Registry, ref string) {
	t.Helper()
	reg = registrytest.Start(t)
	ref, _ = reg.PushImage(t, repoTag, []string{entrypoint}, nil)
	reg.ResetRequests()
	return reg, ref
}

func asError(t *testing.T, err error) *imageconfig.Error {
	t.Helper()
	var ie *imageconfig.Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %v (%T) is not an *imageconfig.Error", err, err)
	}
	return ie
}

func TestReadEntrypointAndCmd(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	both, bothDigest := reg.PushImage(t, "app:both", []string{"/bin/server", "--port"}, []string{"8080"})
	cmdOnly, _ := reg.PushImage(t, "app:cmd", nil, []string{"python", "-m", "http.server"})
	epOnly, _ := reg.PushImage(t, "app:ep", []string{"/entry.sh"}, nil)
	r := newReader(imageconfig.Options{})

	tests := []struct {
		ref  string
		argv []string
	}{
		{both, []string{"/bin/server", "--port", "8080"}},
		{cmdOnly, []string{"python", "-m", "http.server"}},
		{epOnly, []string{"/entry.sh"}},
		{reg.Host + "/app@" + bothDigest, []string{"/bin/server", "--port", "8080"}},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			cfg, err := r.Read(context.Background(), tt.ref)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if got := imageconfig.Argv(cfg); !reflect.DeepEqual(got, tt.argv) {
				t.Errorf("argv = %q, want %q", got, tt.argv)
			}
			if cfg.Ref != tt.ref || cfg.Digest == "" || cfg.Err != "" {
				t.Errorf("cfg = %+v", cfg)
			}
		})
	}
	cfg, _ := r.Read(context.Background(), both)
	if cfg.Digest != bothDigest {
		t.Errorf("digest = %s, want the pushed manifest digest %s", cfg.Digest, bothDigest)
	}
}

func TestReadNeverFetchesLayers(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	img := registrytest.Image(t, []string{"/srv"}, nil)
	ref, _ := reg.Push(t, "app:v1", img)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	cfgName, _ := img.ConfigName()
	reg.ResetRequests()
	if _, err := newReader(imageconfig.Options{}).Read(context.Background(), ref); err != nil {
		t.Fatalf("Read: %v", err)
	}
	var blobs []string
	for _, req := range reg.Requests() {
		if strings.Contains(req, "/blobs/") {
			blobs = append(blobs, req)
		}
		for _, l := range layers {
			d, _ := l.Digest()
			if strings.Contains(req, d.String()) {
				t.Errorf("layer fetched: %s", req)
			}
		}
	}
	if len(blobs) != 1 || !strings.HasSuffix(blobs[0], cfgName.String()) {
		t.Errorf("blob requests = %q, want only the config blob %s", blobs, cfgName)
	}
}

func TestReadNoEntrypoint(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	ref, digest := reg.PushImage(t, "bare:v1", nil, nil)
	r := newReader(imageconfig.Options{})
	for i := 0; i < 2; i++ { // the second read comes from the cache and must say the same
		cfg, err := r.Read(context.Background(), ref)
		ie := asError(t, err)
		if ie.Kind != imageconfig.NoEntrypoint || ie.Retryable() {
			t.Fatalf("read %d: kind %s retryable %v, want NoEntrypoint, false", i, ie.Kind, ie.Retryable())
		}
		if cfg.Digest != digest {
			t.Errorf("read %d: config not returned with the error: %+v", i, cfg)
		}
	}
}

func TestReadIndexPlatforms(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	ref, indexDigest := reg.PushIndex(t, "multi:v1", map[string]v1.Image{
		"linux/amd64": registrytest.Image(t, []string{"/amd64"}, []string{"run"}),
		"linux/arm64": registrytest.Image(t, []string{"/arm64"}, []string{"run"}),
	})
	tests := []struct {
		platform string
		argv     []string
		kind     imageconfig.Kind
	}{
		{"", []string{"/amd64", "run"}, ""},
		{"linux/arm64", []string{"/arm64", "run"}, ""},
		{"linux/s390x", nil, imageconfig.NotFound},
	}
	for _, tt := range tests {
		t.Run("platform="+tt.platform, func(t *testing.T) {
			opts := imageconfig.Options{}
			if tt.platform != "" {
				p, err := imageconfig.ParsePlatform(tt.platform)
				if err != nil {
					t.Fatal(err)
				}
				opts.Platform = p
			}
			cfg, err := newReader(opts).Read(context.Background(), ref)
			if tt.kind != "" {
				ie := asError(t, err)
				if ie.Kind != tt.kind || ie.Retryable() {
					t.Fatalf("kind %s retryable %v, want %s, false (%v)", ie.Kind, ie.Retryable(), tt.kind, err)
				}
				if !strings.Contains(err.Error(), "s390x") {
					t.Errorf("error does not name the platform: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if got := imageconfig.Argv(cfg); !reflect.DeepEqual(got, tt.argv) {
				t.Errorf("argv = %q, want %q", got, tt.argv)
			}
			if cfg.Digest != indexDigest {
				t.Errorf("digest = %s, want the index digest %s", cfg.Digest, indexDigest)
			}
		})
	}
}

// registryAnswering serves /v2/ and answers every other path with status and
// a registry error code.
func registryAnswering(t *testing.T, status int, code string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v2/" {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": "test"}}})
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestReadFailureKinds(t *testing.T) {
	reg := registrytest.Start(t)
	reg.PushImage(t, "exists:v1", []string{"/x"}, nil)
	closed := registrytest.ClosedPort(t)
	stall := registrytest.Stalling(t, time.Minute)
	unauthorized := registryAnswering(t, http.StatusUnauthorized, "UNAUTHORIZED")
	denied := registryAnswering(t, http.StatusForbidden, "DENIED")
	unavailable := registryAnswering(t, http.StatusServiceUnavailable, "UNAVAILABLE")

	tests := []struct {
		name      string
		ref       string
		kind      imageconfig.Kind
		retryable bool
		host      string
	}{
		{"missing tag", reg.Host + "/exists:nope", imageconfig.NotFound, false, reg.Host},
		{"missing repo", reg.Host + "/nothing:v1", imageconfig.NotFound, false, reg.Host},
		{"connection refused", closed + "/app:v1", imageconfig.Unreachable, true, closed},
		{"dns", "no-such-host.invalid/app:v1", imageconfig.Unreachable, true, "no-such-host.invalid"},
		{"stall", stall.Host + "/app:v1", imageconfig.Timeout, true, stall.Host},
		{"401", unauthorized + "/app:v1", imageconfig.Unauthorized, false, unauthorized},
		{"403", denied + "/app:v1", imageconfig.Unauthorized, false, denied},
		{"503", unavailable + "/app:v1", imageconfig.Unreachable, true, unavailable},
		{"invalid", "UPPER/Case::bad", imageconfig.Invalid, false, ""},
	}
	r := newReader(imageconfig.Options{Timeout: 500 * time.Millisecond})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := r.Read(context.Background(), tt.ref)
			ie := asError(t, err)
			if ie.Kind != tt.kind || ie.Retryable() != tt.retryable {
				t.Fatalf("kind %s retryable %v, want %s %v (%v)", ie.Kind, ie.Retryable(), tt.kind, tt.retryable, err)
			}
			if tt.host != "" && (ie.Host != tt.host || !strings.Contains(err.Error(), tt.host)) {
				t.Errorf("error does not name host %s: host=%q %v", tt.host, ie.Host, err)
			}
			if cfg.Err == "" || cfg.Ref != tt.ref {
				t.Errorf("cfg.Err/Ref not set: %+v", cfg)
			}
		})
	}
}

func TestReadCanceled(t *testing.T) {
	t.Parallel()
	stall := registrytest.Stalling(t, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := newReader(imageconfig.Options{}).Read(ctx, stall.Host+"/app:v1")
	if ie := asError(t, err); ie.Kind != imageconfig.Canceled {
		t.Fatalf("kind = %s, want Canceled (%v)", ie.Kind, err)
	}
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func manifestGets(reg *registrytest.Registry) int {
	n := 0
	for _, req := range reg.Requests() {
		if strings.HasPrefix(req, "GET ") && strings.Contains(req, "/manifests/") {
			n++
		}
	}
	return n
}

func TestCacheByDigestAndTagTTL(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	ref, d1 := reg.PushImage(t, "app:v1", []string{"/one"}, nil)
	clk := &clock{now: time.Unix(1_000_000, 0)}
	r := newReader(imageconfig.Options{TagTTL: 10 * time.Second, Now: clk.Now})
	ctx := context.Background()

	if _, err := r.Read(ctx, ref); err != nil {
		t.Fatal(err)
	}
	reg.ResetRequests()
	cfg, err := r.Read(ctx, ref)
	if err != nil || cfg.Digest != d1 {
		t.Fatalf("cached read: %+v %v", cfg, err)
	}
	if _, err := r.Read(ctx, reg.Host+"/app@"+d1); err != nil {
		t.Fatal(err)
	}
	if n := len(reg.Requests()); n != 0 {
		t.Errorf("cached reads went to the registry: %q", reg.Requests())
	}

	// Retag: within the TTL the old digest is still answered; after it the
	// tag is resolved again and the new image is read.
	_, d2 := reg.PushImage(t, "app:v1", []string{"/two"}, nil)
	clk.Advance(11 * time.Second)
	cfg, err = r.Read(ctx, ref)
	if err != nil || cfg.Digest != d2 || cfg.Entrypoint[0] != "/two" {
		t.Fatalf("after TTL: %+v %v, want digest %s", cfg, err, d2)
	}
}

func TestFailuresNotCachedByDefault(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	ref := reg.Host + "/late:v1"
	r := newReader(imageconfig.Options{})
	if _, err := r.Read(context.Background(), ref); asError(t, err).Kind != imageconfig.NotFound {
		t.Fatalf("want NotFound, got %v", err)
	}
	reg.PushImage(t, "late:v1", []string{"/late"}, nil)
	if _, err := r.Read(context.Background(), ref); err != nil {
		t.Fatalf("a failure was remembered: %v", err)
	}
}

func TestFailureTTL(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	ref := reg.Host + "/late:v1"
	clk := &clock{now: time.Unix(1_000_000, 0)}
	r := newReader(imageconfig.Options{FailureTTL: 2 * time.Second, Now: clk.Now})
	if _, err := r.Read(context.Background(), ref); err == nil {
		t.Fatal("want NotFound")
	}
	reg.PushImage(t, "late:v1", []string{"/late"}, nil)
	if _, err := r.Read(context.Background(), ref); err == nil {
		t.Fatal("failure within FailureTTL was not remembered")
	}
	clk.Advance(3 * time.Second)
	if _, err := r.Read(context.Background(), ref); err != nil {
		t.Fatalf("failure outlived FailureTTL: %v", err)
	}
}

func TestConcurrentReadsMerge(t *testing.T) {
	t.Parallel()
	reg, ref := startWithImage(t, "app:v1", "/x")
	r := newReader(imageconfig.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.Read(context.Background(), ref)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := manifestGets(reg); n != 1 {
		t.Errorf("20 concurrent reads made %d manifest GETs, want 1", n)
	}
}

func TestConcurrencyBound(t *testing.T) {
	stall := registrytest.Stalling(t, time.Minute)
	r := newReader(imageconfig.Options{Concurrency: 1, Timeout: time.Second})
	first := make(chan error, 1)
	go func() {
		_, err := r.Read(context.Background(), stall.Host+"/a:v1")
		first <- err
	}()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return stall.Hits() > 0, nil
	}); err != nil {
		t.Fatal("the first read never reached the registry")
	}
	// The only slot is taken for a second: these wait and time out without
	// ever reaching the registry.
	var wg sync.WaitGroup
	for _, repo := range []string{"b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := r.Read(ctx, stall.Host+"/"+repo+":v1")
			if ie := asError(t, err); ie.Kind != imageconfig.Timeout {
				t.Errorf("%s: kind %s, want Timeout", repo, ie.Kind)
			}
		}()
	}
	wg.Wait()
	if h := stall.Hits(); h != 1 {
		t.Errorf("registry saw %d requests with Concurrency 1, want 1", h)
	}
	if ie := asError(t, <-first); ie.Kind != imageconfig.Timeout {
		t.Errorf("first: kind %s, want Timeout", ie.Kind)
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *imageconfig.Error
		want string
	}{
		{&imageconfig.Error{Kind: imageconfig.Unreachable, Host: "reg:5000", Ref: "reg:5000/a", Err: errors.New("dial tcp: connection refused")},
			"registry reg:5000 unreachable: dial tcp: connection refused"},
		{&imageconfig.Error{Kind: imageconfig.Timeout, Host: "reg", Ref: "reg/a", Err: errors.New("no answer within 5s")},
			"registry reg timed out: no answer within 5s"},
		{&imageconfig.Error{Kind: imageconfig.NoEntrypoint, Host: "reg", Ref: "reg/a"},
			"image reg/a has neither ENTRYPOINT nor CMD"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// BenchmarkReadFailure reports how long a failing read takes against a
// closed port and a registry that stalls past the deadline (target: the
// deadline + 1 s at most; a closed port should fail at once).
func BenchmarkReadFailure(b *testing.B) {
	const deadline = time.Second
	for _, tc := range []struct{ name, host string }{
		{"closed-port", registrytest.ClosedPort(b)},
		{"stalling", registrytest.Stalling(b, time.Minute).Host},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := imageconfig.New(imageconfig.Options{Timeout: deadline})
			var worst time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				_, err := r.Read(context.Background(), tc.host+"/app:v1")
				if err == nil {
					b.Fatal("read succeeded")
				}
				worst = max(worst, time.Since(start))
			}
			b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
			b.ReportMetric(float64(deadline.Milliseconds()), "deadline-ms")
		})
	}
}

// The images are the tenants' choice: a config blob larger than
// MaxConfigBytes, an argv longer than the caps and a registry answer that
// never ends are refused, not read into memory.
func TestReadBounded(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	big, _ := reg.PushImage(t, "app:big", []string{strings.Repeat("x", imageconfig.MaxConfigBytes+1)}, nil)
	long, _ := reg.PushImage(t, "app:long", make([]string, imageconfig.MaxArgvEntries+1), nil)
	wide, _ := reg.PushImage(t, "app:wide", []string{strings.Repeat("y", imageconfig.MaxArgvBytes+1)}, nil)
	r := newReader(imageconfig.Options{})
	for _, ref := range []string{big, long, wide} {
		_, err := r.Read(context.Background(), ref)
		if e := asError(t, err); e.Kind != imageconfig.Registry {
			t.Errorf("%s: kind %s (%v), want Registry", ref, e.Kind, err)
		}
	}

	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v2/" {
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for range 1024 { // 64 MiB of a manifest
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(endless.Close)
	host := strings.TrimPrefix(endless.URL, "http://")
	_, err := r.Read(context.Background(), host+"/app:endless")
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Fatalf("endless manifest: %v, want a MaxBytesError", err)
	}
}

type operatorKeychain struct{}

func (operatorKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: "operator", Password: "secret"}, nil
}

// Anonymous: a registry that asks for credentials gets none, even with a
// keychain that has them; the control read shows that it would.
func TestReadAnonymousSendsNoCredentials(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sawAuth []string
	h := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		if a := req.Header.Get("Authorization"); a != "" {
			sawAuth = append(sawAuth, req.Method+" "+req.URL.Path)
		}
		mu.Unlock()
		if req.URL.Path == "/v2/" && req.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := name.ParseReference(host + "/app:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, registrytest.Image(t, []string{"/srv"}, nil), remote.WithAuthFromKeychain(operatorKeychain{})); err != nil {
		t.Fatal(err)
	}
	read := func(anonymous bool) []string {
		mu.Lock()
		sawAuth = nil
		mu.Unlock()
		r := newReader(imageconfig.Options{Keychain: operatorKeychain{}, Anonymous: anonymous, TagTTL: -1})
		if _, err := r.Read(context.Background(), host+"/app:1"); err != nil {
			t.Fatalf("anonymous %v: %v", anonymous, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return sawAuth
	}
	if got := read(false); len(got) == 0 {
		t.Fatal("control: the keychain's credentials were never sent")
	}
	if got := read(true); len(got) != 0 {
		t.Fatalf("anonymous read sent credentials with %v", got)
	}
}

// Registries: a reference to another registry fails as NotAllowed, and
// nothing is sent to it.
func TestReadRegistryAllowlist(t *testing.T) {
	t.Parallel()
	reg, ref := startWithImage(t, "app:1", "/srv")
	r := newReader(imageconfig.Options{Registries: []string{"registry.example", "docker.io"}})
	_, err := r.Read(context.Background(), ref)
	if e := asError(t, err); e.Kind != imageconfig.NotAllowed || !strings.Contains(err.Error(), reg.Host) {
		t.Fatalf("kind %s: %v", e.Kind, err)
	}
	if got := reg.Requests(); len(got) != 0 {
		t.Fatalf("requests sent to a registry not allowed: %v", got)
	}
	ok := newReader(imageconfig.Options{Registries: []string{reg.Host}})
	if _, err := ok.Read(context.Background(), ref); err != nil {
		t.Fatalf("allowed registry: %v", err)
	}
}

// countingReader stands in for the registries (as the demo's simulation
// does) and counts what it is asked.
type countingReader struct{ asked []string }

func (c *countingReader) Read(_ context.Context, ref string) (model.ImageConfig, error) {
	c.asked = append(c.asked, ref)
	return model.ImageConfig{Ref: ref, Cmd: []string{"python3"}}, nil
}

// Restrict holds another reader to the allowlist: a reference elsewhere
// fails exactly as the Reader's own read does, and the other reader is not
// asked; one inside is its answer.
func TestRestrictAppliesTheAllowlist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newReader(imageconfig.Options{Registries: []string{"registry.example"}})
	inner := &countingReader{}
	held := r.Restrict(inner)
	for _, ref := range []string{"other.example/app:1", "python:3.12", "not a reference"} {
		cfg, err := held.Read(ctx, ref)
		wantCfg, want := r.Read(ctx, ref)
		if err == nil || err.Error() != want.Error() || cfg.Err != wantCfg.Err || cfg.Ref != ref {
			t.Errorf("%s: %v (config %+v); want the reader's own %v", ref, err, cfg, want)
		}
	}
	if _, err := held.Read(ctx, "registry.example/app:1"); err != nil {
		t.Errorf("allowed registry: %v", err)
	}
	if !reflect.DeepEqual(inner.asked, []string{"registry.example/app:1"}) {
		t.Errorf("the restricted reader was asked %v; want only the allowed image", inner.asked)
	}
	if got := newReader(imageconfig.Options{}).Restrict(inner); got != imageconfig.ConfigReader(inner) {
		t.Errorf("no allowlist: %T, want the reader itself", got)
	}
}
