package testcluster

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/kube/execd/execdtest"
)

// Node is a Node of the test cluster with a test kubelet behind it
// (kubelettest): the API server sends its Pods' exec, attach and
// port-forward there, and a Pod's port-forward reaches the fake execd the
// test started for that Pod incarnation (Daemons), as the real execd sits
// behind the kubelet. One Node is what a test of exec, cp or the create's
// readiness probe needs; Kubelet alone writes Pod states without one.
type Node struct {
	Name    string
	Kubelet *Kubelet
	Server  *kubelettest.Server
	// Daemons are the execd servers of the Node's Pods, by Pod UID.
	Daemons *execdtest.Pods
	t       testing.TB
}

// NodeOptions say how a Node's test kubelet answers. The zero value runs
// kubelettest.ShellExec and forwards ports into Daemons.
type NodeOptions struct {
	Exec        kubelettest.ExecFunc
	PortForward kubelettest.PortForwardFunc
}

// StartNode starts a test kubelet on loopback, registers it as Node name
// (Ready, its address and port in the status) and stops it when the test
// ends.
func (c *Cluster) StartNode(t testing.TB, name string, opts NodeOptions) *Node {
	t.Helper()
	n := &Node{Name: name, Kubelet: c.Kubelet(t), Daemons: execdtest.NewPods(), t: t}
	if opts.Exec == nil {
		opts.Exec = kubelettest.ShellExec
	}
	if opts.PortForward == nil {
		opts.PortForward = n.Daemons.Forward
	}
	srv, err := kubelettest.Start(kubelettest.Config{Addr: "127.0.0.1:0", LookupPod: kubelettest.APIPodLookup(c.Kube),
		Exec: opts.Exec, PortForward: opts.PortForward})
	if err != nil {
		t.Fatalf("testcluster: starting the test kubelet of node %s: %v", name, err)
	}
	n.Server = srv
	t.Cleanup(func() { srv.Close() })
	t.Cleanup(n.Daemons.Close)
	if _, err := srv.RegisterNode(Context(t), c.Kube, name); err != nil {
		t.Fatalf("testcluster: registering node %s: %v", name, err)
	}
	return n
}

// Run creates pod in ns, binds it to the Node and makes it Running at ip
// (Kubelet.SetRunning), and returns the stored Pod.
func (n *Node) Run(ns string, pod *corev1.Pod, ip string) *corev1.Pod {
	n.t.Helper()
	n.Kubelet.CreatePod(ns, pod)
	n.Kubelet.Schedule(ns, pod.Name, n.Name)
	return n.Kubelet.SetRunning(ns, pod.Name, ip)
}

// NodeNamespace is a test's namespace and a Node of its own, named
// prefix-NS: where a test of exec or cp runs its sandboxes.
func (c *Cluster) NodeNamespace(t testing.TB, prefix string, opts NodeOptions) (ns string, n *Node) {
	t.Helper()
	ns = c.Namespace(t)
	return ns, c.StartNode(t, prefix+"-"+ns, opts)
}

// RunWithExecd is Run, then StartExecd requiring token: a sandbox Pod
// running at ip with its execd up.
func (n *Node) RunWithExecd(ns string, pod *corev1.Pod, ip, token string) (*corev1.Pod, *execdtest.Server) {
	n.t.Helper()
	p := n.Run(ns, pod, ip)
	return p, n.StartExecd(p, token)
}

// StartExecd starts the fake execd of a Running Pod on its IP and execd's
// port, answering with the Pod's identity and requiring token (none when
// empty), and puts it behind the Pod's port-forward.
func (n *Node) StartExecd(p *corev1.Pod, token string) *execdtest.Server {
	n.t.Helper()
	d, err := execdtest.Start(execdtest.Config{Addr: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(execd.DefaultPort)),
		Identity: fmt.Sprintf("pod=%s/%s uid=%s", p.Namespace, p.Name, p.UID), Token: token})
	if err != nil {
		n.t.Fatalf("testcluster: starting the execd of pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	n.Daemons.Add(string(p.UID), d)
	return d
}

// Kill ends the Pod's main container (137, Error), fails the Pod and stops
// its execd, as when a sandbox's command ends.
func (n *Node) Kill(p *corev1.Pod) *corev1.Pod {
	n.t.Helper()
	n.Kubelet.Terminate(p.Namespace, p.Name, "sandbox", 137, "Error")
	out := n.Kubelet.SetPhase(p.Namespace, p.Name, corev1.PodFailed, "", "")
	if d := n.Daemons.Get(string(p.UID)); d != nil {
		d.Close()
	}
	return out
}

// Requests counts the exec and port-forward requests that reached the
// Node's kubelet for Pod ns/pod (any incarnation).
func (n *Node) Requests(ns, pod string) int {
	count := 0
	for _, r := range n.Server.Requests() {
		if strings.HasPrefix(r.Path, "/exec/"+ns+"/"+pod+"/") || strings.HasPrefix(r.Path, "/portForward/"+ns+"/"+pod) {
			count++
		}
	}
	return count
}

// PodIP is a Pod IP on loopback that no earlier call in this test process
// returned, 127.N.x.y, so each Pod's execd is a real server on an address of
// its own. N is drawn per test process from 100-239, so that two test
// binaries at once (two packages, or two checkouts on one machine) do not
// bind each other's addresses; fixed octets a package uses elsewhere stay
// below 100.
func PodIP() string { return podIPs.next() }

// podIPs is the process's one allocator: the addresses are the machine's,
// shared by every test and every cluster of the process, so two allocators
// in one process could hand out the same address.
var podIPs = &loopbackIPs{octet: 100 + rand.IntN(140)}

type loopbackIPs struct {
	octet int
	seq   atomic.Int64
}

func (l *loopbackIPs) next() string {
	n := l.seq.Add(1)
	return fmt.Sprintf("127.%d.%d.%d", l.octet, n/250, n%250+2)
}

// Sandboxes is one test's namespace with a Node of its own (NodeNamespace):
// where a test of exec or cp runs its sandbox Pods, each at an address of
// its own (PodIP) with its execd behind the Node's port-forward.
type Sandboxes struct {
	*Node
	T  testing.TB
	C  *Cluster
	NS string
}

// Sandboxes starts a Node of opts in a namespace of the test's own; the
// Node is named prefix-NS.
func (c *Cluster) Sandboxes(t testing.TB, prefix string, opts NodeOptions) *Sandboxes {
	t.Helper()
	ns, n := c.NodeNamespace(t, prefix, opts)
	return &Sandboxes{Node: n, T: t, C: c, NS: ns}
}

// Start runs pod in the namespace on the Node at ip, with its execd up
// requiring token (none when empty).
func (s *Sandboxes) Start(pod *corev1.Pod, ip, token string) *corev1.Pod {
	s.T.Helper()
	p, _ := s.RunWithExecd(s.NS, pod, ip, token)
	return p
}
