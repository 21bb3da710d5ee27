package files_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sandscope/sandscope/internal/testcluster"
)

// BenchmarkCopy100MB moves a 100 MB file to and from one Pod through the
// real API server and test kubelet, with sandscope cp (identity checks
// before and after, hostile-archive extraction) and with kubectl cp (no
// check), both as tar over pods/exec:
//
//	go test ./actions/files -run '^$' -bench Copy100MB -benchtime 3x
func BenchmarkCopy100MB(b *testing.B) {
	e := newEnv(b)
	p := e.running("bench")
	c := e.fs.of(string(p.UID))
	payload := make([]byte, 100<<20)
	rand.Read(payload)
	src := filepath.Join(b.TempDir(), "big")
	if err := os.WriteFile(src, payload, 0o644); err != nil {
		b.Fatal(err)
	}
	c.put("/work/big", file{data: payload, mode: 0o644})
	kubectl := filepath.Join(testcluster.BinDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		b.Skipf("no kubectl in %s (tools/testcluster/build.sh with WITH_KUBECTL=1)", testcluster.BinDir())
	}
	runKubectl := func(b *testing.B, args ...string) {
		var stderr bytes.Buffer
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", e.C.Kubeconfig, "-n", e.NS}, args...)...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("kubectl %v: %v %s", args, err, stderr.String())
		}
	}
	check := func(b *testing.B, path string) {
		if fi, err := os.Stat(path); err != nil || fi.Size() != int64(len(payload)) {
			b.Fatalf("%s: %v %v", path, fi, err)
		}
	}
	b.Run("upload/sandscope", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if r := e.cp("", src, "bench:/work/up"); r.Code != 0 {
				b.Fatal(r.Stderr)
			}
		}
	})
	b.Run("upload/kubectl", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			runKubectl(b, "cp", src, "bench:/work/up-kubectl")
		}
	})
	b.Run("download/sandscope", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			dest := filepath.Join(b.TempDir(), "big")
			if r := e.cp("", "bench:/work/big", dest); r.Code != 0 {
				b.Fatal(r.Stderr)
			}
			check(b, dest)
		}
	})
	b.Run("download/kubectl", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			dest := filepath.Join(b.TempDir(), "big")
			runKubectl(b, "cp", "bench:/work/big", dest)
			check(b, dest)
		}
	})
}
