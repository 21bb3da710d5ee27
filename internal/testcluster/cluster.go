// Package testcluster is the harness of sandscope's integration tests: a
// real kube-apiserver backed by a real etcd, one cluster per test package,
// and the players of what runs on a cluster but not here (the scheduler and
// kubelet, the engines' controllers). README.md says which harness or fake
// to use when.
//
// What it holds:
//
//   - the cluster (Main, MainWith, Get, Start, Namespace, Kubeconfig,
//     ConfigAs) and its faults (StopAPIServer, FreezeAPIServer, CutEtcd);
//   - Kubelet: the scheduler's and kubelet's writes (binding, Pod status,
//     Events, node conditions), and Controller: the engines' controllers'
//     (their objects, status, annotations), each step through the API;
//   - Node (StartNode): a Node served by a test kubelet (kubelettest) for
//     exec, attach and port-forward, with fake execd daemons behind it;
//   - object builders (SandboxPod, BatchSandbox, Pool, AgentSandbox, ...),
//     RunningSandbox for one healthy sandbox, and CreateFleetSandbox with
//     Parallel for thousands;
//   - the CRDs it installs (sandscope's minimal ones, the engines' upstream
//     manifests, or none).
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { testcluster.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := testcluster.Get(t)     // skips when the binaries are not built (fails under CI=true)
//		ns := c.Namespace(t)     // a fresh namespace for this test
//		kl := c.Kubelet(t)       // plays scheduler+kubelet: bind, IPs, container states, Events, nodes
//		ct := c.Controller(t)    // plays the engines' controllers: CRs, their status and annotations
//		kl.CreatePod(ns, testcluster.SandboxPod("sbx-0", "", "tail", "-f", "/dev/null"))
//		kl.SetRunning(ns, "sbx-0", "10.244.1.5")
//		...
//	}
//
// MainWith chooses other CRDs (the engines' unchanged upstream manifests, or
// none) and extra kube-apiserver flags. Cluster.StopAPIServer and
// StartAPIServer play a lost and recovered API server (same port, same data).
// Start gives a test a cluster of its own beside the package's (several
// clusters at once), and Kubeconfig one kubeconfig with a context for each.
//
// The binaries (kube-apiserver, etcd) come from $SANDSCOPE_TESTCLUSTER_BIN or
// ~/.cache/sandscope/testcluster/bin, built by tools/testcluster/build.sh.
// No controllers, scheduler or kubelet run: whatever a test wants a Pod or a
// custom resource to look like, it writes through the API itself (Kubelet,
// Controller), exactly as those components would. A detached watchdog stops
// the cluster if the test binary dies without cleaning up (go test -timeout).
//
// # Sharing one cluster
//
// Main starts one etcd and kube-apiserver per test binary (that is, per
// package), installs the CRDs and pays the API server's first-use costs
// before any test runs. Tests share it and keep out of each other's way by
// working in their own Namespace, which is never deleted (with no namespace
// controller it would stay Terminating); the whole cluster is thrown away
// when the binary ends. Tests that stop or freeze the API server change it
// for everyone and must not run in parallel with the package's others.
//
// # Why not controller-runtime's envtest
//
// envtest (sigs.k8s.io/controller-runtime/pkg/envtest) starts the same
// control plane, etcd and kube-apiserver with no scheduler, controllers or
// kubelet, and is shared the same way (one Environment from TestMain, a
// namespace per test). It adds CRD installation from directories, admission
// webhooks, extra authenticated users and running against an existing
// cluster; sandscope has no webhook and plays restricted users by
// impersonation, so it needs none of that. What testcluster needs, envtest
// would not give:
//
//   - The binaries: envtest runs prebuilt kube-apiserver and etcd from
//     KUBEBUILDER_ASSETS, which setup-envtest downloads from release
//     storage. testcluster builds the release pinned in tools/testcluster/go.mod
//     from the Go module proxy, like every other dependency.
//   - The dependency: controller-runtime and its tree would enter go.mod for
//     tests alone; testcluster needs client-go only.
//   - Faults: the watcher's tests lose the cluster and get it back. testcluster
//     owns the processes, so a test can kill kube-apiserver alone and start
//     it again on the same port over the same etcd data, or freeze it with
//     SIGSTOP (StopAPIServer, StartAPIServer, FreezeAPIServer). With
//     Options.EtcdProxy its etcd traffic runs through a proxy in the test
//     binary that CutEtcd cuts: an API server that answers but cannot read
//     its storage.
//   - Cleanup: envtest stops its processes in Environment.Stop, which a
//     test binary killed by go test -timeout never reaches; the watchdog
//     above does not depend on the binary.
//   - Warm-up: the first create of a new CRD's objects sleeps 2 s in the API
//     server, and the first watch of a resource is refused (429) while its
//     watch cache fills. Main pays both once, so no test waits on them or
//     flakes on them; envtest's CRD installation waits only until the
//     resources are served.
//
// Neither gives a kubelet. Kubelet writes what a scheduler and kubelet
// write (binding, Pod status, Events, node conditions) through the API, and
// a Node's test kubelet (kubelettest) serves the kubelet's streaming
// endpoints, so pods/exec and port-forward go through the real API server
// to a loopback TLS server.
package testcluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sandscope/sandscope/internal/crash"
)

