package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// DefaultEntrypointsConfigMap is the ConfigMap that holds the entrypoint
// table (image digest → argv) in a namespace.
const DefaultEntrypointsConfigMap = "sandscope-entrypoints"

// EntrypointEntry is one row of the entrypoint table: the start command for
// one image digest. Image and SetAt are informational (what the operator
// named when setting it, and when).
type EntrypointEntry struct {
	Digest string    `json:"-"`
	Argv   []string  `json:"argv"`
	Image  string    `json:"image,omitempty"`
	SetAt  time.Time `json:"setAt,omitempty"`
}

// EntrypointTable is the parsed ConfigMap.
type EntrypointTable struct {
	Namespace, Name string
	Entries         map[string]EntrypointEntry // by digest ("sha256:...")
	// Malformed lists data keys that are not a digest or whose value is
	// not an argv; they are kept untouched on update.
	Malformed []string
}

// Sorted returns the entries ordered by digest.
func (t *EntrypointTable) Sorted() []EntrypointEntry {
	out := make([]EntrypointEntry, 0, len(t.Entries))
	for _, e := range t.Entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Digest < out[j].Digest })
	return out
}

// ConfigMap data keys may not contain ':' ("sha256:abc" → "sha256.abc").
func entrypointKey(digest string) string { return strings.Replace(digest, ":", ".", 1) }

func digestOfKey(key string) (string, bool) {
	alg, hex, ok := strings.Cut(key, ".")
	if !ok || alg == "" || hex == "" {
		return "", false
	}
	return alg + ":" + hex, true
}

func parseEntrypoints(cm *corev1.ConfigMap) *EntrypointTable {
	t := &EntrypointTable{Namespace: cm.Namespace, Name: cm.Name, Entries: map[string]EntrypointEntry{}}
	for k, v := range cm.Data {
		digest, ok := digestOfKey(k)
		if !ok {
			t.Malformed = append(t.Malformed, k)
			continue
		}
		var e EntrypointEntry
		// A hand-edited value may be a bare JSON array.
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			if err := json.Unmarshal([]byte(v), &e.Argv); err != nil {
				t.Malformed = append(t.Malformed, k)
				continue
			}
		}
		if len(e.Argv) == 0 {
			t.Malformed = append(t.Malformed, k)
			continue
		}
		e.Digest = digest
		t.Entries[digest] = e
	}
	sort.Strings(t.Malformed)
	return t
}

// GetEntrypoints reads the entrypoint table; a missing ConfigMap is an
// empty table.
func (c *Clients) GetEntrypoints(ctx context.Context, namespace, name string) (*EntrypointTable, error) {
	cm, err := c.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &EntrypointTable{Namespace: namespace, Name: name, Entries: map[string]EntrypointEntry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading entrypoint table configmap %s/%s: %w", namespace, name, err)
	}
	return parseEntrypoints(cm), nil
}

// SetEntrypoint stores argv for digest, creating the ConfigMap if needed.
func (c *Clients) SetEntrypoint(ctx context.Context, namespace, name string, e EntrypointEntry) error {
	if len(e.Argv) == 0 {
		return fmt.Errorf("entrypoint for %s: empty argv", e.Digest)
	}
	value, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding entrypoint for %s: %w", e.Digest, err)
	}
	return c.updateEntrypoints(ctx, namespace, name, func(data map[string]string) bool {
		data[entrypointKey(e.Digest)] = string(value)
		return true
	})
}

// RemoveEntrypoint deletes the row for digest; removed is false when there
// was none.
func (c *Clients) RemoveEntrypoint(ctx context.Context, namespace, name, digest string) (removed bool, err error) {
	err = c.updateEntrypoints(ctx, namespace, name, func(data map[string]string) bool {
		_, removed = data[entrypointKey(digest)]
		delete(data, entrypointKey(digest))
		return removed
	})
	return removed, err
}

// updateEntrypoints applies change to the ConfigMap's data with a
// read-modify-write that retries on conflicts, so two operators setting
// different images at once both win. change returns false for no-op.
func (c *Clients) updateEntrypoints(ctx context.Context, namespace, name string, change func(map[string]string) bool) error {
	cms := c.Kube.CoreV1().ConfigMaps(namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: namespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "sandscope"},
				Annotations: map[string]string{"sandscope.io/purpose": "entrypoint table: image digest (sha256.<hex>) -> " +
					"JSON {\"argv\":[...]}; managed with `sandscope entrypoints`"},
			}, Data: map[string]string{}}
			if !change(cm.Data) {
				return nil
			}
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				// Someone created it meanwhile: retry as an update.
				return apierrors.NewConflict(corev1.Resource("configmaps"), name, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		if !change(cm.Data) {
			return nil
		}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating entrypoint table configmap %s/%s: %w", namespace, name, err)
	}
	return nil
}
