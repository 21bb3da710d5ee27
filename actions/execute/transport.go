package execute

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"k8s.io/client-go/tools/remotecommand"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/execd"
	"github.com/sandscope/sandscope/model"
)

// Via names a transport.
type Via string

const (
	// ViaKube is pods/exec through the API server (WebSocket, SPDY fallback).
	ViaKube Via = "kube"
	// ViaExecd is execd's POST /command through a pods/portforward tunnel.
	ViaExecd Via = "execd"
	// ViaExecdDirect is execd at <podIP>:44772, for use inside the cluster.
	// Routed by address: the transport IP reuse can fool.
	ViaExecdDirect Via = "execd-direct"
)

// ParseVia checks a --via value.
func ParseVia(s string) (Via, error) {
	switch v := Via(s); v {
	case ViaKube, ViaExecd, ViaExecdDirect:
		return v, nil
	case "":
		return ViaKube, nil
	}
	return "", fmt.Errorf("unknown transport %q (want kube, execd or execd-direct)", s)
}

// TerminalSize and TerminalSizeQueue are client-go's: Next blocks until the
// terminal's size changes and returns nil when there are no more.
type (
	// TerminalSize is a terminal's width and height.
	TerminalSize = remotecommand.TerminalSize
	// TerminalSizeQueue hands out a terminal's sizes as they change.
	TerminalSizeQueue = remotecommand.TerminalSizeQueue
)

// Dispatch is one command for one checked Pod.
type Dispatch struct {
	Namespace, Pod, UID, Container string
	// Address is the Pod IP to dial (execd-direct only).
	Address string
	Command []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	TTY     bool
	Sizes   TerminalSizeQueue
	// Interactive: a shell a person drives. Transports then pass the stream
	// through untouched (no end marker) and the outcome rests on the stream.
	Interactive bool
}

// Outcome is a command that provably ended.
type Outcome struct {
	ExitCode int
}

// Transport carries a checked command to a Pod. Implementations must not
// retry once anything may have reached the Pod, must return an Outcome only
// for a command whose end they saw, and must return failures as a *refusal.Error with
// Executed set ("no" only when the command provably did not start). The
// embedded demo plugs in a simulated one through Options.Transports.
type Transport interface {
	Exec(ctx context.Context, d Dispatch) (Outcome, error)
	// Streams reports whether stdin and a terminal can be carried.
	Streams() bool
}

// KubeTransport is pods/exec. One-shot commands are wrapped as
// sh -c '( CMD ); echo <marker>$?' with a random marker: client-go returns
// nil when the kubelet leg dies mid-command (a dead node looks like
// success), so only the marker proves the command ended, and it carries the
// exit status.
type KubeTransport struct {
	Clients *kube.Clients
}

// Streams reports true: pods/exec carries stdin and a terminal.
func (k *KubeTransport) Streams() bool { return true }

// Exec runs d through the API server's pods/exec.
func (k *KubeTransport) Exec(ctx context.Context, d Dispatch) (Outcome, error) {
	opts := kube.PodExecOptions{Namespace: d.Namespace, Pod: d.Pod, Container: d.Container,
		Stdin: d.Stdin, Stdout: d.Stdout, Stderr: d.Stderr, TTY: d.TTY, Sizes: d.Sizes, Command: d.Command}
	if d.Interactive {
		err := k.Clients.PodExec(ctx, opts)
		if err == nil {
			return Outcome{}, nil
		}
		var ee *kube.ExecError
		if errors.As(err, &ee) && ee.HasExitCode {
			return Outcome{ExitCode: ee.ExitCode}, nil
		}
		return Outcome{}, execFailure(err)
	}
	marker := newMarker()
	out := &markerWriter{w: d.Stdout, marker: []byte(marker)}
	opts.Stdout = out
	opts.Command = WrapWithMarker(d.Command, marker)
	err := k.Clients.PodExec(ctx, opts)
	out.flush()
	if code, ok := out.exitCode(); ok {
		return Outcome{ExitCode: code}, nil
	}
	if err == nil {
		return Outcome{}, &refusal.Error{Code: CodeTransport, Executed: refusal.ExecutedUnknown,
			Message:  "the exec stream ended without the command's end marker: the connection to the node broke, the command may have run",
			Evidence: []model.Evidence{inferred("client-go returned success but no end marker arrived (a dying kubelet leg looks like success)")}}
	}
	return Outcome{}, execFailure(err)
}

func execFailure(err error) *refusal.Error {
	var ee *kube.ExecError
	if !errors.As(err, &ee) {
		return &refusal.Error{Code: CodeTransport, Message: err.Error(), Executed: refusal.ExecutedUnknown, Err: err}
	}
	switch {
	case ee.Forbidden:
		return &refusal.Error{Code: refusal.CodeForbidden, Message: err.Error(), Executed: refusal.ExecutedNo, Err: err}
	case ee.NotStarted:
		return &refusal.Error{Code: CodeTransport, Message: err.Error(), Executed: refusal.ExecutedNo, Retryable: true, Err: err}
	case ee.HasExitCode:
		return &refusal.Error{Code: CodeTransport, Executed: refusal.ExecutedUnknown, Err: err,
			Message: fmt.Sprintf("the wrapper shell exited %d before the command's end marker: %v", ee.ExitCode, err)}
	}
	return &refusal.Error{Code: CodeTransport, Message: err.Error(), Executed: refusal.ExecutedUnknown, Err: err}
}

// WrapWithMarker is the one-shot wrapper: run argv in a subshell, then print
// marker and its exit status on stdout.
func WrapWithMarker(argv []string, marker string) []string {
	return []string{"sh", "-c", "( " + ShellJoin(argv) + " ); echo " + marker + "$?"}
}

