package execute

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Cluster is the live view the check reads. *kube.Clients implements it; the
// demo can plug in a simulated one.
type Cluster interface {
	// LivePod reads the Pod from the API server, never from a cache. A
	// missing Pod is an error for which apierrors.IsNotFound is true.
	LivePod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	// PodsWithIP lists the Pods whose status.podIP is ip, live; limited is
	// true when only namespace could be listed.
	PodsWithIP(ctx context.Context, namespace, ip string) (pods []corev1.Pod, limited bool, err error)
	// LiveBatchSandbox reads a BatchSandbox from the API server, never from
	// a cache (a pooled sandbox's allocation). Not found as LivePod.
	LiveBatchSandbox(ctx context.Context, namespace, name string) (*model.BatchSandbox, error)
}

// Options configure an Executor.
type Options struct {
	// Cluster is required: the check's live reads.
	Cluster Cluster
	// Snapshot returns the latest fleet snapshot (target resolution and the
	// model's IP index). May be nil: then only pod/NAME targets resolve.
	Snapshot func() *fleet.Snapshot
	// Lookup, when set, resolves a Request.Ref with targeted live reads
	// instead of Snapshot (a one-shot exec has no watched fleet): it returns
	// a snapshot holding just the sandboxes ref names and what their
	// identity depends on (kube.Clients.LookupSandbox). namespace "" looks
	// everywhere.
	Lookup func(ctx context.Context, namespace, ref string) (*fleet.Snapshot, error)
	// Elsewhere, when set, reads the sandboxes and Pods called ref (a name
	// or pod/NAME) in every namespace, for a NOT_FOUND in one namespace to
	// name the namespaces that do hold that name. Unset, Lookup does (in
	// namespace ""), else the Snapshot is searched.
	Elsewhere func(ctx context.Context, ref string) (*fleet.Snapshot, error)
	// Transports by name. DefaultTransports builds the real ones.
	Transports map[Via]Transport
	// Forwarder opens Forward's tunnels (*kube.Clients); nil: Forward is
	// refused.
	Forwarder Forwarder
	// ReadOnly refuses every exec and port-forward with READ_ONLY.
	ReadOnly bool
	// AfterCheckTimeout bounds the check after the command (default 10 s).
	AfterCheckTimeout time.Duration
}

// DefaultTransports are the real transports over c. token is execd's access
// token ("" for none); port is execd's port (0 = 44772).
func DefaultTransports(c *kube.Clients, token string, port int) map[Via]Transport {
	return map[Via]Transport{
		ViaKube:        &KubeTransport{Clients: c},
		ViaExecd:       &ExecdTransport{Clients: c, Token: token, Port: port},
		ViaExecdDirect: &ExecdDirectTransport{Token: token, Port: port},
	}
}

// Executor runs identity-checked commands. Safe for concurrent use.
type Executor struct {
	opts Options
}

// New returns an Executor.
func New(opts Options) *Executor {
	if opts.AfterCheckTimeout <= 0 {
		opts.AfterCheckTimeout = 10 * time.Second
	}
	return &Executor{opts: opts}
}

// Request is one command.
type Request struct {
	Namespace string
	// Ref is SANDBOX (a name in Namespace or a sandbox key) or pod/NAME.
	Ref string
	// Sandbox, when set, is used instead of Ref (the UI has the row).
	Sandbox *model.Sandbox
	// Container; default: the main container ("sandbox", else the first).
	Container string
	Via       Via // default kube
	Command   []string
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	TTY       bool
	Sizes     TerminalSizeQueue
	// Timeout bounds the command (0: none). When it fires the outcome is
	// unknown: a quiet remote command keeps running after the client leaves.
	Timeout time.Duration
	// Interactive: a shell a person drives (no end marker).
	Interactive bool
	// ReadsOnly: the command is sandscope's own and only reads (a
	// download's tar -cf), so --readonly allows it. Never set for a
	// command a user typed.
	ReadsOnly bool
	// ExpectUID and ExpectIP are the Pod UID and IP the caller recorded
	// when it created the sandbox: the live Pod must still have them, so a
	// same-name re-creation is refused even by a process that never saw
	// the first Pod.
	ExpectUID, ExpectIP string
}

