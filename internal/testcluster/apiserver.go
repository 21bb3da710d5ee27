package testcluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// LabelTest marks namespaces with the (sanitized) name of the test that made them.
const LabelTest = "testcluster.sandscope.io/test"

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a fresh namespace for this test and returns its name,
// derived from the test name plus a random suffix. It is not deleted: with
// no controllers a deleted namespace stays Terminating forever, and the
// whole cluster is thrown away at the end of the package.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = strings.Trim(base[:40], "-")
	}
	if base == "" {
		base = "test"
	}
	name := base + "-" + strings.ToLower(rand.Text()[:6])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelTest: base}}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testcluster: creating namespace %s: %v", name, err)
	}
	return name
}

// Context returns a context for API calls of this test: cancelled when the
// test ends, and bounded (by the test binary's -timeout deadline, or 10
// minutes) so a hung call fails the test rather than hanging the binary.
// Kubelet and Controller use one for their whole life, so it must outlast
// long tests.
func Context(t testing.TB) context.Context {
	deadline := time.Now().Add(10 * time.Minute)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if td, ok := d.Deadline(); ok {
			deadline = td
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// StopAPIServer kills the kube-apiserver (etcd keeps running) and returns
// once its port refuses connections. Clients now see a lost cluster. If the
// test does not call StartAPIServer, it is started again when the test ends.
// Tests using it must not run in parallel with other tests of the package.
func (c *Cluster) StopAPIServer(t testing.TB) {
	t.Helper()
	c.pkg.apiMu.Lock()
	defer c.pkg.apiMu.Unlock()
	pid := c.apiServerPID(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		t.Fatalf("testcluster: StopAPIServer: killing kube-apiserver %d: %v", pid, err)
	}
	host := c.hostPort(t)
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		return !alive(pid) && !dialable(host), nil
	})
	if err != nil {
		t.Fatalf("testcluster: StopAPIServer: kube-apiserver %d still running/listening on %s after 15s", pid, host)
	}
	t.Cleanup(func() {
		if !dialable(host) {
			c.StartAPIServer(t)
		}
	})
}

// FreezeAPIServer stops the kube-apiserver's process (SIGSTOP) without
// closing anything: its port still accepts connections and nothing
// answers, as with a hung server or a partition without resets.
// ThawAPIServer (or the end of the test) resumes it.
func (c *Cluster) FreezeAPIServer(t testing.TB) {
	t.Helper()
	pid := c.apiServerPID(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("testcluster: FreezeAPIServer: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
}

// ThawAPIServer resumes a frozen kube-apiserver.
func (c *Cluster) ThawAPIServer(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(c.apiServerPID(t), syscall.SIGCONT); err != nil {
		t.Fatalf("testcluster: ThawAPIServer: %v", err)
	}
}

func (c *Cluster) apiServerPID(t testing.TB) int {
	t.Helper()
	pidFile := filepath.Join(c.pkg.state, "apiserver.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("testcluster: bad pid in %s: %v", pidFile, err)
	}
	return pid
}

// StartAPIServer starts the kube-apiserver again on the same port with the
// same etcd and flags, and returns once /readyz answers ok.
func (c *Cluster) StartAPIServer(t testing.TB) {
	t.Helper()
	pc := c.pkg
	pc.apiMu.Lock()
	defer pc.apiMu.Unlock()
	cmd := exec.Command(filepath.Join(pc.state, "apiserver.sh"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testcluster: StartAPIServer: %v\n%s", err, out)
	}
	if err := c.waitReady(60 * time.Second); err != nil {
		t.Fatalf("testcluster: StartAPIServer: %v; last log lines:\n%s", err, tail(filepath.Join(pc.state, "apiserver.log"), 20))
	}
}

func (c *Cluster) waitReady(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var last error
	for {
		reqCtx, reqCancel := context.WithTimeout(ctx, 2*time.Second)
		body, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(reqCtx)
		reqCancel()
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after %s: %v", limit, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) hostPort(t testing.TB) string {
	u, err := url.Parse(c.Server)
	if err != nil {
		t.Fatalf("testcluster: server URL %q: %v", c.Server, err)
	}
	return u.Host
}

func dialable(host string) bool {
	conn, err := net.DialTimeout("tcp", host, 200*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// alive: running and not a zombie (an orphan stays a zombie until init reaps it).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "State:"); ok {
			return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
		}
	}
	return false
}

func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
