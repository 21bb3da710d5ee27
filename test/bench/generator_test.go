package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/tmuxtest"
	"github.com/sandscope/sandscope/test/bench/wiregen"
)

// TestGeneratorMatchesAPIServer loads -scale sandboxes into a real API
// server and serves the same fleet from the load generator, then reads both
// with `sandscope get` (sandboxes and pods, JSON): the outputs must be the
// same but for what differs by construction (each side's own times and the
// UIDs and resourceVersions the server assigned).
//
//	go test ./test/bench -run TestGeneratorMatchesAPIServer -scale 10000 -timeout 30m
func TestGeneratorMatchesAPIServer(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	ctx := testcluster.Context(t)
	opts := sim.LoadOptions{N: *scale, Namespace: ns, Workers: *workers, Seed: 1}
	if _, err := sim.Load(ctx, c.Kube, c.Dynamic, opts); err != nil {
		t.Fatal(err)
	}
	g, genConfig := startGenerator(t, wiregen.Options{Load: opts})
	bin := tmuxtest.BuildSandscope(t)
	for _, what := range []string{"sandboxes", "pods"} {
		real := normalized(t, runGet(ctx, t, bin, c.Kubeconfig, ns, what))
		gen := normalized(t, runGet(ctx, t, bin, genConfig, ns, what))
		if real != gen {
			t.Errorf("get %s -o json differs between the API server and the generator:\n%s", what, firstDiff(real, gen))
		}
	}
	if u := g.Unknown(); u != 0 {
		t.Errorf("sandscope asked the generator %d things it does not serve: %v", u, g.Requests())
	}
}

func runGet(ctx context.Context, t *testing.T, bin, kubeconfig, ns, what string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "-n", ns, "get", what, "-o", "json", "--timeout", "5m")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("sandscope get %s against %s: %v\n%s", what, kubeconfig, err, errOut.String())
	}
	if errOut.Len() > 0 {
		t.Logf("sandscope get %s against %s, stderr:\n%s", what, kubeconfig, errOut.String())
	}
	return out.String()
}

var (
	timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)
	clock     = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`)
	uuidText  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// normalized is get's JSON indented, with what differs by construction
// between a loaded server and the generator replaced: UIDs (wherever they
// are quoted, e.g. in a finding's text) and resourceVersions (the server's
// own), and times and clock times in texts (each side's clock).
func normalized(t *testing.T, out string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("get printed no JSON: %v\n%s", err, out)
	}
	uids := map[string]bool{}
	var walk func(v any, key string, edit func(key, s string) string) any
	walk = func(v any, key string, edit func(key, s string) string) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e, k, edit)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e, "", edit)
			}
		case string:
			return edit(key, x)
		}
		return v
	}
	isUID := func(key string) bool { return key == "uid" || strings.HasSuffix(key, "UID") }
	v = walk(v, "", func(key, s string) string {
		if isUID(key) {
			uids[s] = true
		}
		return s
	})
	v = walk(v, "", func(key, s string) string {
		switch {
		case isUID(key) || key == "resourceVersion":
			return "<" + key + ">"
		case timestamp.MatchString(s):
			return "<time>"
		}
		s = clock.ReplaceAllString(s, "<clock>")
		return uuidText.ReplaceAllStringFunc(s, func(m string) string {
			if uids[m] {
				return "<uid>"
			}
			return m
		})
	})
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return ""
}
