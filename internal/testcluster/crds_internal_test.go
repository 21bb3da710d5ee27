package testcluster

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// crdIdentity is what sandscope relies on: names, scope and versions.
type crdIdentity struct {
	Group, Kind, Plural, Singular, Scope string
	ShortNames                           []string
	Served                               []string
	Storage                              string
	StatusSubresource                    []string // versions with a status subresource
}

func identityOf(t *testing.T, crd *unstructured.Unstructured) crdIdentity {
	t.Helper()
	var id crdIdentity
	id.Group, _, _ = unstructured.NestedString(crd.Object, "spec", "group")
	id.Kind, _, _ = unstructured.NestedString(crd.Object, "spec", "names", "kind")
	id.Plural, _, _ = unstructured.NestedString(crd.Object, "spec", "names", "plural")
	id.Singular, _, _ = unstructured.NestedString(crd.Object, "spec", "names", "singular")
	id.Scope, _, _ = unstructured.NestedString(crd.Object, "spec", "scope")
	id.ShortNames, _, _ = unstructured.NestedStringSlice(crd.Object, "spec", "names", "shortNames")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm := v.(map[string]any)
		name := vm["name"].(string)
		if served, _ := vm["served"].(bool); served {
			id.Served = append(id.Served, name)
		}
		if storage, _ := vm["storage"].(bool); storage {
			id.Storage = name
		}
		if _, ok, _ := unstructured.NestedMap(vm, "subresources", "status"); ok {
			id.StatusSubresource = append(id.StatusSubresource, name)
		}
	}
	slices.Sort(id.Served)
	slices.Sort(id.StatusSubresource)
	return id
}

func TestSandscopeCRDsHaveTheEnginesIdentity(t *testing.T) {
	t.Parallel()
	crds, err := SandscopeCRDManifests()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]crdIdentity{}
	for _, crd := range crds {
		got[crd.GetName()] = identityOf(t, crd)
	}
	want := map[string]crdIdentity{
		"batchsandboxes.sandbox.opensandbox.io": {Group: "sandbox.opensandbox.io", Kind: "BatchSandbox", Plural: "batchsandboxes", Singular: "batchsandbox",
			Scope: "Namespaced", ShortNames: []string{"bsbx"}, Served: []string{"v1alpha1"}, Storage: "v1alpha1", StatusSubresource: []string{"v1alpha1"}},
		"pools.sandbox.opensandbox.io": {Group: "sandbox.opensandbox.io", Kind: "Pool", Plural: "pools", Singular: "pool",
			Scope: "Namespaced", Served: []string{"v1alpha1"}, Storage: "v1alpha1", StatusSubresource: []string{"v1alpha1"}},
		"sandboxsnapshots.sandbox.opensandbox.io": {Group: "sandbox.opensandbox.io", Kind: "SandboxSnapshot", Plural: "sandboxsnapshots", Singular: "sandboxsnapshot",
			Scope: "Namespaced", ShortNames: []string{"sbxsnap"}, Served: []string{"v1alpha1"}, Storage: "v1alpha1", StatusSubresource: []string{"v1alpha1"}},
		"sandboxes.agents.x-k8s.io": {Group: "agents.x-k8s.io", Kind: "Sandbox", Plural: "sandboxes", Singular: "sandbox",
			Scope: "Namespaced", ShortNames: []string{"sandbox"}, Served: []string{"v1alpha1", "v1beta1"}, Storage: "v1beta1", StatusSubresource: []string{"v1alpha1", "v1beta1"}},
		"sandboxclaims.extensions.agents.x-k8s.io": {Group: "extensions.agents.x-k8s.io", Kind: "SandboxClaim", Plural: "sandboxclaims", Singular: "sandboxclaim",
			Scope: "Namespaced", ShortNames: []string{"sandboxclaim"}, Served: []string{"v1alpha1", "v1beta1"}, Storage: "v1beta1", StatusSubresource: []string{"v1alpha1", "v1beta1"}},
		"sandboxwarmpools.extensions.agents.x-k8s.io": {Group: "extensions.agents.x-k8s.io", Kind: "SandboxWarmPool", Plural: "sandboxwarmpools", Singular: "sandboxwarmpool",
			Scope: "Namespaced", ShortNames: []string{"swp"}, Served: []string{"v1alpha1", "v1beta1"}, Storage: "v1beta1", StatusSubresource: []string{"v1alpha1", "v1beta1"}},
		"sandboxtemplates.extensions.agents.x-k8s.io": {Group: "extensions.agents.x-k8s.io", Kind: "SandboxTemplate", Plural: "sandboxtemplates", Singular: "sandboxtemplate",
			Scope: "Namespaced", ShortNames: []string{"sandboxtemplate"}, Served: []string{"v1alpha1", "v1beta1"}, Storage: "v1beta1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("embedded CRDs:\n got %+v\nwant %+v", got, want)
	}
	for _, crd := range crds {
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			for _, part := range []string{"spec", "status"} {
				keep, _, _ := unstructured.NestedBool(v.(map[string]any), "schema", "openAPIV3Schema", "properties", part, "x-kubernetes-preserve-unknown-fields")
				if !keep {
					t.Errorf("%s: .%s does not preserve unknown fields", crd.GetName(), part)
				}
			}
		}
	}
}