// Result is a command that ran and whose end was seen in the Pod meant.
type Result struct {
	ExitCode int
	Target   Target
	Evidence []model.Evidence
	// CheckTook is how long the check before dispatch took (its live reads).
	CheckTook time.Duration
}

// Run checks the target, sends the command, and checks again after it. It
// returns a Result only when the command provably ran to its end in the Pod
// meant; otherwise a *refusal.Error saying whether it ran (no / unknown). It never
// retries.
func (x *Executor) Run(ctx context.Context, req Request) (Result, error) {
	if x.opts.ReadOnly && !req.ReadsOnly {
		return Result{}, refusal.New(refusal.CodeReadOnly, "sandscope runs read-only (--readonly): exec is refused", false)
	}
	if req.Via == "" {
		req.Via = ViaKube
	}
	tr := x.opts.Transports[req.Via]
	if tr == nil {
		return Result{}, refusal.New(CodeTransport, fmt.Sprintf("transport %q is not available", req.Via), false)
	}
	if (req.Stdin != nil || req.TTY) && !tr.Streams() {
		why := fmt.Sprintf("transport %s carries no stdin or terminal", req.Via)
		if real, ok := x.opts.Transports[ViaKube]; ok && real.Streams() && req.Via != ViaKube {
			why += "; use --via kube"
		}
		return Result{}, refusal.New(refusal.CodeUsage, why+": run one-shot commands instead", false)
	}
	if len(req.Command) == 0 {
		return Result{}, refusal.New(refusal.CodeUsage, "no command given", false)
	}
	if x.opts.Cluster == nil {
		return Result{}, refusal.New(CodeTransport, "no cluster to check the target against", false)
	}

	return x.guard(ctx, req, tr.Exec)
}

// Guard runs act against the target of req between the same checks Run
// makes: the target is proven to be the sandbox's own Pod before act is
// called, and again after it returns. act receives the checked Pod (and,
// for execd-direct, the checked address) in a Dispatch whose Command is
// req's; it must report failures as Transport.Exec does (a
// *refusal.Error saying whether anything reached the Pod). Guard is how
// an action that is not a command (a file copy) gets exec's guarantee.
func (x *Executor) Guard(ctx context.Context, req Request, act func(ctx context.Context, d Dispatch) (Outcome, error)) (Result, error) {
	if x.opts.ReadOnly && !req.ReadsOnly {
		return Result{}, refusal.New(refusal.CodeReadOnly, "sandscope runs read-only (--readonly): the action is refused", false)
	}
	if req.Via == "" {
		req.Via = ViaKube
	}
	if x.opts.Cluster == nil {
		return Result{}, refusal.New(CodeTransport, "no cluster to check the target against", false)
	}
	return x.guard(ctx, req, act)
}

// Transport returns the transport of v, or nil.
func (x *Executor) Transport(v Via) Transport { return x.opts.Transports[v] }

