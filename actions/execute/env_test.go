package execute_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/kube/execd/execdtest"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

func TestMain(m *testing.M) {
	flag.Parse()
	testcluster.Main(m)
}

// ipSeq hands out Pod IPs on loopback (127.N.x.y), so each Pod's execd is
// a real server on its own address. N is drawn per test process, so that
// two runs of this package at once (two checkouts on one machine) do not
// bind each other's addresses.
var (
	ipSeq   atomic.Int64
	ipOctet = 100 + rand.IntN(140) // clear of actions/create (127.78) and kube/execd (127.79)
)

func nextIP() string {
	n := ipSeq.Add(1)
	return fmt.Sprintf("127.%d.%d.%d", ipOctet, n/250, n%250+2)
}

// env is one test's cluster namespace, one test kubelet registered as a
// Node, the execd daemons of its Pods, and a fleet model fed by the test.
type env struct {
	t       testing.TB
	c       *testcluster.Cluster
	kl      *testcluster.Kubelet
	ns      string
	node    string
	clients *kube.Clients
	kubelet *kubelettest.Server
	fleet   *fleet.Fleet
	token   string
	pods    *execdtest.Pods // each Pod incarnation's execd, behind port-forward
}

func newEnv(t testing.TB, exec kubelettest.ExecFunc) *env {
	t.Helper()
	c := testcluster.Get(t)
	e := &env{t: t, c: c, kl: c.Kubelet(t), ns: c.Namespace(t), fleet: fleet.New(fleet.Options{}),
		pods: execdtest.NewPods()}
	e.node = "exec-" + e.ns
	var err error
	if e.clients, err = kube.NewClients(c.Config, e.ns); err != nil {
		t.Fatal(err)
	}
	if exec == nil {
		exec = kubelettest.ShellExec
	}
	e.kubelet, err = kubelettest.Start(kubelettest.Config{Addr: "127.0.0.1:0", LookupPod: kubelettest.APIPodLookup(c.Kube),
		Exec: exec, PortForward: e.pods.Forward})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.kubelet.Close() })
	if _, err := e.kubelet.RegisterNode(testcluster.Context(t), c.Kube, e.node); err != nil {
		t.Fatal(err)
	}
	e.fleet.SetStatus(model.SourceStatus{Synced: true, Namespaces: []string{e.ns}})
	t.Cleanup(e.pods.Close)
	return e
}

// start creates a sandbox Pod (OpenSandbox layout, label opensandbox.io/id),
// binds it to the env's node, makes it Running with ip, and starts its execd.
func (e *env) start(name, ip string) *corev1.Pod {
	e.t.Helper()
	e.kl.CreatePod(e.ns, testcluster.SandboxPod(name, ""))
	e.kl.Schedule(e.ns, name, e.node)
	p := e.kl.SetRunning(e.ns, name, ip)
	e.startDaemon(p)
	return p
}

func (e *env) startDaemon(p *corev1.Pod) *execdtest.Server {
	e.t.Helper()
	d, err := execdtest.Start(execdtest.Config{Addr: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(execd.DefaultPort)),
		Identity: fmt.Sprintf("pod=%s/%s uid=%s", p.Namespace, p.Name, p.UID), Token: e.token})
	if err != nil {
		e.t.Fatal(err)
	}
	e.pods.Add(string(p.UID), d)
	return d
}

func (e *env) daemon(p *corev1.Pod) *execdtest.Server {
	return e.pods.Get(string(p.UID))
}

// kill makes the Pod's main container exit and the Pod Failed, and stops its
// execd, as when a sandbox's command ends.
func (e *env) kill(p *corev1.Pod) *corev1.Pod {
	e.t.Helper()
	e.kl.Terminate(e.ns, p.Name, "sandbox", 137, "Error")
	out := e.kl.SetPhase(e.ns, p.Name, corev1.PodFailed, "", "")
	if d := e.daemon(p); d != nil {
		d.Close()
	}
	return out
}

// observe feeds the model the Pods as they are now on the API server.
func (e *env) observe(pods ...*corev1.Pod) {
	e.t.Helper()
	for _, p := range pods {
		live, err := e.c.Kube.CoreV1().Pods(p.Namespace).Get(testcluster.Context(e.t), p.Name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatalf("observe %s: %v", p.Name, err)
		}
		e.fleet.UpsertPod(model.SlimPod(live))
	}
}

// running starts a sandbox Pod on a fresh IP and shows it to the model.
func (e *env) running(name string) *corev1.Pod {
	e.t.Helper()
	p := e.start(name, nextIP())
	e.observe(p)
	return p
}

// ipTaken is incident 002 set up for a test: sandbox a's Pod dies, Pod b of
// another sandbox gets a's IP, and the model has seen both.
func (e *env) ipTaken(a, b string) (victim, thief *corev1.Pod) {
	e.t.Helper()
	ip := nextIP()
	victim = e.start(a, ip)
	e.observe(victim)
	e.kill(victim)
	thief = e.start(b, ip) // IPAM hands a's address to b
	e.observe(victim, thief)
	return victim, thief
}

func (e *env) executor(opts execute.Options) *execute.Executor {
	if opts.Cluster == nil {
		opts.Cluster = e.clients
	}
	if opts.Snapshot == nil {
		opts.Snapshot = e.fleet.Snapshot
	}
	if opts.Transports == nil {
		opts.Transports = execute.DefaultTransports(e.clients, e.token, 0)
	}
	return execute.New(opts)
}

// execRequests counts the exec requests the kubelet received for pod.
func (e *env) execRequests(pod string) int {
	n := 0
	for _, r := range e.kubelet.Requests() {
		if len(r.Path) > 0 && (hasPrefix(r.Path, "/exec/"+e.ns+"/"+pod+"/") || hasPrefix(r.Path, "/portForward/"+e.ns+"/"+pod)) {
			n++
		}
	}
	return n
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var allVias = []execute.Via{execute.ViaKube, execute.ViaExecd, execute.ViaExecdDirect}