func newMarker() string {
	b := make([]byte, 16)
	rand.Read(b) // crypto/rand.Read never returns an error (Go 1.24+)
	return "__sandscope_end_" + hex.EncodeToString(b) + "_"
}

// ShellJoin quotes argv for sh: safe words as they are, others in '…'.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ExecdTransport reaches execd through a pods/portforward tunnel, like
// `kubectl port-forward pod/NAME :44772` followed by POST /command.
type ExecdTransport struct {
	Clients *kube.Clients
	Token   string // X-EXECD-ACCESS-TOKEN; never printed
	Port    int    // default 44772
}

// Streams reports false: execd's POST /command carries neither stdin nor a terminal.
func (e *ExecdTransport) Streams() bool { return false }

// Exec runs d through the Pod's execd, over a pods/portforward tunnel.
func (e *ExecdTransport) Exec(ctx context.Context, d Dispatch) (Outcome, error) {
	c, done, err := e.Daemon(ctx, d)
	if err != nil {
		return Outcome{}, err
	}
	defer done()
	return runExecd(ctx, c, d)
}

// Daemon opens the tunnel to the checked Pod's execd and pings it; done
// closes the tunnel. Its error is a refusal (nothing was sent).
func (e *ExecdTransport) Daemon(ctx context.Context, d Dispatch) (c *execd.Client, done func(), err error) {
	pf, err := e.Clients.ForwardPort(ctx, d.Namespace, d.Pod, portOr(e.Port))
	if err != nil {
		return nil, nil, execFailure(err)
	}
	c = &execd.Client{BaseURL: "http://" + pf.LocalAddr, Token: e.Token}
	// A ping first: a tunnel is set up even when nothing listens in the Pod,
	// and only a failed ping proves the command was not sent.
	if err := c.Ping(ctx); err != nil {
		pf.Close()
		return nil, nil, execdFailure(err, true)
	}
	return c, func() { pf.Close() }, nil
}

// ExecdDirectTransport dials execd at the checked Pod IP.
type ExecdDirectTransport struct {
	Token string
	Port  int
}

// Streams reports false: execd's POST /command carries neither stdin nor a terminal.
func (e *ExecdDirectTransport) Streams() bool { return false }

// Exec runs d through the Pod's execd, dialled at the Pod IP.
func (e *ExecdDirectTransport) Exec(ctx context.Context, d Dispatch) (Outcome, error) {
	c, _, err := e.Daemon(ctx, d)
	if err != nil {
		return Outcome{}, err
	}
	return runExecd(ctx, c, d)
}

// Daemon is the client of execd at the checked address (d.Address) and
// nothing else; done does nothing.
func (e *ExecdDirectTransport) Daemon(_ context.Context, d Dispatch) (c *execd.Client, done func(), err error) {
	if d.Address == "" {
		return nil, nil, refusal.New(CodeNotExecReady, "no address to dial", true)
	}
	c = &execd.Client{BaseURL: "http://" + net.JoinHostPort(d.Address, strconv.Itoa(portOr(e.Port))), Token: e.Token}
	return c, func() {}, nil
}

// DaemonTransport is a transport that reaches the Pod's execd, for actions
// other than a command (the files API).
type DaemonTransport interface {
	Transport
	Daemon(ctx context.Context, d Dispatch) (c *execd.Client, done func(), err error)
}

// DaemonFailure reads an error of an execd call other than /command as
// exec reads its own: a refusal.Error saying whether the request reached the
// daemon.
func DaemonFailure(err error) error { return execdFailure(err, false) }

func runExecd(ctx context.Context, c *execd.Client, d Dispatch) (Outcome, error) {
	res, err := c.Run(ctx, execd.CommandRequest{Command: ShellJoin(d.Command)}, d.Stdout, d.Stderr)
	if err != nil {
		return Outcome{}, execdFailure(err, false)
	}
	return Outcome{ExitCode: res.ExitCode}, nil
}

func execdFailure(err error, ping bool) *refusal.Error {
	var ee *execd.Error
	if !errors.As(err, &ee) {
		return &refusal.Error{Code: CodeTransport, Message: err.Error(), Executed: refusal.ExecutedUnknown, Err: err}
	}
	switch {
	case ee.Redirected():
		return &refusal.Error{Code: CodeRedirected, Executed: refusal.ExecutedNo, Err: err,
			Message: fmt.Sprintf("execd answered HTTP %d with a redirect to %q; redirects are never followed (the command and token stay with the checked address)", ee.Status, ee.Location)}
	case ee.Unauthorized():
		return &refusal.Error{Code: refusal.CodeForbidden, Message: "execd refused the access token: " + ee.Message, Executed: refusal.ExecutedNo, Err: err}
	case ping:
		return &refusal.Error{Code: CodeNotExecReady, Message: "execd does not answer /ping: " + err.Error(), Executed: refusal.ExecutedNo, Retryable: true, Err: err}
	case !ee.Sent && ee.Status == 0:
		return &refusal.Error{Code: CodeNotExecReady, Message: "cannot reach execd: " + err.Error(), Executed: refusal.ExecutedNo, Retryable: true, Err: err}
	case !ee.Sent:
		return &refusal.Error{Code: CodeTransport, Message: "execd refused the command: " + err.Error(), Executed: refusal.ExecutedNo, Err: err}
	}
	return &refusal.Error{Code: CodeTransport, Message: err.Error() + "; the command may have run", Executed: refusal.ExecutedUnknown, Err: err}
}

func portOr(p int) int {
	if p == 0 {
		return execd.DefaultPort
	}
	return p
}
