package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
)

// TestCaptureWiregenTemplates rewrites test/bench/wiregen/testdata from a
// real API server: its discovery documents, and one loaded sandbox's Pod and
// BatchSandbox as the server stores them (defaults, managedFields), which
// the generator copies onto the objects it builds. Run it after a change to
// the CRDs or to sim.Load:
//
//	SANDSCOPE_WIREGEN_CAPTURE=1 go test ./test/bench -run TestCaptureWiregenTemplates
func TestCaptureWiregenTemplates(t *testing.T) {
	if os.Getenv("SANDSCOPE_WIREGEN_CAPTURE") == "" {
		t.Skip("set SANDSCOPE_WIREGEN_CAPTURE=1 to rewrite the generator's testdata")
	}
	c, ns := testcluster.GetWithNamespace(t)
	ctx := testcluster.Context(t)
	loaded, err := sim.Load(ctx, c.Kube, c.Dynamic, sim.LoadOptions{N: 1, Namespace: ns, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rest.UnversionedRESTClientFor(withNegotiation(c.Config))
	if err != nil {
		t.Fatal(err)
	}
	const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	dir := filepath.Join("wiregen", "testdata")
	for file, req := range map[string]*rest.Request{
		"version.json":                         rc.Get().AbsPath("/version"),
		"api.json":                             rc.Get().AbsPath("/api").SetHeader("Accept", aggregated),
		"apis.json":                            rc.Get().AbsPath("/apis").SetHeader("Accept", aggregated),
		"sandbox.opensandbox.io_v1alpha1.json": rc.Get().AbsPath("/apis/sandbox.opensandbox.io/v1alpha1"),
		"extensions.agents.x-k8s.io_v1beta1.json": rc.Get().AbsPath("/apis/extensions.agents.x-k8s.io/v1beta1"),
		"agents.x-k8s.io_v1beta1.json":            rc.Get().AbsPath("/apis/agents.x-k8s.io/v1beta1"),
		"pod.json":                                rc.Get().AbsPath("/api/v1/namespaces", ns, "pods", loaded[0].Pod),
		"batchsandbox.json":                       rc.Get().AbsPath("/apis", kube.BatchSandboxGVR.Group, kube.BatchSandboxGVR.Version, "namespaces", ns, "batchsandboxes", loaded[0].Name),
	} {
		body, err := req.DoRaw(ctx)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var pretty any
		if err := json.Unmarshal(body, &pretty); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out, _ := json.MarshalIndent(pretty, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, file), append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func withNegotiation(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &metav1.SchemeGroupVersion
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return c
}