func (x *Executor) guard(ctx context.Context, req Request, act func(ctx context.Context, d Dispatch) (Outcome, error)) (Result, error) {
	target, snap, before, live, took, err := x.admit(ctx, req, req.Via)
	if err != nil {
		return Result{}, err
	}
	if target.Container == "" {
		target.Container = MainContainer(live)
	}
	// A transport may return while its stream goroutines still copy output
	// (client-go's do, when the context ends); nothing may reach the
	// caller's writers after Run returns, where the CLI writes its one JSON
	// error line.
	stdout, stderr := newGatedWriter(req.Stdout), newGatedWriter(req.Stderr)
	defer stdout.close()
	defer stderr.close()
	d := Dispatch{Namespace: target.Namespace, Pod: target.Pod, UID: target.UID, Container: target.Container,
		Command: req.Command, Stdin: req.Stdin, Stdout: stdout.writer(), Stderr: stderr.writer(), TTY: req.TTY, Sizes: req.Sizes,
		Interactive: req.Interactive}
	if req.Via == ViaExecdDirect {
		d.Address = dialAddress(target, live)
	}

	runCtx := ctx
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	out, runErr := act(runCtx, d)
	stdout.close()
	stderr.close()
	if runErr == nil && runCtx.Err() != nil && ctx.Err() == nil {
		// The deadline passed before the end was seen: an exit status that
		// came after it is the client leaving (the command killed), not
		// the command's own.
		runErr = &refusal.Error{Code: CodeTimeout, Executed: refusal.ExecutedUnknown, Message: "the command was cut off by --timeout"}
	}
	if runErr != nil {
		e := asError(runErr)
		if e.Executed == refusal.ExecutedNo {
			e.Evidence = append(before.Evidence, e.Evidence...)
			return Result{}, e
		}
		if runCtx.Err() != nil && ctx.Err() == nil {
			e = &refusal.Error{Code: CodeTimeout, Executed: refusal.ExecutedUnknown, Err: runErr,
				Message: fmt.Sprintf("no end of the command within %s; it may still be running in the Pod", req.Timeout)}
		}
		e.Evidence = append(before.Evidence, e.Evidence...)
		return Result{}, e
	}

	// The command ended. Did it end in the Pod we meant?
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.opts.AfterCheckTimeout)
	defer cancel()
	if x.opts.Lookup == nil && x.opts.Snapshot != nil {
		snap = x.opts.Snapshot() // the watched fleet moved on while the command ran
	}
	after, _, err := x.check(actx, Target{Namespace: target.Namespace, Sandbox: target.Sandbox, Pod: target.Pod,
		UID: target.UID, IP: d.Address, Container: target.Container}, snap, req.Via, After)
	if err != nil {
		e := asError(err)
		return Result{}, &refusal.Error{Code: e.Code, Executed: refusal.ExecutedUnknown, Err: err, Evidence: append(before.Evidence, e.Evidence...),
			Message: "the command ended but the Pod could not be re-checked: " + e.Message}
	}
	if !after.OK() {
		return Result{}, &refusal.Error{Code: after.Code(), Executed: refusal.ExecutedUnknown,
			Message:  "the Pod changed while the command ran, so it may have run elsewhere: " + after.Message(),
			Evidence: append(before.Evidence, after.Evidence...)}
	}
	return Result{ExitCode: out.ExitCode, Target: target, Evidence: append(before.Evidence, target.hints...), CheckTook: took}, nil
}

// admit is the check before anything is sent, shared by every action that
// reaches into a Pod (a command, a port-forward): it resolves the target,
// gates it on the fleet model's identity state, reads the Pod live and runs
// Check at Before. A nil error means the target passed; a bare Pod's
// target is then bound to the UID read live.
func (x *Executor) admit(ctx context.Context, req Request, via Via) (Target, *fleet.Snapshot, Verdict, *corev1.Pod, time.Duration, error) {
	target, snap, err := x.resolve(ctx, req)
	if err != nil {
		return Target{}, nil, Verdict{}, nil, 0, err
	}
	if err := target.gate(); err != nil {
		return Target{}, nil, Verdict{}, nil, 0, err
	}
	if target.Sandbox != "" && !target.byPod && target.UID == "" {
		// Never bind a sandbox to whatever Pod answers now: only a bare
		// pod/NAME target is bound to the UID read live.
		return Target{}, nil, Verdict{}, nil, 0, refusal.New(CodeNotExecReady, fmt.Sprintf("sandbox %s has no Pod bound to it yet", target.Sandbox), true,
			observed("fleet model: slot 0 of %s links pod %s, whose UID it has not seen", target.Sandbox, orNone(target.Pod)))
	}
	start := time.Now()
	before, live, err := x.check(ctx, target, snap, via, Before)
	took := time.Since(start)
	if err != nil {
		return Target{}, nil, Verdict{}, nil, took, err
	}
	if live == nil && target.byPod && target.UID == "" {
		// Neither the model nor the caller ever saw this Pod here: it is
		// not gone, it was never found (perhaps in another namespace).
		where, ref := "in any namespace", target.Pod
		if target.Namespace != "" {
			where, ref = "in namespace "+target.Namespace, target.podRef()
		}
		e := asError(refusal.New(refusal.CodeNotFound, fmt.Sprintf("no pod %q %s", target.Pod, where), false,
			observed("API server: pod %s not found", ref)))
		x.elsewhere(ctx, target.Namespace, req.Ref, e)
		return Target{}, nil, Verdict{}, nil, took, e
	}
	if !before.OK() {
		return Target{}, nil, Verdict{}, nil, took, refusal.New(before.Code(), before.Message(), before.Retryable(), append(before.Evidence, target.hints...)...)
	}
	if target.UID == "" {
		target.UID = string(live.UID)
		before.Evidence = append(before.Evidence, inferred("pod %s is not in the fleet model: bound to uid %s read just now", target.podRef(), live.UID))
	}
	return target, snap, before, live, took, nil
}

