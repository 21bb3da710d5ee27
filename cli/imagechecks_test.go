package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
)

func TestImageCheckMode(t *testing.T) {
	for _, tc := range []struct {
		flag     string
		readOnly bool
		want     string
	}{
		{"on", false, "on"},
		{"on", true, "anonymous"}, // --readonly sends no credentials
		{"", true, "anonymous"},
		{"off", true, "off"},
		{"anonymous", false, "anonymous"},
		{"OFF", false, "off"},
	} {
		g := &Globals{ImageChecks: tc.flag, ReadOnly: tc.readOnly}
		if got, err := g.imageCheckMode(); err != nil || got != tc.want {
			t.Errorf("--image-checks=%q readonly=%v: %q %v, want %q", tc.flag, tc.readOnly, got, err, tc.want)
		}
	}
	g := &Globals{ImageChecks: "off"}
	if r, err := g.imageChecks(imageconfig.Options{}); r != nil || err != nil {
		t.Errorf("off: reader %v, %v", r, err)
	}
	code, stderr, _ := runMain(t, "--image-checks", "sometimes", "sweep")
	if code != ExitUsage || !strings.Contains(stderr, "--image-checks must be on, off or anonymous") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("bad --image-checks: exit %d, %q", code, stderr)
	}
}

// The config file sets what the flags leave unset; flags win.
func TestConfigFileImageSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("imageChecks: anonymous\nimageRegistries: [registry.example, ghcr.io]\nfavorites: [team-rl, eval]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) *Globals {
		g := &Globals{Kube: kube.NewConfigFlags()}
		cmd := NewRootCommand(g)
		if err := cmd.ParseFlags(append([]string{"--config", path}, args...)); err != nil {
			t.Fatal(err)
		}
		if err := applyConfigFile(cmd, g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := parse()
	if !slices.Equal(g.Favorites, []string{"team-rl", "eval"}) {
		t.Errorf("favorites from the file: %q", g.Favorites)
	}
	if g.ImageChecks != "anonymous" || !slices.Equal(g.ImageRegistries, []string{"registry.example", "ghcr.io"}) {
		t.Errorf("from the file: %q %q", g.ImageChecks, g.ImageRegistries)
	}
	g = parse("--image-checks=off", "--image-registries=quay.io")
	if g.ImageChecks != "off" || !slices.Equal(g.ImageRegistries, []string{"quay.io"}) {
		t.Errorf("flags over the file: %q %q", g.ImageChecks, g.ImageRegistries)
	}
	// Unquoted, YAML reads on and off as booleans; they mean what they say.
	for value, want := range map[string]string{"off": "off", "on": "on", "OFF": "off", `"off"`: "off", "anonymous": "anonymous"} {
		if err := os.WriteFile(path, []byte("imageChecks: "+value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if g := parse(); g.ImageChecks != want {
			t.Errorf("imageChecks: %s in the file read as %q, want %q", value, g.ImageChecks, want)
		}
	}
	if err := os.WriteFile(path, []byte("imageChecks: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stderr, _ := runMain(t, "--config", path, "sweep"); code != ExitUsage || !strings.Contains(stderr, path) || !strings.Contains(stderr, "imageChecks must be on, off or anonymous") {
		t.Errorf("a bad imageChecks in the file: exit %d, %q; want it named with the file", code, stderr)
	}
	if err := os.WriteFile(path, []byte("imageCheck: off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr, _ := runMain(t, "--config", path, "sweep")
	if code != ExitUsage || !strings.Contains(stderr, path) {
		t.Errorf("unknown key: exit %d, %q", code, stderr)
	}
}