// When the engines' real manifests are at hand, the minimal ones must agree
// with them on everything sandscope relies on.
func TestSandscopeCRDsMatchUpstream(t *testing.T) {
	t.Parallel()
	repo, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := upstreamCRDFiles(UpstreamCRDDir(repo))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	upstream := map[string]crdIdentity{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeManifests(data)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		for _, o := range objs {
			upstream[o.GetName()] = identityOf(t, o)
		}
	}
	crds, err := SandscopeCRDManifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		mine := identityOf(t, crd)
		theirs, ok := upstream[crd.GetName()]
		if !ok {
			t.Errorf("%s: no upstream manifest", crd.GetName())
			continue
		}
		if !reflect.DeepEqual(mine, theirs) {
			t.Errorf("%s differs from upstream:\n mine     %+v\n upstream %+v", crd.GetName(), mine, theirs)
		}
	}
}

func TestDecodeManifestsSplitsDocuments(t *testing.T) {
	t.Parallel()
	objs, err := decodeManifests([]byte("---\napiVersion: v1\nkind: A\n---\n# only a comment\n---\napiVersion: v1\nkind: B\n"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	if strings.Join(kinds, ",") != "A,B" {
		t.Fatalf("kinds = %v, want A,B", kinds)
	}
	if _, err := decodeManifests([]byte("kind: [unclosed")); err == nil {
		t.Fatal("garbage decoded without error")
	}
}

func TestJSONNumbersMakesStatusDeepCopyable(t *testing.T) {
	t.Parallel()
	in := map[string]any{"ready": 1, "list": []map[string]any{{"n": int32(2)}}, "ips": []string{"a"}, "f": float32(1.5)}
	out := jsonNumbers(in).(map[string]any)
	u := &unstructured.Unstructured{Object: map[string]any{"status": out}}
	_ = u.DeepCopy() // panics on int, int32, []string, []map[string]any
	want := map[string]any{"ready": int64(1), "list": []any{map[string]any{"n": int64(2)}}, "ips": []any{"a"}, "f": float64(1.5)}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("jsonNumbers = %#v, want %#v", out, want)
	}
}

func TestModulePathOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ gomod, want string }{
		{"module github.com/sandscope/sandscope\n\ngo 1.26\n", ModulePath},
		{"// comment\nmodule \"example.com/x\"\n", "example.com/x"},
		{"go 1.26\n", ""},
	} {
		if got := modulePathOf([]byte(tc.gomod)); got != tc.want {
			t.Errorf("modulePathOf(%q) = %q, want %q", tc.gomod, got, tc.want)
		}
	}
}
