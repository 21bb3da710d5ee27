package testcluster

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

//go:embed crds/*.yaml
var sandscopeCRDs embed.FS

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Resources of the engines, as the tests write them.
var (
	BatchSandboxGVR    = osv1.BatchSandboxes
	PoolGVR            = osv1.Pools
	SandboxSnapshotGVR = osv1.SandboxSnapshots
	AgentSandboxGVR    = agentsandbox.Sandboxes(agentsandbox.V1beta1)
	// AgentSandboxV1alpha1GVR is the older served version of the same Sandbox.
	AgentSandboxV1alpha1GVR = agentsandbox.Sandboxes(agentsandbox.V1alpha1)
	// The agent-sandbox extensions at their storage version.
	SandboxClaimGVR    = agentsandbox.Extension(agentsandbox.ResourceClaims, agentsandbox.V1beta1)
	SandboxWarmPoolGVR = agentsandbox.Extension(agentsandbox.ResourceWarmPools, agentsandbox.V1beta1)
	SandboxTemplateGVR = agentsandbox.Extension(agentsandbox.ResourceTemplates, agentsandbox.V1beta1)
)

// SandscopeCRDManifests returns sandscope's own minimal CRDs (embedded).
func SandscopeCRDManifests() ([]*unstructured.Unstructured, error) {
	entries, err := sandscopeCRDs.ReadDir("crds")
	if err != nil {
		return nil, fmt.Errorf("reading embedded CRDs: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, e := range entries {
		data, err := sandscopeCRDs.ReadFile(path.Join("crds", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading embedded CRD %s: %w", e.Name(), err)
		}
		objs, err := decodeManifests(data)
		if err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", e.Name(), err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// decodeManifests splits a multi-document YAML (or JSON) manifest.
func decodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decoding manifest: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// prepare installs the chosen CRDs and pays the API server's first-use
// costs (pitfall 4 of the recipe) once, before any test runs: the 2 s sleep
// on the first create of a brand-new CRD's objects, and the HTTP 429 on the
// first watch while a watch cache initializes.
func prepare(ctx context.Context, c *Cluster, opts Options, upstreamFiles []string) error {
	// The warm-up touches deprecated versions (agent-sandbox v1alpha1); their
	// warnings would only be noise in every package's output.
	quiet := rest.CopyConfig(c.Config)
	quiet.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(quiet)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	c = &Cluster{Kube: c.Kube, Dynamic: dyn}
	var crds []*unstructured.Unstructured
	switch opts.CRDs {
	case SandscopeCRDs:
		objs, err := SandscopeCRDManifests()
		if err != nil {
			return err
		}
		crds = objs
	case UpstreamCRDs:
		for _, f := range upstreamFiles {
			data, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("reading %s: %w", f, err)
			}
			objs, err := decodeManifests(data)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			crds = append(crds, objs...)
		}
	}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: warmupNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", warmupNamespace, err)
	}
	gvrs, err := InstallCRDs(ctx, c, crds)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(gvrs))
	for i, r := range gvrs {
		wg.Go(func() { errs[i] = warmCreate(ctx, c, r) })
	}
	builtin := []schema.GroupVersionResource{
		{Version: "v1", Resource: "pods"}, {Version: "v1", Resource: "events"},
		{Version: "v1", Resource: "nodes"}, {Version: "v1", Resource: "namespaces"},
		{Group: "events.k8s.io", Version: "v1", Resource: "events"},
	}
	for _, r := range builtin {
		wg.Go(func() { _ = warmWatch(ctx, c, r) })
	}
	for _, r := range gvrs {
		wg.Go(func() { _ = warmWatch(ctx, c, r.GroupVersionResource) })
	}
	wg.Wait()
	return errorsJoin(errs)
}

// warmupNamespace holds nothing; it is where first creates are tried.
const warmupNamespace = "kubetest-warmup"

// ServedResource is one served version of an installed CRD.
type ServedResource struct {
	schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// InstallCRDs creates (or replaces) CRDs and waits until each is Established.
// It returns every served version of them. Objects that are not CRDs are an error.
func InstallCRDs(ctx context.Context, c *Cluster, crds []*unstructured.Unstructured) ([]ServedResource, error) {
	var served []ServedResource
	for _, crd := range crds {
		if crd.GetKind() != "CustomResourceDefinition" {
			return nil, fmt.Errorf("installing CRDs: %s %q is not a CustomResourceDefinition", crd.GetKind(), crd.GetName())
		}
		_, err := c.Dynamic.Resource(CRDGVR).Create(ctx, crd, metav1.CreateOptions{FieldManager: "kubetest"})
		if apierrors.IsAlreadyExists(err) {
			old, gerr := c.Dynamic.Resource(CRDGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return nil, fmt.Errorf("reading CRD %s: %w", crd.GetName(), gerr)
			}
			crd = crd.DeepCopy()
			crd.SetResourceVersion(old.GetResourceVersion())
			_, err = c.Dynamic.Resource(CRDGVR).Update(ctx, crd, metav1.UpdateOptions{FieldManager: "kubetest"})
		}
		if err != nil {
			return nil, fmt.Errorf("installing CRD %s: %w", crd.GetName(), err)
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			name, _ := vm["name"].(string)
			if ok, _ := vm["served"].(bool); ok && name != "" {
				served = append(served, ServedResource{
					GroupVersionResource: schema.GroupVersionResource{Group: group, Version: name, Resource: plural},
					Kind:                 kind, Namespaced: scope != "Cluster",
				})
			}
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, c, crd.GetName()); err != nil {
			return nil, err
		}
	}
	return served, nil
}

func waitEstablished(ctx context.Context, c *Cluster, name string) error {
	for {
		crd, err := c.Dynamic.Resource(CRDGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s: %w", name, err)
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, cond := range conds {
			cm, _ := cond.(map[string]any)
			if cm["type"] == "Established" && cm["status"] == "True" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not Established: %w", name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// warmCreate repeats a dry-run create until one answers quickly: the API
// server sleeps 2 s on creates made within 2 s of the CRD becoming
// Established. Any answer but "not found" counts (the upstream schemas
// reject the empty object; that is fine, the sleep is before validation).
func warmCreate(ctx context.Context, c *Cluster, r ServedResource) error {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(r.GroupVersion().String())
	obj.SetKind(r.Kind)
	obj.SetName("kubetest-warmup")
	var last error
	for range 40 {
		t0 := time.Now()
		var err error
		if r.Namespaced {
			_, err = c.Dynamic.Resource(r.GroupVersionResource).Namespace(warmupNamespace).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		} else {
			_, err = c.Dynamic.Resource(r.GroupVersionResource).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		}
		if ctx.Err() != nil {
			return fmt.Errorf("warming up %s: %w", r.GroupVersionResource, ctx.Err())
		}
		if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) && time.Since(t0) < time.Second {
			return nil
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("warming up %s: creates stay slow or unserved: %v", r.GroupVersionResource, last)
}

// warmWatch opens a WatchList-style watch (what client-go v0.37 informers
// do) until the server stops answering 429 while its watch cache fills.
func warmWatch(ctx context.Context, c *Cluster, gvr schema.GroupVersionResource) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	send := true
	for {
		w, err := c.Dynamic.Resource(gvr).Watch(ctx, metav1.ListOptions{
			SendInitialEvents:    &send,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
		})
		if err == nil {
			w.Stop()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
