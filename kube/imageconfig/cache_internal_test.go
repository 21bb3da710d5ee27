package imageconfig

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/sandscope/sandscope/model"
)

// The digest cache stays within maxCachedBytes however large the argvs.
func TestDigestCacheBoundedInBytes(t *testing.T) {
	t.Parallel()
	r := New(Options{})
	arg := strings.Repeat("a", MaxArgvBytes-100)
	for i := range 500 {
		d := fmt.Sprintf("sha256:%064d", i)
		ref, err := name.NewDigest("registry.example/app@" + d)
		if err != nil {
			t.Fatal(err)
		}
		r.remember(ref, model.ImageConfig{Digest: d, Entrypoint: []string{arg}}, nil)
		if r.cachedBytes > maxCachedBytes {
			t.Fatalf("after %d configs the cache holds %d bytes", i+1, r.cachedBytes)
		}
	}
	sum := 0
	for _, c := range r.byDigest {
		sum += configBytes(c)
	}
	if sum != r.cachedBytes || len(r.byDigest) == 0 {
		t.Fatalf("accounted %d bytes, holds %d in %d entries", r.cachedBytes, sum, len(r.byDigest))
	}
}
