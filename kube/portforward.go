package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/internal/syncbuf"
)

// PortForward is one running pods/portforward session with a local listener
// on 127.0.0.1, as `kubectl port-forward pod/NAME :PORT` sets up.
type PortForward struct {
	// LocalAddr is 127.0.0.1:<port> that reaches the Pod's port.
	LocalAddr string

	cancel context.CancelFunc
	done   chan struct{}
	errOut *syncbuf.Buffer
	err    error
}

// ForwardPort opens a port-forward to the Pod's remotePort, SPDY tunnelled
// over WebSocket first and plain SPDY if that upgrade fails (kubectl's
// order and predicate), and returns once the local listener is ready. A
// failure here means nothing was sent to the Pod. Close it when done.
func (c *Clients) ForwardPort(ctx context.Context, namespace, pod string, remotePort int) (*PortForward, error) {
	return c.ForwardPortFrom(ctx, namespace, pod, 0, remotePort)
}

// ForwardPortFrom is ForwardPort with a chosen local port on 127.0.0.1 (0:
// a free one), as `kubectl port-forward pod/NAME LOCAL:REMOTE`.
func (c *Clients) ForwardPortFrom(ctx context.Context, namespace, pod string, localPort, remotePort int) (*PortForward, error) {
	u := c.Kube.CoreV1().RESTClient().Post().Namespace(namespace).Resource("pods").Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(c.Config)
	if err != nil {
		return nil, &ExecError{NotStarted: true, Err: fmt.Errorf("port-forward to pod %s/%s: %w", namespace, pod, err)}
	}
	spdyDialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: transport}, "POST", u)
	wsDialer, err := portforward.NewSPDYOverWebsocketDialerForStreaming(u, c.Config)
	if err != nil {
		return nil, &ExecError{NotStarted: true, Err: fmt.Errorf("port-forward to pod %s/%s: %w", namespace, pod, err)}
	}
	dialer := portforward.NewFallbackDialerForStreaming(wsDialer, spdyDialer, shouldFallBack)

	fctx, cancel := context.WithCancel(ctx)
	pf := &PortForward{cancel: cancel, done: make(chan struct{}), errOut: &syncbuf.Buffer{}}
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddressesForStreamingWithContext(fctx, dialer, []string{"127.0.0.1"},
		[]string{strconv.Itoa(localPort) + ":" + strconv.Itoa(remotePort)}, ready, io.Discard, pf.errOut)
	if err != nil {
		cancel()
		return nil, &ExecError{NotStarted: true, Err: fmt.Errorf("port-forward to pod %s/%s: %w", namespace, pod, err)}
	}
	crash.Go(func() {
		defer close(pf.done)
		pf.err = fw.ForwardPorts()
	})
	select {
	case <-ready:
	case <-pf.done:
		cancel()
		err := orCanceled(pf.err)
		if d := strings.TrimSpace(pf.errOut.String()); d != "" {
			err = fmt.Errorf("%w (%s)", err, d)
		}
		ee := classifyExecError(fmt.Sprintf("port-forward to pod %s/%s", namespace, pod), err).(*ExecError)
		ee.NotStarted = true // nothing was forwarded before the listener was ready
		return nil, ee
	case <-ctx.Done():
		cancel()
		<-pf.done
		return nil, &ExecError{NotStarted: true, Err: fmt.Errorf("port-forward to pod %s/%s: %w", namespace, pod, ctx.Err())}
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		pf.Close()
		return nil, &ExecError{NotStarted: true, Err: fmt.Errorf("port-forward to pod %s/%s: no local port: %v", namespace, pod, err)}
	}
	pf.LocalAddr = "127.0.0.1:" + strconv.Itoa(int(ports[0].Local))
	return pf, nil
}

// Done is closed when the session has ended (Close, or the tunnel broke).
func (pf *PortForward) Done() <-chan struct{} { return pf.done }

// Err is why the session ended (nil while it runs or after a clean Close).
func (pf *PortForward) Err() error {
	select {
	case <-pf.done:
		return pf.err
	default:
		return nil
	}
}

// Close stops forwarding and waits for the session to end.
func (pf *PortForward) Close() {
	pf.cancel()
	select {
	case <-pf.done:
	case <-time.After(5 * time.Second):
	}
}

func orCanceled(err error) error {
	if err == nil {
		return errors.New("port-forward ended before it was ready")
	}
	return err
}
