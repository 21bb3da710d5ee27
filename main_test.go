package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sandscope/sandscope"

// harnesses are the module's test harnesses: packages that exist for tests
// (a real API server, a test kubelet, fixtures, fakes). None may reach the
// binary. Anything under test/ counts too, and so does any package whose
// name ends in "test"; the list names the ones there are today, so that a
// rename cannot make this test pass by matching nothing.
var harnesses = []string{
	"internal/clitest",
	"internal/deadserver",
	"internal/memstat",
	"internal/testcluster",
	"internal/testcluster/kubelettest",
	"internal/textsafe/textsafetest",
	"internal/tmuxtest",
	"kube/execd/execdtest",
	"kube/imageconfig/registrytest",
	"model/modeltest",
	"output/outputtest",
}

// isHarness tells whether the module package path (without the module
// prefix) is a test harness.
func isHarness(path string) bool {
	if slices.Contains(harnesses, path) || strings.HasPrefix(path, "test/") || strings.HasPrefix(path, "internal/testcluster/") {
		return true
	}
	last := path[strings.LastIndex(path, "/")+1:]
	return strings.HasSuffix(last, "test")
}

// goList runs `go list` with args and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// No production package links a test harness: the binary's dependencies
// hold none of them. The demo's fake clientset (k8s.io/client-go/
// kubernetes/fake) is production code of the demo and allowed.
func TestNoHarnessInTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	all := goList(t, module+"/...")
	for _, h := range harnesses {
		if !slices.Contains(all, module+"/"+h) {
			t.Errorf("harness %s is not a package of the module any more: update the list", h)
		}
	}
	var found int
	for _, p := range all {
		if rest, ok := strings.CutPrefix(p, module+"/"); ok && isHarness(rest) {
			found++
		}
	}
	if found < len(harnesses) {
		t.Errorf("only %d harness packages recognised, want at least %d", found, len(harnesses))
	}
	for _, p := range goList(t, "-deps", ".") {
		if rest, ok := strings.CutPrefix(p, module+"/"); ok && isHarness(rest) {
			t.Errorf("the binary links the test harness %s", p)
		}
	}
}

// heavyStacks are module trees the binary must not link: the API server's
// own webhook stack (CEL, gRPC, OpenTelemetry, audit) roughly doubled the
// binary and added about 20 MB to every command's RSS, for what two
// client-go calls do (serve's reviews, docs/design.md).
var heavyStacks = []string{"k8s.io/apiserver/", "github.com/google/cel-go/", "google.golang.org/grpc", "go.opentelemetry.io/"}

func TestNoServerStackInTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, p := range goList(t, "-deps", ".") {
		for _, heavy := range heavyStacks {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("the binary links %s", p)
			}
		}
	}
}
