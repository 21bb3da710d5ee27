package execute_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/execd/execdtest"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// env is one test's namespace with a test kubelet registered as a Node
// and the execd daemons of its Pods (testcluster.Sandboxes), and a fleet
// model fed by the test.
type env struct {
	*testcluster.Sandboxes
	clients *kube.Clients
	fleet   *fleet.Fleet
	token   string
}

func newEnv(t testing.TB, exec kubelettest.ExecFunc) *env {
	t.Helper()
	c := testcluster.Get(t)
	e := &env{Sandboxes: c.Sandboxes(t, "exec", testcluster.NodeOptions{Exec: exec}), fleet: fleet.New(fleet.Options{})}
	var err error
	if e.clients, err = kube.NewClients(c.Config, e.NS); err != nil {
		t.Fatal(err)
	}
	e.fleet.SetStatus(model.SourceStatus{Synced: true, Namespaces: []string{e.NS}})
	return e
}

// start creates a sandbox Pod (OpenSandbox layout, label opensandbox.io/id),
// binds it to the env's node, makes it Running with ip, and starts its execd.
func (e *env) start(name, ip string) *corev1.Pod {
	e.T.Helper()
	return e.Start(testcluster.SandboxPod(name, ""), ip, e.token)
}

func (e *env) startDaemon(p *corev1.Pod) *execdtest.Server {
	e.T.Helper()
	return e.StartExecd(p, e.token)
}

func (e *env) daemon(p *corev1.Pod) *execdtest.Server {
	return e.Daemons.Get(string(p.UID))
}

// kill makes the Pod's main container exit and the Pod Failed, and stops its
// execd, as when a sandbox's command ends.
func (e *env) kill(p *corev1.Pod) *corev1.Pod {
	e.T.Helper()
	return e.Node.Kill(p)
}

// observe feeds the model the Pods as they are now on the API server.
func (e *env) observe(pods ...*corev1.Pod) {
	e.T.Helper()
	for _, p := range pods {
		live, err := e.C.Kube.CoreV1().Pods(p.Namespace).Get(testcluster.Context(e.T), p.Name, metav1.GetOptions{})
		if err != nil {
			e.T.Fatalf("observe %s: %v", p.Name, err)
		}
		e.fleet.UpsertPod(model.SlimPod(live))
	}
}

// running starts a sandbox Pod on a fresh IP and shows it to the model.
func (e *env) running(name string) *corev1.Pod {
	e.T.Helper()
	p := e.start(name, testcluster.PodIP())
	e.observe(p)
	return p
}

// ipTaken is incident 002 set up for a test: sandbox a's Pod dies, Pod b of
// another sandbox gets a's IP, and the model has seen both.
func (e *env) ipTaken(a, b string) (victim, thief *corev1.Pod) {
	e.T.Helper()
	ip := testcluster.PodIP()
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
func (e *env) execRequests(pod string) int { return e.Node.Requests(e.NS, pod) }

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var allVias = []execute.Via{execute.ViaKube, execute.ViaExecd, execute.ViaExecdDirect}
