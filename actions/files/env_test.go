package files_test

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/cli"
	"github.com/sandscope/sandscope/internal/clitest"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// file is one entry of a simulated container's file system.
type file struct {
	data []byte
	mode int64
	dir  bool
	link string
}

// container is a Pod incarnation's file system, which its tar reads and
// writes. serve, when set, is what its `tar -cf` sends instead (a hostile
// sandbox); during runs while its tar runs (a Pod replaced mid-copy).
type container struct {
	mu     sync.Mutex
	files  map[string]file
	serve  []byte
	during func()
	execs  int
}

// containers are the test kubelet's containers by Pod UID.
type containers struct {
	mu   sync.Mutex
	byID map[string]*container
}

func (cs *containers) of(uid string) *container {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.byID[uid]
	if c == nil {
		c = &container{files: map[string]file{"/": {dir: true}}}
		cs.byID[uid] = c
	}
	return c
}

// exec plays the kubelet's exec: tar, run directly (kubectl cp) or in the
// one-shot wrapper's `sh -c` (sandscope), works on the container's file
// system; anything else as ShellExec.
func (cs *containers) exec(ctx context.Context, req kubelettest.ExecRequest) error {
	argv := req.Command
	direct := len(argv) > 0 && argv[0] == "tar"
	wrapped := len(argv) == 3 && argv[1] == "-c" && strings.Contains(argv[2], "( tar ")
	if !direct && !wrapped {
		return kubelettest.ShellExec(ctx, req)
	}
	c := cs.of(req.UID)
	c.mu.Lock()
	c.execs++
	c.mu.Unlock()
	sh := &kubelettest.FakeShell{Stdin: req.Stdin, Stdout: req.Stdout, Stderr: req.Stderr,
		Commands: map[string]func(context.Context, *kubelettest.FakeShell, []string) int{"tar": c.tar}}
	if sh.Stdout == nil {
		sh.Stdout = io.Discard
	}
	if sh.Stderr == nil {
		sh.Stderr = io.Discard
	}
	if direct {
		return kubelettest.ExitCode(c.tar(ctx, sh, argv))
	}
	return kubelettest.ExitCode(sh.Run(ctx, argv[2]))
}

// tar plays tar's create (`cf -`) and extract (`xmf -`) modes, with -C and
// the long options kubectl passes (ignored); names lose a leading "/", as
// GNU tar's do.
func (c *container) tar(_ context.Context, sh *kubelettest.FakeShell, argv []string) int {
	if c.during != nil {
		c.during()
	}
	var mode, dir string
	var names []string
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "-C" && i+1 < len(argv):
			dir = argv[i+1]
			i++
		case a == "-", strings.HasPrefix(a, "--"):
		case mode == "":
			mode = strings.TrimPrefix(a, "-")
		default:
			names = append(names, a)
		}
	}
	switch {
	case strings.HasPrefix(mode, "x"):
		return c.extract(sh, dir)
	case strings.HasPrefix(mode, "c") && len(names) == 1:
		return c.create(sh, dir, names[0])
	}
	fmt.Fprintf(sh.Stderr, "tar: unexpected arguments %q\n", argv)
	return 2
}

func (c *container) extract(sh *kubelettest.FakeShell, dir string) int {
	tr := tar.NewReader(sh.Stdin)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintf(sh.Stderr, "tar: %v\n", err)
			return 2
		}
		f := file{mode: h.Mode, dir: h.Typeflag == tar.TypeDir, link: h.Linkname}
		if h.Typeflag == tar.TypeReg {
			f.data, _ = io.ReadAll(tr)
		}
		c.put(path.Join("/", dir, h.Name), f)
	}
}

func (c *container) create(sh *kubelettest.FakeShell, dir, name string) int {
	if c.serve != nil {
		_, _ = sh.Stdout.Write(c.serve)
		return 0
	}
	root := path.Join("/", dir, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.files[root]; !ok {
		fmt.Fprintf(sh.Stderr, "tar: %s: No such file or directory\n", name)
		return 2
	}
	strip := path.Join("/", dir) + "/"
	if dir == "" {
		strip = "/"
	}
	tw := tar.NewWriter(sh.Stdout)
	for _, p := range slices.Sorted(maps.Keys(c.files)) {
		if p != root && !strings.HasPrefix(p, root+"/") {
			continue
		}
		f := c.files[p]
		h := &tar.Header{Name: strings.TrimPrefix(p, strip), Mode: f.mode, Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		switch {
		case f.dir:
			h.Typeflag, h.Size, h.Name = tar.TypeDir, 0, h.Name+"/"
		case f.link != "":
			h.Typeflag, h.Size, h.Linkname = tar.TypeSymlink, 0, f.link
		}
		if tw.WriteHeader(h) != nil {
			return 2
		}
		// In tar's own block-sized writes: one write of a whole large file
		// is more than a stream frame carries.
		if _, err := io.CopyBuffer(tw, struct{ io.Reader }{bytes.NewReader(f.data)}, make([]byte, 32<<10)); err != nil {
			fmt.Fprintf(sh.Stderr, "tar: write error: %v\n", err)
			return 2 // the reader went away
		}
	}
	if tw.Close() != nil {
		return 2
	}
	return 0
}

func (c *container) put(p string, f file) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files[path.Clean(p)] = f
}

func (c *container) get(p string) (file, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.files[p]
	return f, ok
}

// env is one test's namespace with a test kubelet registered as a Node
// (testcluster.Sandboxes) whose containers have file systems, and the
// execd daemons of its Pods.
type env struct {
	*testcluster.Sandboxes
	fs *containers
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{fs: &containers{byID: map[string]*container{}}}
	e.Sandboxes = testcluster.Get(t).Sandboxes(t, "cp", testcluster.NodeOptions{Exec: e.fs.exec})
	return e
}

// startPod creates pod, binds it to the node, makes it Running with ip and
// starts its execd.
func (e *env) startPod(pod *corev1.Pod, ip string) *corev1.Pod {
	e.T.Helper()
	return e.Start(pod, ip, "")
}

func (e *env) running(name string) *corev1.Pod {
	return e.startPod(testcluster.SandboxPod(name, ""), testcluster.PodIP())
}

// kill ends the sandbox's main container and its execd.
func (e *env) kill(p *corev1.Pod) {
	e.T.Helper()
	e.Node.Kill(p)
}

// requests counts what reached a Pod: exec and port-forward requests at
// the kubelet, and requests at its execd.
func (e *env) requests(p *corev1.Pod) int64 {
	n := int64(e.Node.Requests(e.NS, p.Name))
	if d := e.Daemons.Get(string(p.UID)); d != nil {
		n += d.Requests()
	}
	return n
}

// cp runs `sandscope -n NS cp ARGS...` against the env's cluster.
func (e *env) cp(stdin string, args ...string) clitest.Result {
	e.T.Helper()
	return clitest.Run(cli.Main, stdin, append([]string{"--kubeconfig", e.C.Kubeconfig, "-n", e.NS, "cp"}, args...)...)
}

// cpError parses stderr, which must be exactly one JSON error object
// carrying the contract's keys.
func cpError(t *testing.T, r clitest.Result) map[string]any {
	t.Helper()
	return r.ErrorObject(t, "code", "message", "retryable", "executed", "written", "evidence")
}

var allVias = []string{"kube", "execd", "execd-direct"}

// nextSecond waits until the wall clock enters a new second, so that an
// object created next has a later creationTimestamp than one created before.
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now))
}