// resolve finds the target and the snapshot its identity was read from.
func (x *Executor) resolve(ctx context.Context, req Request) (Target, *fleet.Snapshot, error) {
	if err := CheckExpectIP(req.ExpectIP); err != nil {
		return Target{}, nil, err
	}
	var snap *fleet.Snapshot
	if x.opts.Snapshot != nil {
		snap = x.opts.Snapshot()
	}
	var t Target
	var err error
	switch {
	case req.Sandbox != nil:
		t, err = TargetOf(req.Sandbox)
	case x.opts.Lookup != nil:
		snap, err = x.opts.Lookup(ctx, req.Namespace, req.Ref)
		if err != nil {
			return Target{}, nil, readFailure(err)
		}
		t, err = Resolve(snap, req.Namespace, req.Ref)
	default:
		t, err = Resolve(snap, req.Namespace, req.Ref)
	}
	if e := asError(err); e != nil && e.Code == refusal.CodeNotFound && req.Namespace != "" && req.Sandbox == nil {
		x.elsewhere(ctx, req.Namespace, req.Ref, e)
	}
	if err != nil {
		return Target{}, nil, err
	}
	if req.Container != "" {
		t.Container = req.Container
	}
	if req.ExpectUID != "" {
		// The caller's record outranks what the model bound: a process that
		// starts after a re-creation binds the new UID.
		t.UID = req.ExpectUID
	}
	t.ExpectIP = req.ExpectIP
	return t, snap, nil
}

// CheckExpectIP refuses (USAGE) an --expect-ip that is not an IP address:
// no Pod could ever match it, and refusing it later as IP_STALE would blame
// the Pod for the caller's typo.
func CheckExpectIP(ip string) error {
	if ip == "" {
		return nil
	}
	if _, err := netip.ParseAddr(ip); err != nil {
		return refusal.New(refusal.CodeUsage, fmt.Sprintf("--expect-ip %q is not an IP address", ip), false)
	}
	return nil
}

// elsewhere adds to a NOT_FOUND in namespace the namespaces that do hold
// a sandbox (for pod/NAME, a Pod) of that name: namespaces are
// case-sensitive, and the kubeconfig's default is easy to forget.
func (x *Executor) elsewhere(ctx context.Context, namespace, ref string, e *refusal.Error) {
	var snap *fleet.Snapshot
	var err error
	source := "API server"
	switch {
	case x.opts.Elsewhere != nil:
		snap, err = x.opts.Elsewhere(ctx, ref)
	case x.opts.Lookup != nil:
		snap, err = x.opts.Lookup(ctx, "", ref)
	case x.opts.Snapshot != nil:
		snap, source = x.opts.Snapshot(), "fleet model"
	}
	if err != nil || snap == nil {
		return
	}
	var where []string
	add := func(ns string) {
		if ns != namespace && !slices.Contains(where, ns) {
			where = append(where, ns)
		}
	}
	what, name := "sandbox", ref
	if pod, ok := podRefName(ref); ok {
		what, name = "Pod", pod
		for _, sb := range snap.Sandboxes() {
			if sb == nil {
				continue
			}
			for i := range sb.Slots {
				if sb.Slots[i].PodName == name {
					add(sb.Namespace())
				}
			}
		}
		for _, p := range snap.Pods() {
			if p != nil && p.Name == name {
				add(p.Namespace)
			}
		}
	} else {
		for _, sb := range snap.Sandboxes() {
			if sb != nil && sb.Name() == name {
				add(sb.Namespace())
			}
		}
	}
	if len(where) > 0 {
		slices.Sort(where)
		e.Message += fmt.Sprintf("; a %s of that name is in namespace %s (use -n)", what, strings.Join(where, ", "))
		e.Evidence = append(e.Evidence, observed("%s: a %s named %s is in namespace %s", source, what, name, strings.Join(where, ", ")))
	}
}

