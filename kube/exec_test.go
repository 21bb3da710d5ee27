package kube_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sandscope/sandscope/internal/syncbuf"
	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/internal/testcluster/kubelettest"
	"github.com/sandscope/sandscope/kube"
)

type execEnv struct {
	c       *testcluster.Cluster
	ns      string
	n       *testcluster.Node
	clients *kube.Clients
	kubelet *kubelettest.Server // n's
	// ctx bounds the test's calls: a hung exec fails in 30s, not at the
	// go test timeout.
	ctx context.Context
}

func newExecEnv(t *testing.T, exec kubelettest.ExecFunc) *execEnv {
	t.Helper()
	c := testcluster.Get(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	e := &execEnv{c: c, ctx: ctx}
	e.ns, e.n = c.NodeNamespace(t, "kexec", testcluster.NodeOptions{Exec: exec, PortForward: kubelettest.EchoPortForward})
	e.kubelet = e.n.Server
	var err error
	if e.clients, err = kube.NewClients(c.Config, e.ns); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *execEnv) pod(name, ip string) *corev1.Pod {
	return e.n.Run(e.ns, testcluster.SandboxPod(name, ""), ip)
}

func TestPodExecStdoutAndExitCode(t *testing.T) {
	e := newExecEnv(t, kubelettest.ShellExec)
	p := e.pod("web", "127.78.0.2")
	var out, errOut syncbuf.Buffer
	err := e.clients.PodExec(e.ctx, kube.PodExecOptions{Namespace: e.ns, Pod: "web", Container: "sandbox",
		Command: []string{"sh", "-c", "echo hi; stderr oops; exit 3"}, Stdout: &out, Stderr: &errOut})
	var ee *kube.ExecError
	if !errors.As(err, &ee) || !ee.HasExitCode || ee.ExitCode != 3 || ee.NotStarted {
		t.Fatalf("err %v (%+v)", err, ee)
	}
	if !strings.Contains(out.String(), "uid="+string(p.UID)) || !strings.HasSuffix(out.String(), "hi\n") || errOut.String() != "oops\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errOut.String())
	}
	if err := e.clients.PodExec(e.ctx, kube.PodExecOptions{Namespace: e.ns, Pod: "web", Container: "sandbox",
		Command: []string{"true"}, Stdout: &out}); err != nil {
		t.Fatalf("exit 0: %v", err)
	}
}

// Failures before the stream exists are NotStarted; the text is all
// client-go gives (RECIPE pitfall 6).
func TestPodExecErrorsBeforeTheStreamAreNotStarted(t *testing.T) {
	e := newExecEnv(t, kubelettest.ShellExec)
	e.pod("on-node", "127.78.0.3")
	cases := map[string]kube.PodExecOptions{
		"pod missing":   {Namespace: e.ns, Pod: "missing", Container: "sandbox"},
		"bad container": {Namespace: e.ns, Pod: "on-node", Container: "nope"},
	}
	for name, o := range cases {
		o.Command, o.Stdout = []string{"true"}, &syncbuf.Buffer{}
		err := e.clients.PodExec(e.ctx, o)
		var ee *kube.ExecError
		if !errors.As(err, &ee) || !ee.NotStarted || ee.HasExitCode {
			t.Errorf("%s: %v (%+v)", name, err, ee)
		}
	}
	e.kubelet.Close() // node down
	err := e.clients.PodExec(e.ctx, kube.PodExecOptions{Namespace: e.ns, Pod: "on-node", Container: "sandbox", Command: []string{"true"}, Stdout: &syncbuf.Buffer{}})
	var ee *kube.ExecError
	if !errors.As(err, &ee) || !ee.NotStarted {
		t.Errorf("node down: %v", err)
	}
}

// Pins RECIPE pitfall 1, which the end marker in actions/execute exists
// for: when the kubelet leg dies mid-command, PodExec returns nil.
func TestPodExecNodeDiesMidStreamReturnsNil(t *testing.T) {
	started := make(chan struct{}, 1)
	e := newExecEnv(t, kubelettest.DiesMidCommand(started))
	e.pod("dies", "127.78.0.4")
	var out syncbuf.Buffer
	go func() {
		// The node dies once the command's first output reached the client.
		<-started
		_ = wait.PollUntilContextTimeout(e.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return out.String() != "", nil
		})
		e.kubelet.Close()
	}()
	err := e.clients.PodExec(e.ctx, kube.PodExecOptions{Namespace: e.ns, Pod: "dies", Container: "sandbox", Command: []string{"sleep", "10"}, Stdout: &out})
	if err != nil {
		t.Logf("client-go now reports the broken leg: %v (the end marker still decides)", err)
	}
	if out.String() != "working\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestPortForwardReachesThePod(t *testing.T) {
	e := newExecEnv(t, nil)
	p := e.pod("fwd", "127.78.0.5")
	pf, err := e.clients.ForwardPort(e.ctx, e.ns, "fwd", 44772)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	conn, err := net.Dial("tcp", pf.LocalAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, "ping")
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	banner, _ := rd.ReadString('\n')
	echo, _ := rd.ReadString('\n')
	if banner != fmt.Sprintf("portforward pod=%s/fwd uid=%s port=44772\n", e.ns, p.UID) || echo != "ping\n" {
		t.Fatalf("got %q %q", banner, echo)
	}
	if _, err := e.clients.ForwardPort(e.ctx, e.ns, "missing", 44772); err == nil {
		t.Fatal("port-forward to a missing pod succeeded")
	} else if ee := (*kube.ExecError)(nil); !errors.As(err, &ee) || !ee.NotStarted {
		t.Fatalf("missing pod: %v", err)
	}
}

func TestPodsWithIPUsesTheFieldSelector(t *testing.T) {
	e := newExecEnv(t, nil)
	a := e.pod("holder", "127.78.0.6")
	e.pod("other", "127.78.0.7")
	pods, limited, err := e.clients.PodsWithIP(e.ctx, e.ns, "127.78.0.6")
	if err != nil || limited {
		t.Fatal(err, limited)
	}
	if len(pods) != 1 || pods[0].UID != a.UID {
		t.Fatalf("got %d pods: %v", len(pods), pods)
	}
}