// EnvBinDir names the folder holding kube-apiserver and etcd.
const EnvBinDir = "SANDSCOPE_TESTCLUSTER_BIN"

// ModulePath is the module whose go.mod marks the repository root.
const ModulePath = "github.com/sandscope/sandscope"

// CRDSet chooses which CustomResourceDefinitions Main installs.
type CRDSet int

const (
	// SandscopeCRDs are sandscope's own minimal definitions of the engines'
	// resources (BatchSandbox, Pool, SandboxSnapshot, agent-sandbox Sandbox):
	// exact names and versions, schemas that keep every field. The default.
	SandscopeCRDs CRDSet = iota
	// UpstreamCRDs are the engines' unchanged manifests from
	// <repo>/../shared/crds. When that folder is missing, Get skips (fails
	// under CI=true).
	UpstreamCRDs
	// NoCRDs installs nothing: a cluster without any sandbox engine.
	NoCRDs
)

func (s CRDSet) String() string {
	switch s {
	case SandscopeCRDs:
		return "sandscope's minimal CRDs"
	case UpstreamCRDs:
		return "upstream engine CRDs"
	case NoCRDs:
		return "no CRDs"
	}
	return fmt.Sprintf("CRDSet(%d)", int(s))
}

// Options tune the package's cluster; the zero value is what Main uses.
type Options struct {
	CRDs CRDSet
	// APIServerExtraArgs are appended to kube-apiserver's flags.
	APIServerExtraArgs []string
	// EtcdProxy routes kube-apiserver's connections to etcd through a proxy
	// in the test binary, so that Cluster.CutEtcd can take the storage away
	// from a running API server.
	EtcdProxy bool
	// SecondAPIServer starts a second kube-apiserver over the same etcd,
	// always connected to it directly (Cluster.SecondConfig): with
	// EtcdProxy, an HA pair one of whose members loses its storage while
	// the other keeps taking writes.
	SecondAPIServer bool
}

// Cluster is the package's running test cluster, as seen by one test.
type Cluster struct {
	// Config is an admin config with client-side rate limiting off (QPS -1):
	// client-go's default 5 QPS would make tests slow, not more realistic.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for this cluster
	// (current context "testcluster", namespace "default").
	Kubeconfig string
	Kube       kubernetes.Interface
	Dynamic    dynamic.Interface
	// Server is the API server URL, https://127.0.0.1:<port>.
	Server string
	// StateDir holds the PKI, logs, etcd data and the start/stop state.
	StateDir string

	pkg *packageCluster
}

// packageCluster is what Main started; shared by every test in the package.
type packageCluster struct {
	opts    Options
	repo    string
	scripts string
	binDir  string
	state   string // the folder that start.sh filled
	cluster *Cluster
	skip    string // reason every Get skips; empty when the cluster runs
	fail    string // reason every Get fails
	proxy   *relay // nil unless Options.EtcdProxy
	apiMu   sync.Mutex
}

// current is the cluster Main started for this test binary. A test binary
// is one package, so this package-level state is one cluster per package.
var current struct {
	sync.Mutex
	pc *packageCluster
}