// check reads the Pod live (plus, for execd-direct, every Pod holding the
// address; for a pooled sandbox, its allocation) and runs Check.
func (x *Executor) check(ctx context.Context, t Target, snap *fleet.Snapshot, via Via, m Moment) (Verdict, *corev1.Pod, error) {
	live, err := x.opts.Cluster.LivePod(ctx, t.Namespace, t.Pod)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return Verdict{}, nil, readFailure(err)
	}
	in := CheckInput{Target: t, Via: via, Live: live, Moment: m}
	if t.Pooled && m == Before {
		b, err := x.opts.Cluster.LiveBatchSandbox(ctx, t.Namespace, t.sandboxName())
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return Verdict{}, nil, readFailure(err)
		default:
			in.Allocation = &Allocation{Pods: b.AllocatedPods()}
		}
	}
	addr := t.IP
	if via == ViaExecdDirect {
		if m == Before {
			addr = dialAddress(t, live)
		}
		in.Address = addr
	}
	in.Holders = modelHolders(snap, addr)
	var extra []model.Evidence
	if via == ViaExecdDirect && addr != "" {
		pods, limited, err := x.opts.Cluster.PodsWithIP(ctx, t.Namespace, addr)
		if err != nil {
			return Verdict{}, nil, readFailure(err)
		}
		livePods := make([]*corev1.Pod, len(pods))
		liveUIDs := map[string]bool{}
		for i := range pods {
			livePods[i] = &pods[i]
			liveUIDs[string(pods[i].UID)] = true
		}
		// The live list is newer than the model: a model holder it does not
		// show has since gone or moved (unless it sits in a namespace the
		// list could not see).
		kept := in.Holders[:0]
		for _, h := range in.Holders {
			if liveUIDs[h.UID] || (limited && h.Namespace != t.Namespace) {
				kept = append(kept, h)
			}
		}
		in.Holders = append(kept, HoldersFromPods(addr, "live", livePods...)...)
		if limited {
			extra = append(extra, inferred("listing pods in other namespaces is forbidden: only namespace %s was checked for another holder of %s", t.Namespace, addr))
		}
	}
	v := Check(in)
	v.Evidence = append(v.Evidence, extra...)
	return v, live, nil
}

// dialAddress is the address execd-direct dials: the one the model knows,
// else (a bare Pod) the live podIP. The check requires them to agree.
func dialAddress(t Target, live *corev1.Pod) string {
	if t.IP != "" || live == nil {
		return t.IP
	}
	return live.Status.PodIP
}

func readFailure(err error) *refusal.Error {
	if apierrors.IsForbidden(err) {
		return &refusal.Error{Code: refusal.CodeForbidden, Message: err.Error(), Executed: refusal.ExecutedNo, Err: err}
	}
	e := &refusal.Error{Code: CodeTransport, Message: "cannot check the Pod on the API server: " + err.Error(), Executed: refusal.ExecutedNo, Retryable: true, Err: err}
	if errors.Is(err, context.Canceled) {
		e.Retryable = false
	}
	return e
}

// gatedWriter passes writes on until it is closed, then drops them; close
// waits for a write in progress.
type gatedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func newGatedWriter(w io.Writer) *gatedWriter { return &gatedWriter{w: w} }

// writer is the gate, or nil when there is nothing to write to (transports
// treat a nil writer as "discard").
func (g *gatedWriter) writer() io.Writer {
	if g.w == nil {
		return nil
	}
	return g
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(p), nil
	}
	return g.w.Write(p)
}

func (g *gatedWriter) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
