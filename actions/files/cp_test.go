package files_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A directory goes up and comes back whole over pods/exec (tar, as kubectl
// cp), and a file over execd's files API, both ways, through each
// transport; -o json names the Pod the copy reached.
func TestCopyRoundTrips(t *testing.T) {
	e := newEnv(t)
	p := e.running("rt")
	src := t.TempDir()
	tree := map[string]string{"pi.txt": "3.14159\n", "sub/deep/data.bin": "\x00\x01\x02binary", "sub/notes.md": "# notes"}
	writeTree(t, src, tree)

	r := e.cp("", src, "rt:/work/in", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("upload: exit %d stderr %s", r.Code, r.Stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || out["written"] != "yes" {
		t.Fatalf("upload -o json: %q %v", r.Stdout, err)
	}
	if target, _ := out["target"].(map[string]any); target["uid"] != string(p.UID) {
		t.Errorf("upload names pod uid %v, want %s", target["uid"], p.UID)
	}
	if f, ok := e.fs.of(string(p.UID)).get("/work/in/pi.txt"); !ok || string(f.data) != "3.14159\n" {
		t.Fatalf("the container has /work/in/pi.txt = %q (%v)", f.data, ok)
	}

	dest := t.TempDir()
	if r := e.cp("", "rt:/work/in", dest); r.Code != 0 {
		t.Fatalf("download: exit %d stderr %s", r.Code, r.Stderr)
	}
	if got := readTree(t, filepath.Join(dest, "in")); !sameTree(got, tree) {
		t.Fatalf("downloaded %v, want %v", got, tree)
	}
	if r := e.cp("", "rt:/work/in/pi.txt", "-"); r.Code != 0 || r.Stdout != "3.14159\n" {
		t.Fatalf("download to stdout: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// Not a terminal: the bytes pass as they are (a pipe, a file).
	if r := e.cp("", "rt:/work/in/sub/deep/data.bin", "-"); r.Code != 0 || r.Stdout != "\x00\x01\x02binary" {
		t.Fatalf("binary download to stdout: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := e.cp("hello from stdin", "-", "rt:/work/stdin.txt"); r.Code != 0 {
		t.Fatalf("upload from stdin: exit %d stderr %s", r.Code, r.Stderr)
	} else if f, _ := e.fs.of(string(p.UID)).get("/work/stdin.txt"); string(f.data) != "hello from stdin" {
		t.Fatalf("stdin upload wrote %q", f.data)
	}

	for _, via := range []string{"execd", "execd-direct"} {
		t.Run(via, func(t *testing.T) {
			one := filepath.Join(src, "pi.txt")
			if r := e.cp("", one, "rt:/work/"+via+".txt", "--via", via); r.Code != 0 {
				t.Fatalf("upload: exit %d stderr %s", r.Code, r.Stderr)
			}
			d := e.Daemons.Get(string(p.UID))
			if b, ok := d.File("/work/" + via + ".txt"); !ok || string(b) != "3.14159\n" {
				t.Fatalf("execd has %q (%v)", b, ok)
			}
			local := filepath.Join(t.TempDir(), "back.txt")
			if r := e.cp("", "rt:/work/"+via+".txt", local, "--via", via); r.Code != 0 {
				t.Fatalf("download: exit %d stderr %s", r.Code, r.Stderr)
			}
			if b, err := os.ReadFile(local); err != nil || string(b) != "3.14159\n" {
				t.Fatalf("downloaded %q %v", b, err)
			}
			if r := e.cp("", src, "rt:/work/dir", "--via", via); r.Code != 2 || !strings.Contains(r.Stderr, "--via kube") {
				t.Errorf("a directory over execd: exit %d %s, want 2 (usage) pointing at --via kube", r.Code, r.Stderr)
			}
		})
	}
}

// Seed 002 for files: a dead sandbox's IP now held by another sandbox's
// Pod, a same-name re-creation, and a pooled Pod handed to a newer sandbox.
// Every transport refuses, both ways, before a byte reaches the other Pod,
// and a refused download leaves the destination as it was.
func TestCopyRefusedBeforeAnyByte(t *testing.T) {
	e := newEnv(t)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"pi.txt": "3.14159"})
	upload := filepath.Join(src, "pi.txt")

	// IP taken: A dies, B gets its address.
	ip := testcluster.PodIP()
	a := e.startPod(testcluster.SandboxPod("taken-a", ""), ip)
	e.kill(a)
	b := e.startPod(testcluster.SandboxPod("taken-b", ""), ip)
	// Same name: the Pod is deleted and created again (new UID); the
	// caller recorded the first UID.
	old := e.running("again")
	e.Kubelet.ForceDelete(e.NS, "again")
	fresh := e.running("again")
	// Pool handover: warm-x1 allocated to A, then handed to B while A's
	// allocation still lists it.
	ct := e.C.Controller(t)
	warmIP := testcluster.PodIP()
	warm := e.startPod(testcluster.PoolPod("warm-x1", "warm"), warmIP)
	ct.PooledSandbox(e.NS, "pool-a", "warm", warmIP, "warm-x1")
	nextSecond()
	ct.PooledSandbox(e.NS, "pool-b", "warm", warmIP, "warm-x1")

	cases := []struct {
		name, ref string
		victim    *corev1.Pod
		extra     []string
		codes     []string
	}{
		{"ip taken", "taken-a", b, nil, []string{"IP_TAKEN", "POD_NOT_RUNNING", "POD_DEAD"}},
		{"same name", "again", fresh, []string{"--expect-uid", string(old.UID)}, []string{"UID_CHANGED"}},
		{"pool handover", "pool-a", warm, nil, []string{"IP_TAKEN", "POD_GONE"}},
	}
	for _, tc := range cases {
		for _, via := range allVias {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				before := e.requests(tc.victim)
				uploads := e.Daemons.Get(string(tc.victim.UID)).Uploads()
				args := append([]string{upload, tc.ref + ":/work/pi.txt", "--via", via}, tc.extra...)
				r := e.cp("", args...)
				obj := cpError(t, r)
				code, _ := obj["code"].(string)
				if r.Code != 125 || obj["written"] != "no" || !contains(tc.codes, code) {
					t.Errorf("upload: exit %d %s; want 125, written no, one of %v", r.Code, r.Stderr, tc.codes)
				}
				dest := t.TempDir()
				args = append([]string{tc.ref + ":/work/pi.txt", dest, "--via", via}, tc.extra...)
				r = e.cp("", args...)
				obj = cpError(t, r)
				code, _ = obj["code"].(string)
				if r.Code != 125 || obj["written"] != "no" || !contains(tc.codes, code) {
					t.Errorf("download: exit %d %s; want 125, written no, one of %v", r.Code, r.Stderr, tc.codes)
				}
				if entries, _ := os.ReadDir(dest); len(entries) != 0 {
					t.Errorf("a refused download left %v in the destination", entries)
				}
				if n := e.requests(tc.victim) - before; n != 0 {
					t.Errorf("%d requests reached %s, the Pod that is not the sandbox's", n, tc.victim.Name)
				}
				if n := e.Daemons.Get(string(tc.victim.UID)).Uploads() - uploads; n != 0 {
					t.Errorf("%s's execd stored %d uploads", tc.victim.Name, n)
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The Pod is replaced (same name, new UID) while the copy runs: the upload
// may be written, the download is not put in place.
func TestCopyPodReplacedMidTransferIsUnknown(t *testing.T) {
	e := newEnv(t)
	p := e.running("swap")
	c := e.fs.of(string(p.UID))
	c.put("/work/pi.txt", file{data: []byte("3.14159"), mode: 0o644})
	c.during = func() {
		cs := e.C.Kube.CoreV1().Pods(e.NS)
		zero := int64(0)
		ctx := context.Background()
		if err := cs.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Error(err)
		}
		if _, err := cs.Create(ctx, testcluster.SandboxPod(p.Name, ""), metav1.CreateOptions{}); err != nil {
			t.Error(err)
		}
	}
	dest := t.TempDir()
	r := e.cp("", "swap:/work/pi.txt", dest)
	obj := cpError(t, r)
	if r.Code != 126 || obj["written"] != "unknown" {
		t.Fatalf("download: exit %d %s; want 126, written unknown", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dest, "pi.txt")); err == nil {
		t.Fatal("an unconfirmed download was put in place as if complete")
	}
	if msg, _ := obj["message"].(string); !strings.Contains(msg, ".sandscope-cp-") {
		t.Errorf("the message does not say where the unconfirmed copy is: %s", msg)
	}
}

func TestCopyUploadWhilePodReplacedIsUnknown(t *testing.T) {
	e := newEnv(t)
	p := e.running("swap-up")
	e.fs.of(string(p.UID)).during = func() {
		cs := e.C.Kube.CoreV1().Pods(e.NS)
		zero := int64(0)
		if err := cs.Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Error(err)
		}
		if _, err := cs.Create(context.Background(), testcluster.SandboxPod(p.Name, ""), metav1.CreateOptions{}); err != nil {
			t.Error(err)
		}
	}
	src := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.cp("", src, "swap-up:/work/f.txt")
	obj := cpError(t, r)
	if r.Code != 126 || obj["written"] != "unknown" || obj["executed"] != "unknown" {
		t.Fatalf("upload: exit %d %s; want 126, written unknown", r.Code, r.Stderr)
	}
}

// What a sandbox sends back is hostile: a symlink out of the destination
// followed by a file written through it is refused whole, and nothing is
// left in the destination or outside it.
func TestCopyHostileArchiveFromASandbox(t *testing.T) {
	e := newEnv(t)
	p := e.running("hostile")
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(base, "dest")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "out/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: "out/l", Typeflag: tar.TypeSymlink, Linkname: "../../victim"}); err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: "out/l", Typeflag: tar.TypeReg, Mode: 0o644, Size: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("pwned")); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	e.fs.of(string(p.UID)).serve = buf.Bytes()

	r := e.cp("", "hostile:/work/out", dest)
	obj := cpError(t, r)
	if r.Code != 125 || obj["code"] != "ARCHIVE_REFUSED" || obj["written"] != "no" {
		t.Fatalf("exit %d %s; want 125 ARCHIVE_REFUSED written no", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "original" {
		t.Fatalf("the file outside the destination was written: %q", b)
	}
	if entries, _ := os.ReadDir(dest); len(entries) != 0 {
		t.Fatalf("the refused archive left %v in the destination", entries)
	}
	if entries, _ := os.ReadDir(base); len(entries) != 2 {
		t.Fatalf("the refused archive left a staging directory beside the destination: %v", entries)
	}
}

// --readonly refuses uploads before any connection; downloads stay.
func TestCopyReadOnly(t *testing.T) {
	e := newEnv(t)
	p := e.running("ro")
	e.fs.of(string(p.UID)).put("/work/pi.txt", file{data: []byte("3.14159"), mode: 0o644})
	src := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := e.requests(p)
	r := e.cp("", "--readonly", src, "ro:/work/f")
	if obj := cpError(t, r); r.Code != 125 || obj["code"] != "READ_ONLY" {
		t.Fatalf("upload: exit %d %s", r.Code, r.Stderr)
	}
	if e.requests(p) != before {
		t.Fatal("a read-only upload reached the Pod")
	}
	if r := e.cp("", "--readonly", "ro:/work/pi.txt", "-"); r.Code != 0 || r.Stdout != "3.14159" {
		t.Fatalf("download: exit %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
}

// A path that does not exist in the sandbox: the copy reached the right
// Pod and failed there (exit 1), with tar's own words as evidence.
func TestCopyRemoteMissing(t *testing.T) {
	e := newEnv(t)
	e.running("missing")
	r := e.cp("", "missing:/no/such", t.TempDir())
	obj := cpError(t, r)
	if r.Code != 1 || obj["code"] != "REMOTE_FAILED" || !strings.Contains(r.Stderr, "No such file") {
		t.Fatalf("exit %d %s", r.Code, r.Stderr)
	}
}

// One upload over every sandbox a selector picks: each checked on its own,
// one JSON line each; a refused one stops no other and sets the exit code.
func TestCopyFanOutUpload(t *testing.T) {
	e := newEnv(t)
	labelled := func(name, ip string) *corev1.Pod {
		p := testcluster.SandboxPod(name, "")
		p.Labels["team"] = "rl"
		return e.startPod(p, ip)
	}
	a, b := labelled("fan-a", testcluster.PodIP()), labelled("fan-b", testcluster.PodIP())
	ip := testcluster.PodIP()
	e.kill(labelled("fan-c", ip))
	stranger := e.startPod(testcluster.SandboxPod("stranger", ""), ip)

	src := filepath.Join(t.TempDir(), "cfg")
	if err := os.WriteFile(src, []byte("k=v"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.cp("", "--selector", "team=rl", src, ":/etc/app.cfg", "-o", "jsonl")
	if r.Code != 125 {
		t.Fatalf("exit %d, want 125 (one refused); stderr %s", r.Code, r.Stderr)
	}
	got := clitest.JSONLinesBySandbox(t, r.Stdout)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3: %s", len(got), r.Stdout)
	}
	for _, p := range []*corev1.Pod{a, b} {
		if m := got[p.Name]; m["written"] != "yes" {
			t.Errorf("%s: %v", p.Name, m)
		}
		if f, ok := e.fs.of(string(p.UID)).get("/etc/app.cfg"); !ok || string(f.data) != "k=v" {
			t.Errorf("%s has %q", p.Name, f.data)
		}
	}
	if m := got["fan-c"]; m["written"] != "no" || m["error"] == nil {
		t.Errorf("fan-c: %v", m)
	}
	if n := e.requests(stranger); n != 0 {
		t.Errorf("%d requests reached the stranger", n)
	}
	// A selection that picks no sandbox copies nothing and says so, where it
	// printed nothing and exited 0.
	r = e.cp("", "--selector", "team=nobody", src, ":/etc/app.cfg", "-o", "jsonl")
	if obj := cpError(t, r); r.Code != 125 || obj["code"] != "NOT_FOUND" || obj["written"] != "no" || r.Stdout != "" {
		t.Errorf("a selection of nothing: exit %d, stdout %q, stderr %s; want 125 and NOT_FOUND", r.Code, r.Stdout, r.Stderr)
	}
}

// Usage errors exit 2 with code USAGE and one JSON line: two local paths,
// two sandboxes, :/path without a selector, a relative path in the sandbox.
func TestCopyUsage(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"a", "b"}, {"x:/a", "y:/b"}, {"a", ":/b"}, {"a", "x:relative"}} {
		r := e.cp("", args...)
		if obj := cpError(t, r); r.Code != 2 || obj["code"] != "USAGE" || obj["written"] != "no" {
			t.Errorf("cp %q: exit %d %s; want 2 USAGE", args, r.Code, r.Stderr)
		}
	}
}

// A malformed --execd-token-secret refuses before anything is sent:
// TRANSPORT, executed no, not retryable, naming the form it wants.
func TestCpMalformedTokenSecretRefuses(t *testing.T) {
	e := newEnv(t)
	r := e.cp("", "--execd-token-secret", "no-key", "sbx-a:/etc/app.cfg", t.TempDir())
	if r.Code != 125 {
		t.Fatalf("exit %d, want 125; stderr %s", r.Code, r.Stderr)
	}
	m := cpError(t, r)
	if m["code"] != "TRANSPORT" || m["executed"] != "no" || m["retryable"] != false {
		t.Errorf("stderr %s", r.Stderr)
	}
	if msg, _ := m["message"].(string); !strings.Contains(msg, "NS/NAME:KEY") {
		t.Errorf("message %q names no form", msg)
	}
}