// Main starts the package's test cluster with sandscope's minimal CRDs, runs
// the tests and stops the cluster. It calls os.Exit.
func Main(m *testing.M) { MainWith(m, Options{}) }

// MainWith is Main with options (other CRDs, extra API server flags).
func MainWith(m *testing.M, opts Options) {
	os.Exit(run(m, opts))
}

func run(m *testing.M, opts Options) int {
	// m.Run parses the flags too; -v is needed earlier for start's progress line.
	if !flag.Parsed() {
		flag.Parse()
	}
	pc, stop := start(opts)
	current.Lock()
	current.pc = pc
	current.Unlock()
	defer stop()
	if pc.fail != "" {
		fmt.Fprintln(os.Stderr, "testcluster:", pc.fail)
	} else if pc.skip != "" {
		fmt.Fprintln(os.Stderr, "testcluster: tests needing a cluster will skip:", pc.skip)
	}
	return m.Run()
}

// inCI reports whether a missing test cluster must fail instead of skip.
func inCI() bool { return os.Getenv("CI") == "true" }

// start brings the cluster up. It never exits: problems become pc.skip or
// pc.fail, reported by every Get, so tests without a cluster still run.
func start(opts Options) (*packageCluster, func()) {
	pc := &packageCluster{opts: opts}
	noop := func() {}
	repo, err := RepoRoot()
	if err != nil {
		pc.fail = err.Error()
		return pc, noop
	}
	pc.repo = repo
	pc.scripts = filepath.Join(repo, "tools", "testcluster")
	pc.binDir = BinDir()
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(pc.binDir, bin)); err != nil {
			pc.missing(fmt.Sprintf("no %s in %s (build it with tools/testcluster/build.sh %s, or set %s)", bin, pc.binDir, pc.binDir, EnvBinDir))
			return pc, noop
		}
	}
	var crdFiles []string
	if opts.CRDs == UpstreamCRDs {
		dir := UpstreamCRDDir(repo)
		if crdFiles, err = upstreamCRDFiles(dir); err != nil {
			pc.missing(err.Error())
			return pc, noop
		}
	}
	parent, err := os.MkdirTemp("", "sandscope-kubetest-")
	if err != nil {
		pc.fail = fmt.Sprintf("creating the cluster state folder: %v", err)
		return pc, noop
	}
	pc.state = filepath.Join(parent, "cluster")
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if pc.proxy != nil {
			defer pc.proxy.Close()
		}
		cmd := exec.Command(filepath.Join(pc.scripts, "stop.sh"), pc.state)
		cmd.Env = append(os.Environ(), "STOP_SIGNAL=KILL")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "testcluster: stop.sh: %v\n%s", err, out)
		}
		os.RemoveAll(parent)
	}
	// A test binary killed by `go test -timeout` (or kill -9) never runs its
	// deferred stop; a detached watchdog stops the cluster once we are gone.
	watchdog := exec.Command("bash", "-c",
		`while kill -0 "$1" 2>/dev/null; do sleep 1; done; STOP_SIGNAL=KILL "$2" "$3" >/dev/null 2>&1; rm -rf "$4"`,
		"kubetest-watchdog", fmt.Sprint(os.Getpid()), filepath.Join(pc.scripts, "stop.sh"), pc.state, parent)
	watchdog.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := watchdog.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testcluster: watchdog not started, a killed test binary may leak etcd/kube-apiserver:", err)
	} else {
		crash.Go(func() { _ = watchdog.Wait() }) // reaps it if it ends first
	}

	t0 := time.Now()
	cmd := exec.Command(filepath.Join(pc.scripts, "start.sh"), pc.state)
	cmd.Env = append(os.Environ(), "BIN_DIR="+pc.binDir, "APISERVER_EXTRA_ARGS="+strings.Join(opts.APIServerExtraArgs, " "))
	if opts.EtcdProxy {
		if pc.proxy, err = newEtcdProxy(etcdURLTarget(pc.state)); err != nil {
			pc.fail = err.Error()
			return pc, stop
		}
		cmd.Env = append(cmd.Env, "APISERVER_ETCD_SERVERS=http://"+pc.proxy.Addr())
	}
	if opts.SecondAPIServer {
		cmd.Env = append(cmd.Env, "SECOND_APISERVER=1")
	}
	if os.Getenv("READY_TIMEOUT") == "" {
		// Parallel test packages on 2 busy cores took up to 40 s to start.
		cmd.Env = append(cmd.Env, "READY_TIMEOUT=180")
	}
	// Own process group: a Ctrl-C aimed at `go test` must not kill etcd
	// before kube-apiserver (stop.sh's order), the watchdog cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		pc.fail = fmt.Sprintf("start.sh failed: %v\n%s", err, out)
		return pc, stop
	}
	started := time.Since(t0)
	c, err := newCluster(pc)
	if err != nil {
		pc.fail = err.Error()
		return pc, stop
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := prepare(ctx, c, opts, crdFiles); err != nil {
		pc.fail = fmt.Sprintf("preparing the cluster (%s): %v", opts.CRDs, err)
		return pc, stop
	}
	pc.cluster = c
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "testcluster: cluster %s ready with %s in %s (start.sh %s, CRDs and warm-up %s)\n", c.Server, opts.CRDs,
			time.Since(t0).Round(time.Millisecond), started.Round(time.Millisecond), (time.Since(t0) - started).Round(time.Millisecond))
	}
	return pc, stop
}

