package deploy_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewPlugin is krew's Plugin (krew.googlecontainertools.github.com/
// v1alpha2) as far as the template uses it; parsing is strict, so a field
// krew does not know is an error here.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

var placeholder = regexp.MustCompile(`\{\{[A-Z0-9_]+\}\}`)

// The krew manifest template fills in to a valid Plugin: four platforms
// (linux and darwin, amd64 and arm64), each with its own archive and
// checksum and the kubectl-sandscope binary; the only placeholders are the
// version and the checksums.
func TestKrewManifest(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("krew/sandscope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range placeholder.FindAllString(string(raw), -1) {
		if !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	want := []string{"{{SHA256_DARWIN_AMD64}}", "{{SHA256_DARWIN_ARM64}}", "{{SHA256_LINUX_AMD64}}", "{{SHA256_LINUX_ARM64}}", "{{VERSION}}"}
	if !slices.Equal(names, want) {
		t.Fatalf("placeholders = %v, want %v", names, want)
	}
	// Fill it in as a release would.
	filled := strings.ReplaceAll(string(raw), "{{VERSION}}", "v1.2.3")
	sums := map[string]string{}
	for i, name := range want[:4] {
		sum := strings.Repeat(fmt.Sprintf("%x", i+10), 64)
		sums[strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(name, "{{SHA256_"), "}}"))] = sum
		filled = strings.ReplaceAll(filled, name, sum)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict([]byte(filled), &p); err != nil {
		t.Fatalf("not a krew Plugin: %v", err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "sandscope" {
		t.Errorf("apiVersion %q kind %q name %q", p.APIVersion, p.Kind, p.Metadata.Name)
	}
	if p.Spec.Version != "v1.2.3" || p.Spec.ShortDescription == "" || len(p.Spec.ShortDescription) > 50 || p.Spec.Homepage == "" {
		t.Errorf("version %q, shortDescription %q (krew: at most 50 characters), homepage %q", p.Spec.Version, p.Spec.ShortDescription, p.Spec.Homepage)
	}
	seen := map[string]bool{}
	for _, pl := range p.Spec.Platforms {
		labels := pl.Selector.MatchLabels
		key := labels["os"] + "_" + labels["arch"]
		if len(labels) != 2 || seen[key] {
			t.Errorf("platform selector %v: want os and arch, once each", labels)
		}
		seen[key] = true
		if want := "https://github.com/sandscope/sandscope/releases/download/v1.2.3/kubectl-sandscope_v1.2.3_" + key + ".tar.gz"; pl.URI != want {
			t.Errorf("%s: uri %s, want %s", key, pl.URI, want)
		}
		if pl.SHA256 != sums[key] {
			t.Errorf("%s: sha256 %q is not its own placeholder's", key, pl.SHA256)
		}
		if pl.Bin != "kubectl-sandscope" {
			t.Errorf("%s: bin %q, want kubectl-sandscope (the name kubectl runs as `kubectl sandscope`)", key, pl.Bin)
		}
	}
	for _, key := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		if !seen[key] {
			t.Errorf("no platform %s", key)
		}
	}
}
