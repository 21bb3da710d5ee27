package execute

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Forwarder opens pods/portforward tunnels. *kube.Clients implements it.
type Forwarder interface {
	ForwardPortFrom(ctx context.Context, namespace, pod string, localPort, remotePort int) (*kube.PortForward, error)
}

// ForwardRequest is one port-forward to a sandbox's Pod.
type ForwardRequest struct {
	Namespace string
	// Ref is SANDBOX or pod/NAME, as Request.Ref.
	Ref string
	// Sandbox, when set, is used instead of Ref (the UI has the row).
	Sandbox *model.Sandbox
	// RemotePort is the Pod's port (0: execd's, 44772).
	RemotePort int
	// LocalPort on 127.0.0.1 (0: a free one).
	LocalPort int
	// Recheck is how often the Pod is re-checked live while the forward is
	// open (default 3 s).
	Recheck time.Duration
}

// Forward is an open, identity-checked port-forward. pods/portforward is
// routed by Pod name, so a Pod re-created under the same name would receive
// the next connection: the Pod is re-checked every Recheck and the forward
// closes itself when the check fails (Err says why).
type Forward struct {
	// LocalAddr is 127.0.0.1:PORT, reaching RemotePort in the Pod.
	LocalAddr  string
	RemotePort int
	Target     Target
	Since      time.Time
	// Evidence is what the check before opening saw.
	Evidence []model.Evidence

	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// Done is closed when the forward has ended (Close, a failed re-check, or
// the tunnel broke).
func (f *Forward) Done() <-chan struct{} { return f.done }

// Err is why the forward ended on its own: a *refusal.Error; nil while it runs or
// after Close.
func (f *Forward) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Close stops forwarding and waits until the listener is gone.
func (f *Forward) Close() {
	f.cancel()
	<-f.done
}

func (f *Forward) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// readFailuresBeforeClose: a re-check that cannot read the Pod proves
// nothing either way; a few in a row mean the forward is unwatched.
const readFailuresBeforeClose = 3

// Forward runs the same check as Run before dispatch (the sandbox's slot OK
// in the model; the Pod read live has the bound UID, is Running and not
// being deleted; no other Pod holds its address) and only then opens a
// pods/portforward tunnel from 127.0.0.1. The forward outlives ctx (which
// bounds only the check and the opening); Close it when done.
func (x *Executor) Forward(ctx context.Context, req ForwardRequest) (*Forward, error) {
	if x.opts.ReadOnly {
		return nil, refusal.New(refusal.CodeReadOnly, "sandscope runs read-only (--readonly): port-forward is refused", false)
	}
	if req.RemotePort == 0 {
		req.RemotePort = portOr(0)
	}
	if req.RemotePort < 1 || req.RemotePort > 65535 || req.LocalPort < 0 || req.LocalPort > 65535 {
		return nil, refusal.New(refusal.CodeUsage, fmt.Sprintf("ports must be 1-65535 (local %d, remote %d)", req.LocalPort, req.RemotePort), false)
	}
	if x.opts.Forwarder == nil {
		return nil, refusal.New(CodeTransport, "port-forward is not available here", false)
	}
	if x.opts.Cluster == nil {
		return nil, refusal.New(CodeTransport, "no cluster to check the target against", false)
	}
	if req.Recheck <= 0 {
		req.Recheck = 3 * time.Second
	}
	target, snap, before, _, _, err := x.admit(ctx, Request{Namespace: req.Namespace, Ref: req.Ref, Sandbox: req.Sandbox}, ViaKube)
	if err != nil {
		return nil, err
	}

	// The tunnel lives until Close or a failed re-check, not until the
	// caller's ctx ends; ctx may still abort the opening.
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	pf, err := x.opts.Forwarder.ForwardPortFrom(lctx, target.Namespace, target.Pod, req.LocalPort, req.RemotePort)
	aborted := !stop()
	if err != nil || aborted {
		cancel()
		if pf != nil {
			pf.Close()
		}
		if err == nil {
			err = ctx.Err()
		}
		e := execFailure(err)
		e.Executed = refusal.ExecutedNo // no connection was accepted yet
		e.Evidence = append(before.Evidence, e.Evidence...)
		return nil, e
	}
	f := &Forward{LocalAddr: pf.LocalAddr, RemotePort: req.RemotePort, Target: target, Since: time.Now(),
		Evidence: append(before.Evidence, target.hints...), cancel: cancel, done: make(chan struct{})}
	crash.Go(func() { x.watchForward(lctx, f, pf, snap, req.Recheck) })
	return f, nil
}

// watchForward re-checks the forward's Pod until the forward ends, and
// closes it when the Pod is no longer the one checked before it opened.
func (x *Executor) watchForward(ctx context.Context, f *Forward, pf *kube.PortForward, snap *fleet.Snapshot, every time.Duration) {
	defer close(f.done)
	defer pf.Close()
	defer f.cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-pf.Done():
			why := "the tunnel ended"
			if err := pf.Err(); err != nil {
				why += ": " + err.Error()
			}
			f.fail(&refusal.Error{Code: CodeTransport, Executed: refusal.ExecutedUnknown, Message: why})
			return
		case <-tick.C:
		}
		if x.opts.Lookup == nil && x.opts.Snapshot != nil {
			snap = x.opts.Snapshot() // the model's IP index moves on
		}
		rctx, rcancel := context.WithTimeout(ctx, every+5*time.Second)
		v, _, err := x.check(rctx, f.Target, snap, ViaKube, Before)
		rcancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if failures++; failures < readFailuresBeforeClose {
				continue
			}
			e := asError(err)
			f.fail(&refusal.Error{Code: e.Code, Executed: refusal.ExecutedUnknown, Err: err,
				Message: "the Pod could not be re-checked: " + e.Message})
			return
		}
		failures = 0
		if !v.OK() {
			f.fail(&refusal.Error{Code: v.Code(), Executed: refusal.ExecutedUnknown, Evidence: v.Evidence,
				Message: fmt.Sprintf("the Pod is not the one checked any more: %s; a connection in the last %s may have reached it", v.Message(), every)})
			return
		}
	}
}
