package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sandscope/sandscope/internal/textsafe/textsafetest"
)

// hostileCluster answers like an API server whose ConfigMap values and
// error messages were written by someone who wants to hurt the operator.
func hostileCluster(t *testing.T) string {
	t.Helper()
	h := textsafetest.Hostile
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.0"}`))
		case "/api/v1/namespaces/sandboxes/configmaps/sandscope-entrypoints":
			entry, _ := json.Marshal(map[string]any{"image": "img" + h, "argv": []string{"run", "argv" + h}})
			_ = json.NewEncoder(w).Encode(map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "sandboxes", "name": "sandscope-entrypoints"},
				"data":     map[string]string{"sha256.abc": string(entry)},
			})
		default:
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "Status", "status": "Failure",
				"reason": "Forbidden", "code": 403, "message": "denied " + h})
		}
	}))
	t.Cleanup(srv.Close)
	return kubeconfigFor(t, srv.URL)
}

// What the cluster wrote reaches the terminal as text: the entrypoint
// table's listing and an error quoting the server.
func TestCLITextIsInert(t *testing.T) {
	kc := hostileCluster(t)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"--kubeconfig", kc}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("entrypoints", "ls")
	if code != 0 {
		t.Fatalf("ls: exit %d: %s", code, errOut)
	}
	textsafetest.AssertInert(t, out+errOut)
	if !strings.Contains(out, "img"+textsafetest.Shown) || !strings.Contains(out, "argv"+textsafetest.Shown) {
		t.Errorf("ls does not read:\n%s", out)
	}
	code, out, errOut = run("entrypoints", "ls", "--entrypoint-table", "other")
	if code == 0 {
		t.Fatalf("ls of a forbidden table succeeded: %s", out)
	}
	textsafetest.AssertInert(t, out+errOut)
	if !strings.Contains(errOut, "denied "+textsafetest.Shown) {
		t.Errorf("error does not read:\n%s", errOut)
	}
	// create's text output: its error quotes what the server said.
	code, out, errOut = run("create", "--image", "busybox", "--entrypoint", "/bin/app", "--wait-timeout", "5s")
	if code == 0 {
		t.Fatalf("create against a cluster that forbids everything succeeded: %s", out)
	}
	textsafetest.AssertInert(t, out+errOut)
	if !strings.Contains(errOut, textsafetest.Shown) {
		t.Errorf("create's error does not quote the server:\n%s", errOut)
	}
}
