package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
)

// Images of the simulated fleet. Their configs are answered by ImageReader,
// never by a network registry.
const (
	ImagePython      = "registry.demo.local/sandbox/python:3.12"          // CMD python3
	ImageTrainer     = "registry.demo.local/rl/trainer-env:2026.11"       // ENTRYPOINT tini -- /srv/start-env.sh (read from the registry at create)
	ImageScorer      = "registry.demo.local/eval/scorer:1.8"              // ENTRYPOINT uvicorn (liveness-probed)
	ImageBashBox     = "registry.demo.local/tools/bash-box:latest"        // ENTRYPOINT tini -- , CMD bash (exits at once without a terminal)
	ImageUnreachable = "registry.unreachable.demo.local/private/agent:7"  // the registry does not answer
	ImageExecd       = "registry.demo.local/opensandbox/execd:v1.4.2"     // the execd-installer init container
	ImageMissing     = "registry.demo.local/sandbox/python:3.12-typo-tag" // ImagePullBackOff (FAILED_STICKY)
)

type imageSpec struct {
	entrypoint, cmd []string
	unreachable     bool // sandscope's reads of its config time out (the nodes still pull it)
	pullFails       bool // the kubelet cannot pull it: ErrImagePull, then ImagePullBackOff
}

var imageCatalog = map[string]imageSpec{
	ImagePython:      {cmd: []string{"python3"}},
	ImageTrainer:     {entrypoint: []string{"/usr/bin/tini", "--", "/srv/start-env.sh"}, cmd: []string{"--serve", "0.0.0.0:8000"}},
	ImageScorer:      {entrypoint: []string{"uvicorn", "scorer.app:app"}, cmd: []string{"--host", "0.0.0.0", "--port", "8080"}},
	ImageBashBox:     {entrypoint: []string{"/usr/bin/tini", "--"}, cmd: []string{"bash"}},
	ImageUnreachable: {unreachable: true},
	ImageExecd:       {entrypoint: []string{"/execd"}},
	ImageMissing:     {cmd: []string{"python3"}, pullFails: true},
}

// imageDigest is a stable fake digest for an image reference.
func imageDigest(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// imageID is what a kubelet writes into containerStatuses.imageID.
func imageID(ref string) string {
	repo := ref
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo = ref[:i]
	}
	return repo + "@" + imageDigest(ref)
}

// ImageReader answers image-config reads from the simulation's catalog, so
// the demo never reaches a registry. It satisfies the kube watcher's
// ImageConfigReader and actions/create's ImageReader: Read(ctx, ref)
// (model.ImageConfig, error). A reference may be a tag ("repo:tag"), a
// digest ("repo@sha256:...") or an imageID.
//
// Failures are *imageconfig.Error values of the Kind the real reader would
// give, so a create refuses the same way it would against a registry: the
// unreachable registry is Unreachable (retryable), an image the demo
// registry does not have is NotFound.
type ImageReader struct{}

// Read returns the config of ref, or an error that reads like a registry
// failure for the images on the unreachable registry.
func (ImageReader) Read(ctx context.Context, ref string) (model.ImageConfig, error) {
	fail := func(kind imageconfig.Kind, host string, cause error) (model.ImageConfig, error) {
		err := &imageconfig.Error{Kind: kind, Host: host, Ref: ref, Err: cause}
		return model.ImageConfig{Ref: ref, Err: err.Error()}, err
	}
	host := registryHost(ref)
	if err := ctx.Err(); err != nil {
		kind := imageconfig.Canceled
		if errors.Is(err, context.DeadlineExceeded) {
			kind = imageconfig.Timeout
		}
		return fail(kind, host, err)
	}
	tag, spec, ok := lookupImage(ref)
	if !ok {
		if _, err := name.ParseReference(strings.TrimPrefix(ref, "docker-pullable://")); err != nil {
			return fail(imageconfig.Invalid, host, err)
		}
		return fail(imageconfig.NotFound, host, errors.New("MANIFEST_UNKNOWN: manifest unknown to the demo registry"))
	}
	if spec.unreachable {
		return fail(imageconfig.Unreachable, host, fmt.Errorf("Get \"https://%s/v2/\": dial tcp 10.96.14.3:443: i/o timeout", host))
	}
	return model.ImageConfig{
		Ref:        ref,
		Digest:     imageDigest(tag),
		Entrypoint: append([]string(nil), spec.entrypoint...),
		Cmd:        append([]string(nil), spec.cmd...),
	}, nil
}

// registryHost is the registry a reference names ("index.docker.io" for a
// bare "python:3.12"), as the real reader reports it.
func registryHost(ref string) string {
	parsed, err := name.ParseReference(strings.TrimPrefix(ref, "docker-pullable://"))
	if err != nil {
		return ""
	}
	return parsed.Context().RegistryStr()
}

// pullable says whether the simulated kubelet can pull image: the demo
// registry has it and it is not one whose pulls fail. The unreachable
// registry answers the nodes (it is only unreachable from where sandscope
// runs), as in the unreadable-image scenario.
func pullable(image string) bool {
	_, spec, ok := lookupImage(image)
	return ok && !spec.pullFails
}

// lookupImage finds a catalog entry by tag, digest reference or imageID.
func lookupImage(ref string) (string, imageSpec, bool) {
	ref = strings.TrimPrefix(ref, "docker-pullable://")
	if spec, ok := imageCatalog[ref]; ok {
		return ref, spec, true
	}
	if i := strings.Index(ref, "@"); i >= 0 {
		digest := ref[i+1:]
		for tag, spec := range imageCatalog {
			if imageDigest(tag) == digest {
				return tag, spec, true
			}
		}
	}
	return "", imageSpec{}, false
}
