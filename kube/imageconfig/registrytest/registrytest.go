// Package registrytest runs in-process OCI registries for tests: a real
// go-containerregistry registry on a loopback port (plain HTTP, which ggcr
// uses for 127.0.0.1), images pushed with or without ENTRYPOINT/CMD,
// multi-platform indexes, a closed port, and a registry that stalls.
package registrytest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/sandscope/sandscope/internal/deadserver"
)

// Registry is a live in-process registry.
type Registry struct {
	Host   string // "127.0.0.1:port"
	Server *httptest.Server

	mu       sync.Mutex
	requests []string // "METHOD /path"
}

// Start runs a registry until the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{}
	h := registry.New(registry.Logger(nopLogger()))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Server.Close)
	r.Host = strings.TrimPrefix(r.Server.URL, "http://")
	return r
}

// Requests returns the requests served so far ("GET /v2/...").
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// ResetRequests forgets the recorded requests.
func (r *Registry) ResetRequests() {
	r.mu.Lock()
	r.requests = nil
	r.mu.Unlock()
}

// Image builds a small random image whose config has entrypoint and cmd
// (either may be nil).
func Image(t testing.TB, entrypoint, cmd []string) v1.Image {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatalf("random image: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("config file: %v", err)
	}
	cf = cf.DeepCopy()
	cf.Config.Entrypoint = entrypoint
	cf.Config.Cmd = cmd
	cf.OS, cf.Architecture = "linux", "amd64"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatalf("mutate config: %v", err)
	}
	return img
}

// Push writes img as repo:tag ("app:v1") and returns the full reference
// (host/repo:tag) and the manifest digest.
func (r *Registry) Push(t testing.TB, repoTag string, img v1.Image) (ref, digest string) {
	t.Helper()
	return r.push(t, repoTag, img)
}

// push writes an image or an index with its blobs and children as repoTag
// and returns the full reference and its digest.
func (r *Registry) push(t testing.TB, repoTag string, manifest interface {
	remote.Taggable
	Digest() (v1.Hash, error)
}) (ref, digest string) {
	t.Helper()
	ref = r.Host + "/" + repoTag
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatalf("parse %s: %v", ref, err)
	}
	if err := remote.Push(tag, manifest); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := manifest.Digest()
	if err != nil {
		t.Fatalf("digest of %s: %v", ref, err)
	}
	return ref, d.String()
}

// PushImage builds and pushes an image with entrypoint and cmd.
func (r *Registry) PushImage(t testing.TB, repoTag string, entrypoint, cmd []string) (ref, digest string) {
	t.Helper()
	return r.Push(t, repoTag, Image(t, entrypoint, cmd))
}

// PushIndex pushes a multi-platform index with one image per platform
// ("linux/amd64" → image) and returns the reference and the index digest.
func (r *Registry) PushIndex(t testing.TB, repoTag string, images map[string]v1.Image) (ref, digest string) {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for platform, img := range images {
		p, err := v1.ParsePlatform(platform)
		if err != nil {
			t.Fatalf("platform %s: %v", platform, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return r.push(t, repoTag, idx)
}

// ClosedPort returns "127.0.0.1:port" where nothing listens (connection refused).
func ClosedPort(t testing.TB) string {
	t.Helper()
	return deadserver.Refusing(t)
}

// Stall is a server that accepts requests and answers nothing for a
// while, like a registry behind a blackholing proxy.
type Stall struct {
	Host string // "127.0.0.1:port"
	hits atomic.Int64
}

// Hits is the number of requests that reached the handler.
func (s *Stall) Hits() int { return int(s.hits.Load()) }

// Stalling runs a Stall that holds every request for delay (or until the
// test ends) and then answers 503.
func Stalling(t testing.TB, delay time.Duration) *Stall {
	t.Helper()
	s := &Stall{}
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.hits.Add(1)
		select {
		case <-time.After(delay):
		case <-stop:
		case <-req.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	s.Host = strings.TrimPrefix(srv.URL, "http://")
	return s
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