// missing records a missing prerequisite: a skip locally, a failure in CI.
func (pc *packageCluster) missing(reason string) {
	if inCI() {
		pc.fail = "CI=true and the test cluster cannot run: " + reason
	} else {
		pc.skip = reason
	}
}

func newCluster(pc *packageCluster) (*Cluster, error) {
	kubeconfig := filepath.Join(pc.state, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	return &Cluster{Config: cfg, Kubeconfig: kubeconfig, Kube: kube, Dynamic: dyn, Server: cfg.Host, StateDir: pc.state, pkg: pc}, nil
}

// Get returns the package's cluster. Without binaries it skips the test
// (fails under CI=true); if the cluster failed to start it fails the test.
func Get(t testing.TB) *Cluster {
	t.Helper()
	current.Lock()
	pc := current.pc
	current.Unlock()
	if pc == nil {
		t.Fatal("testcluster.Get: no test cluster; call testcluster.Main(m) from TestMain")
	}
	return pc.clusterFor(t)
}

// GetWithNamespace is Get and a fresh Namespace of the test's own, the
// start of most tests: their objects never meet another test's.
func GetWithNamespace(t testing.TB) (*Cluster, string) {
	t.Helper()
	c := Get(t)
	return c, c.Namespace(t)
}

// clusterFor is the cluster pc started, as one test sees it (a config of
// its own); the test skips or fails when pc did not start one.
func (pc *packageCluster) clusterFor(t testing.TB) *Cluster {
	t.Helper()
	switch {
	case pc.fail != "":
		t.Fatalf("testcluster: %s", pc.fail)
	case pc.skip != "":
		t.Skipf("testcluster: no test cluster: %s", pc.skip)
	}
	c := *pc.cluster
	c.Config = rest.CopyConfig(pc.cluster.Config)
	return &c
}

// RepoRoot walks up from the working directory (go test runs in the
// package's folder) to the go.mod of module github.com/sandscope/sandscope.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePathOf(data) == ModulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("finding the repository root: no go.mod of module %s above the working directory", ModulePath)
		}
		dir = parent
	}
}

func modulePathOf(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`)
		}
	}
	return ""
}

// BinDir is where the test-cluster binaries are looked for.
func BinDir() string {
	if dir := os.Getenv(EnvBinDir); dir != "" {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "sandscope", "testcluster", "bin")
}

// UpstreamCRDDir is where the engines' unchanged CRD manifests live:
// <repo>/../shared/crds (present in CI; never copied into the repository).
func UpstreamCRDDir(repo string) string {
	return filepath.Join(filepath.Dir(repo), "shared", "crds")
}

func upstreamCRDFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("upstream CRDs: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("upstream CRDs: no manifests in %s", dir)
	}
	return files, nil
}

// errorsJoin keeps the first few errors of a concurrent step readable.
func errorsJoin(errs []error) error { return errors.Join(errs...) }
