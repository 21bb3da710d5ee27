package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/sandscope/sandscope/model"
)

// Images of the simulated fleet. Their configs are answered by ImageReader,
// never by a network registry.
const (
	ImagePython      = "registry.demo.local/sandbox/python:3.12"          // CMD python3
	ImageTrainer     = "registry.demo.local/rl/trainer-env:2026.11"       // ENTRYPOINT tini -- /srv/start-env.sh (incident 000)
	ImageScorer      = "registry.demo.local/eval/scorer:1.8"              // ENTRYPOINT uvicorn (incident 003)
	ImageBashBox     = "registry.demo.local/tools/bash-box:latest"        // ENTRYPOINT tini -- , CMD bash (incident 002)
	ImageUnreachable = "registry.unreachable.demo.local/private/agent:7"  // the registry does not answer
	ImageExecd       = "registry.demo.local/opensandbox/execd:v1.4.2"     // the execd-installer init container
	ImageMissing     = "registry.demo.local/sandbox/python:3.12-typo-tag" // ImagePullBackOff (FAILED_STICKY)
)

type imageSpec struct {
	entrypoint, cmd []string
	unreachable     bool
}

var imageCatalog = map[string]imageSpec{
	ImagePython:      {cmd: []string{"python3"}},
	ImageTrainer:     {entrypoint: []string{"/usr/bin/tini", "--", "/srv/start-env.sh"}, cmd: []string{"--serve", "0.0.0.0:8000"}},
	ImageScorer:      {entrypoint: []string{"uvicorn", "scorer.app:app"}, cmd: []string{"--host", "0.0.0.0", "--port", "8080"}},
	ImageBashBox:     {entrypoint: []string{"/usr/bin/tini", "--"}, cmd: []string{"bash"}},
	ImageUnreachable: {unreachable: true},
	ImageExecd:       {entrypoint: []string{"/execd"}},
	ImageMissing:     {cmd: []string{"python3"}},
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
// ImageConfigReader: Read(ctx, ref) (model.ImageConfig, error). A reference
// may be a tag ("repo:tag"), a digest ("repo@sha256:...") or an imageID.
type ImageReader struct{}

// Read returns the config of ref, or an error that reads like a registry
// failure for the images on the unreachable registry.
func (ImageReader) Read(ctx context.Context, ref string) (model.ImageConfig, error) {
	if err := ctx.Err(); err != nil {
		return model.ImageConfig{Ref: ref, Err: err.Error()}, err
	}
	tag, spec, ok := lookupImage(ref)
	if !ok {
		err := fmt.Errorf("reading image config of %s: MANIFEST_UNKNOWN: manifest unknown to the demo registry", ref)
		return model.ImageConfig{Ref: ref, Err: err.Error()}, err
	}
	if spec.unreachable {
		host := tag[:strings.Index(tag, "/")]
		err := fmt.Errorf("reading image config of %s: Get \"https://%s/v2/\": dial tcp 10.96.14.3:443: i/o timeout", ref, host)
		return model.ImageConfig{Ref: ref, Err: err.Error()}, err
	}
	return model.ImageConfig{
		Ref:        ref,
		Digest:     imageDigest(tag),
		Entrypoint: append([]string(nil), spec.entrypoint...),
		Cmd:        append([]string(nil), spec.cmd...),
	}, nil
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
