package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	clientexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// PodExecOptions is one pods/exec call.
type PodExecOptions struct {
	Namespace, Pod, Container string
	Command                   []string
	Stdin                     io.Reader // nil: no stdin stream
	Stdout, Stderr            io.Writer // Stderr is ignored with TTY (merged by the terminal)
	TTY                       bool
	// Sizes delivers terminal sizes (TTY only); nil: none.
	Sizes remotecommand.TerminalSizeQueue
}

// ExecError is a pods/exec failure, classified by how far the call got.
// client-go reports exec failures as plain strings, never API statuses
// (RECIPE pitfall 6), so the classification reads their text.
type ExecError struct {
	// NotStarted: the API server or the kubelet refused before the stream was
	// set up, so the command provably did not start.
	NotStarted bool
	// Forbidden: RBAC refused pods/exec (or pods/portforward).
	Forbidden bool
	// ExitCode is the remote exit code when the command ended non-zero
	// (HasExitCode is then true).
	ExitCode    int
	HasExitCode bool
	Err         error
}

func (e *ExecError) Error() string { return e.Err.Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// PodExec runs a command in a container through the API server's pods/exec,
// WebSocket first and SPDY if the upgrade fails, as kubectl does. It returns
// nil when the stream ended cleanly, which does NOT prove the command ran to
// its end: when the kubelet leg dies mid-command every client-go executor
// returns nil (RECIPE pitfall 1), so callers that need proof put their own
// end marker in the output. It never retries once the stream is set up.
func (c *Clients) PodExec(ctx context.Context, o PodExecOptions) error {
	opts := &corev1.PodExecOptions{
		Container: o.Container, Command: o.Command,
		Stdin: o.Stdin != nil, Stdout: o.Stdout != nil, Stderr: o.Stderr != nil && !o.TTY, TTY: o.TTY,
	}
	u := c.Kube.CoreV1().RESTClient().Post().Namespace(o.Namespace).Resource("pods").Name(o.Pod).
		SubResource("exec").VersionedParams(opts, scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(c.Config, "GET", u.String())
	if err != nil {
		return &ExecError{NotStarted: true, Err: fmt.Errorf("websocket executor for pod %s/%s: %w", o.Namespace, o.Pod, err)}
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.Config, "POST", u)
	if err != nil {
		return &ExecError{NotStarted: true, Err: fmt.Errorf("spdy executor for pod %s/%s: %w", o.Namespace, o.Pod, err)}
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, shouldFallBack)
	if err != nil {
		return &ExecError{NotStarted: true, Err: fmt.Errorf("exec for pod %s/%s: %w", o.Namespace, o.Pod, err)}
	}
	so := remotecommand.StreamOptions{Stdin: o.Stdin, Stdout: o.Stdout, Tty: o.TTY, TerminalSizeQueue: o.Sizes}
	if opts.Stderr {
		so.Stderr = o.Stderr
	}
	if err := exec.StreamWithContext(ctx, so); err != nil {
		return classifyExecError(fmt.Sprintf("exec in pod %s/%s", o.Namespace, o.Pod), err)
	}
	return nil
}

// shouldFallBack is kubectl v1.37's predicate. It must come from
// k8s.io/streaming: client-go v0.37's WebSocket transport returns that
// package's UpgradeFailureError, which k8s.io/apimachinery's IsUpgradeFailure
// does not recognise (RECIPE pitfall 5), and the fallback would never happen.
func shouldFallBack(err error) bool {
	return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
}

// notStartedMarkers are the texts of failures that happen before the
// kubelet starts the command (RECIPE §5 "Errors, verbatim").
var notStartedMarkers = []string{
	"unable to upgrade",      // API server or kubelet refused the upgrade (404, bad container, no host)
	"error dialing backend",  // SPDY: the API server could not reach the node
	"error sending request",  // WebSocket: the API server could not reach the node
	"does not have a host",   // Pod not scheduled
	"not found",              // Pod or node missing
	"connection refused",     // nothing listening
	"no such host",           // DNS
	"certificate",            // TLS verification failed
	"cannot exec into",       // kubectl-style refusals
	"is not valid for pod",   // bad container
	"a container name must ", // ambiguous container
}

func classifyExecError(what string, err error) error {
	e := &ExecError{Err: fmt.Errorf("%s: %w", what, err)}
	var exitErr clientexec.ExitError
	if errors.As(err, &exitErr) {
		e.ExitCode, e.HasExitCode = exitErr.ExitStatus(), true
		return e
	}
	msg := strings.ToLower(err.Error())
	if apierrors.IsForbidden(err) || strings.Contains(msg, "forbidden") {
		e.Forbidden, e.NotStarted = true, true
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return e // the stream may have been running: unknown
	}
	for _, m := range notStartedMarkers {
		if strings.Contains(msg, m) {
			e.NotStarted = true
			break
		}
	}
	return e
}

// PodsWithIP lists, live from the API server, the Pods whose status.podIP is
// ip (field selector status.podIP, served for Pods), in every namespace. When
// listing across namespaces is forbidden it lists namespace only and reports
// limited = true, so the caller can say that other namespaces went unseen.
func (c *Clients) PodsWithIP(ctx context.Context, namespace, ip string) (pods []corev1.Pod, limited bool, err error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	sel := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.podIP", ip).String()}
	list, err := c.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, sel)
	if apierrors.IsForbidden(err) && namespace != "" {
		limited = true
		list, err = c.Kube.CoreV1().Pods(namespace).List(ctx, sel)
	}
	if err != nil {
		return nil, limited, fmt.Errorf("listing pods with IP %s: %w", ip, err)
	}
	return list.Items, limited, nil
}

// SecretValue reads one key of a Secret. The value is a credential: callers
// must never print or log it, and the errors here never contain it.
func (c *Clients) SecretValue(ctx context.Context, namespace, name, key string) (string, error) {
	ctx, cancel := c.requestContext(ctx)
	defer cancel()
	s, err := c.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading secret %s/%s: %w", namespace, name, err)
	}
	v, ok := s.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return strings.TrimSpace(string(v)), nil
}
