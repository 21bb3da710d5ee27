package create

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
)

// Table manages the entrypoint table: image digest → argv. Images are
// resolved to their digest through the registry, so a tag that later
// points at another image is not matched by accident.
type Table struct {
	Clients   *kube.Clients
	Images    ImageReader
	Namespace string
	Name      string // default kube.DefaultEntrypointsConfigMap
	ReadOnly  bool
}

func (t *Table) name() string {
	if t.Name == "" {
		return kube.DefaultEntrypointsConfigMap
	}
	return t.Name
}

func (t *Table) namespace() string {
	if t.Namespace == "" {
		return t.Clients.Namespace
	}
	return t.Namespace
}

// Digest resolves image to its digest: a digest reference as is, anything
// else through the registry. An image without ENTRYPOINT/CMD still has a
// digest (that is the case the table exists for).
func (t *Table) Digest(ctx context.Context, image string) (string, error) {
	if d, err := name.NewDigest(image); err == nil {
		return d.DigestStr(), nil
	}
	cfg, err := t.Images.Read(ctx, image)
	var ie *imageconfig.Error
	if err != nil && !(errors.As(err, &ie) && ie.Kind == imageconfig.NoEntrypoint) {
		return "", fmt.Errorf("resolving %s to a digest: %w", image, err)
	}
	return cfg.Digest, nil
}

// Set stores argv for image's digest and returns the entry stored.
func (t *Table) Set(ctx context.Context, image string, argv []string) (kube.EntrypointEntry, error) {
	if t.ReadOnly {
		return kube.EntrypointEntry{}, nothingCreated(refusal.CodeReadOnly, "read-only mode: the entrypoint table is not changed", false)
	}
	if len(argv) == 0 {
		return kube.EntrypointEntry{}, usage("entrypoints set: give the command after --")
	}
	digest, err := t.Digest(ctx, image)
	if err != nil {
		return kube.EntrypointEntry{}, err
	}
	e := kube.EntrypointEntry{Digest: digest, Argv: argv, Image: image, SetAt: time.Now().UTC().Truncate(time.Second)}
	if err := t.Clients.SetEntrypoint(ctx, t.namespace(), t.name(), e); err != nil {
		return kube.EntrypointEntry{}, err
	}
	return e, nil
}

// Get returns the entry for image's digest; ok is false when there is none.
func (t *Table) Get(ctx context.Context, image string) (entry kube.EntrypointEntry, digest string, ok bool, err error) {
	digest, err = t.Digest(ctx, image)
	if err != nil {
		return kube.EntrypointEntry{}, "", false, err
	}
	table, err := t.Clients.GetEntrypoints(ctx, t.namespace(), t.name())
	if err != nil {
		return kube.EntrypointEntry{}, digest, false, err
	}
	entry, ok = table.Entries[digest]
	return entry, digest, ok, nil
}

// List returns the whole table.
func (t *Table) List(ctx context.Context) (*kube.EntrypointTable, error) {
	return t.Clients.GetEntrypoints(ctx, t.namespace(), t.name())
}

// Remove deletes the entry for image (a digest, or a reference resolved
// through the registry).
func (t *Table) Remove(ctx context.Context, image string) (digest string, removed bool, err error) {
	if t.ReadOnly {
		return "", false, nothingCreated(refusal.CodeReadOnly, "read-only mode: the entrypoint table is not changed", false)
	}
	// A bare digest needs no registry: an entry can be removed while the
	// image is gone or the registry is down.
	digest = image
	if !looksLikeDigest(image) {
		if digest, err = t.Digest(ctx, image); err != nil {
			return "", false, err
		}
	}
	removed, err = t.Clients.RemoveEntrypoint(ctx, t.namespace(), t.name(), digest)
	return digest, removed, err
}

func looksLikeDigest(s string) bool {
	alg, hex, ok := strings.Cut(s, ":")
	return ok && alg == "sha256" && len(hex) == 64
}

// allocatedPods reads a pooled BatchSandbox's alloc-status minus
// alloc-released annotations.
func allocatedPods(obj *unstructured.Unstructured) []string {
	ann := obj.GetAnnotations()
	var status, released struct {
		Pods []string `json:"pods"`
	}
	_ = json.Unmarshal([]byte(ann[osv1.AnnotationAllocStatus]), &status)
	_ = json.Unmarshal([]byte(ann[osv1.AnnotationAllocReleased]), &released)
	gone := map[string]bool{}
	for _, p := range released.Pods {
		gone[p] = true
	}
	var out []string
	for _, p := range status.Pods {
		if !gone[p] {
			out = append(out, p)
		}
	}
	return out
}
