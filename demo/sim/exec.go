package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// ExecRequest is one command for a simulated sandbox Pod. The simulated
// execd answers it from the simulation's state; nothing runs on the host.
type ExecRequest struct {
	Namespace, Pod string
	// UID, when set, must be the Pod's current UID (a same-name re-creation
	// is another Pod).
	UID string
	// Address, when set, routes by IP instead of by name: the request lands
	// in whichever live Pod holds the address now, exactly like a client
	// that dials a recorded IP, which a new Pod may hold by then.
	Address string
	// Execd: the request goes to execd (port 44772), which is not listening
	// in sandboxes created without an entrypoint.
	Execd   bool
	Command []string
	Stdout  io.Writer
	Stderr  io.Writer
}

// ExecError says why a simulated command could not start (it never ran).
type ExecError struct {
	Reason string
}

func (e *ExecError) Error() string { return e.Reason }

// execTarget is what a command needs to know about its Pod, copied under the lock.
type execTarget struct {
	ns, pod, uid, ip, node string
	id, tenant, image      string
	command                []string
	env                    []corev1.EnvVar
	now                    time.Time
}

// Exec runs req in the simulated sandbox and returns its exit code. An error
// means the command did not start (no such Pod, not running, execd not
// listening, nothing at the address).
func (s *Sim) Exec(ctx context.Context, req ExecRequest) (int, error) {
	t, err := s.execTarget(req)
	if err != nil {
		return 0, err
	}
	return runSimulated(ctx, t, req.Command, orDiscard(req.Stdout), orDiscard(req.Stderr)), nil
}

// ShellLine runs one line typed into a simulated interactive shell in req's
// Pod (req.Command is ignored), the way sh runs it: commands separated by
// ';', '&&' or newlines, "$?" is the status of the command before, and
// "exit [N]" ends the shell (a bare exit with that status). last is the
// status the previous line left. An error means the Pod can no longer be
// reached (gone, re-created under another UID, terminating, its container
// stopped): nothing of the line ran.
func (s *Sim) ShellLine(ctx context.Context, req ExecRequest, line string, last int) (code int, exited bool, err error) {
	t, err := s.execTarget(req)
	if err != nil {
		return last, false, err
	}
	code, exited = runScript(ctx, t, line, last, orDiscard(req.Stdout), orDiscard(req.Stderr))
	return code, exited, nil
}

// Ping is execd's GET /ping to hostPort, answered by the simulation as
// it would be by the network: it reaches whichever live Pod holds the
// address now, and fails as a dial would when nothing holds it, the port
// is not execd's, the container is not running or execd is not listening
// (a sandbox created without an entrypoint). Nothing leaves the process.
func (s *Sim) Ping(ctx context.Context, hostPort string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return &ExecError{Reason: err.Error()}
	}
	if port != strconv.Itoa(osv1.ExecdPort) {
		return &ExecError{Reason: fmt.Sprintf("dial tcp %s: connect: connection refused", hostPort)}
	}
	_, err = s.execTarget(ExecRequest{Address: host, Execd: true})
	return err
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func (s *Sim) execTarget(req ExecRequest) (execTarget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb *sandbox
	var p *simPod
	if req.Address != "" {
		sb, p = s.livePodWithIP(req.Address)
		if p == nil {
			return execTarget{}, &ExecError{Reason: fmt.Sprintf("dial tcp %s:%d: connect: no route to host", req.Address, osv1.ExecdPort)}
		}
	} else {
		sb, p = s.podByName(req.Namespace, req.Pod)
		if p == nil {
			return execTarget{}, &ExecError{Reason: fmt.Sprintf("pods %q not found", req.Pod)}
		}
		if req.UID != "" && string(p.obj.UID) != req.UID {
			return execTarget{}, &ExecError{Reason: fmt.Sprintf("pod %s/%s has UID %s, not %s", req.Namespace, req.Pod, p.obj.UID, req.UID)}
		}
	}
	pod := p.obj
	if pod.DeletionTimestamp != nil {
		return execTarget{}, &ExecError{Reason: fmt.Sprintf("pod %s is terminating", pod.Name)}
	}
	if len(pod.Status.ContainerStatuses) == 0 || pod.Status.ContainerStatuses[0].State.Running == nil {
		return execTarget{}, &ExecError{Reason: fmt.Sprintf("container %s is not running in pod %s", osv1.ContainerSandbox, pod.Name)}
	}
	if req.Execd && sb != nil && sb.execdDown {
		return execTarget{}, &ExecError{Reason: fmt.Sprintf("dial tcp %s:%d: connect: connection refused (execd is not listening)", pod.Status.PodIP, osv1.ExecdPort)}
	}
	t := execTarget{
		ns: pod.Namespace, pod: pod.Name, uid: string(pod.UID), ip: pod.Status.PodIP, node: pod.Spec.NodeName,
		image: pod.Spec.Containers[0].Image, command: pod.Spec.Containers[0].Command,
		env: pod.Spec.Containers[0].Env, now: s.now,
	}
	if sb != nil {
		t.id, t.tenant = sb.id, sb.tenant
	}
	return t, nil
}

// podByName finds a simulated Pod (sandbox or pool Pod) by name.
func (s *Sim) podByName(ns, name string) (*sandbox, *simPod) {
	if sb := s.podOwner[key(ns, name)]; sb != nil {
		for _, p := range sb.pods {
			if p != nil && p.obj != nil && p.obj.Name == name {
				return sb, p
			}
		}
	}
	if pl := s.pools[ns]; pl != nil {
		for _, p := range pl.idle {
			if p.obj != nil && p.obj.Name == name {
				return nil, p
			}
		}
	}
	return nil, nil
}

// livePodWithIP finds the running Pod that holds ip now.
func (s *Sim) livePodWithIP(ip string) (*sandbox, *simPod) {
	keys := make([]string, 0, len(s.sandboxes))
	for k := range s.sandboxes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sb := s.sandboxes[k]
		for _, p := range sb.pods {
			if p != nil && p.obj != nil && p.obj.Status.PodIP == ip && isLive(p.obj) {
				return sb, p
			}
		}
	}
	for _, pl := range s.pools {
		for _, p := range pl.idle {
			if p.obj != nil && p.obj.Status.PodIP == ip && isLive(p.obj) {
				return nil, p
			}
		}
	}
	return nil, nil
}

// isLive: a Pod neither terminating nor ended can hold an address.
func isLive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// IsExecError says whether err means the simulated command never started.
func IsExecError(err error) bool {
	var e *ExecError
	return errors.As(err, &e)
}
