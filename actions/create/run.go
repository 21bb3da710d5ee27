package create

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
)

// run is one create after resolution.
type run struct {
	c       *Creator
	req     Request
	engine  engineKind
	gvr     schema.GroupVersionResource
	id      string
	onStage func(StageUpdate)
	result  *Result

	stage     Stage
	stageAt   time.Time
	ownedPods map[string]bool // Pods of this sandbox seen (deleted on cleanup)

	// claim is set for a SandboxClaim (--warm-pool): what was created and
	// what cleanup deletes; the run follows the Sandbox it is bound to.
	claim *claimRun
}

func (r *run) create(ctx context.Context, obj any) (*Result, error) {
	u := obj.(*unstructured.Unstructured)
	if _, err := r.c.Clients.CreateObject(ctx, r.gvr, u); err != nil {
		e := kubeError("creating the sandbox", err)
		if e.Code == CodeConnection || ctx.Err() != nil {
			// The request may have reached the server: the object may exist.
			// Its name is ours, so delete by name rather than orphan it.
			e.Executed = refusal.ExecutedUnknown
			e.Sandbox, e.Namespace = r.id, r.req.Namespace
			e.Cleanup = r.cleanup(nil)
		}
		return nil, e
	}
	r.ownedPods = map[string]bool{}
	r.reach(StageQueued, r.c.Now(), "object accepted")
	if r.req.NoWait {
		r.result.Stage = StageQueued
		r.emitFinal(nil)
		return r.result, nil
	}
	return r.follow(ctx)
}

// reach records a stage the first time it is reached, never going back.
func (r *run) reach(s Stage, at time.Time, detail string) {
	if r.stage != "" && stageRank[s] <= stageRank[r.stage] {
		return
	}
	var elapsed time.Duration
	if !r.stageAt.IsZero() {
		elapsed = at.Sub(r.stageAt)
	}
	r.stage, r.stageAt = s, at
	r.result.Stages = append(r.result.Stages, StageRecord{Stage: s, At: at, Detail: detail})
	r.onStage(StageUpdate{Sandbox: r.id, Namespace: r.req.Namespace, Stage: s, At: at, Detail: detail, Elapsed: elapsed, Final: s == StageReady})
}

func (r *run) emitFinal(e *Error) {
	if e == nil {
		if r.stage != StageReady { // NoWait: Queued is the last update
			last := r.result.Stages[len(r.result.Stages)-1]
			r.onStage(StageUpdate{Sandbox: r.id, Namespace: r.req.Namespace, Stage: last.Stage, At: last.At, Detail: last.Detail, Final: true})
		}
		return
	}
	now := r.c.Now()
	retryable := e.Retryable
	r.onStage(StageUpdate{Sandbox: r.id, Namespace: r.req.Namespace, Stage: StageFailed, At: now, Detail: e.Message,
		Elapsed: now.Sub(r.stageAt), Final: true, Err: e, Executed: e.Executed, Retryable: &retryable})
}

func (r *run) target() kube.WatchTarget {
	t := kube.WatchTarget{GVR: r.gvr, Namespace: r.req.Namespace, Name: r.id}
	switch r.engine {
	case engineBatchSandbox:
		t.PodSelector = labels.Set{osv1.LabelSandboxID: r.id}.String()
		t.PodName = r.id + "-0"
	case engineAgent:
		t.PodSelector = labels.Set{kube.LabelAgentSandbox: r.id}.String()
		if r.claim != nil {
			t.PodSelector, t.PodName = r.claim.podSelector, r.id // the controller names the Pod like the Sandbox
		}
	case enginePool:
		t.PodSelector = labels.Set{osv1.LabelPoolName: r.req.Pool}.String()
	}
	return t
}

// podsOf keeps the candidate Pods that are this sandbox's.
func (r *run) podsOf(obj *unstructured.Unstructured, pods []*corev1.Pod) []*corev1.Pod {
	if r.engine != enginePool {
		return pods
	}
	allocated := map[string]bool{}
	if obj != nil {
		for _, p := range allocatedPods(obj) {
			allocated[p] = true
		}
	}
	var out []*corev1.Pod
	for _, p := range pods {
		if allocated[p.Name] || p.Labels[osv1.LabelBatchSandboxName] == r.id {
			out = append(out, p)
		}
	}
	return out
}

func (r *run) follow(ctx context.Context) (*Result, error) {
	deadline := r.req.WaitTimeout
	limitedBy := "--wait-timeout"
	if r.req.Lifetime > 0 && r.req.Lifetime < deadline {
		deadline, limitedBy = r.req.Lifetime, "the sandbox's lifetime (--timeout)"
	}
	waitCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	watch, err := r.c.Clients.WatchSandbox(waitCtx, r.target())
	if err != nil {
		return nil, r.fail(ctx, &failure{code: CodeConnection, message: err.Error(), retryable: true, executed: refusal.ExecutedNo})
	}
	defer watch.Stop()

	var (
		seenObject bool
		probing    bool
		probed     *corev1.Pod // the Pod the Ready probe runs in
		probeDone  = make(chan error, 1)
	)
	tick := time.NewTicker(time.Second) // re-evaluate even without events (probe deadlines)
	defer tick.Stop()
	for {
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return nil, r.fail(ctx, &failure{code: CodeCanceled, message: "canceled at stage " + string(r.stage), retryable: true, executed: r.executedNow(watch)})
			}
			msg := fmt.Sprintf("not Ready within %s (%s); last stage %s", deadline, limitedBy, r.stage)
			return nil, r.fail(ctx, &failure{code: CodeTimeout, message: msg, retryable: true, executed: r.executedNow(watch)})
		case perr := <-probeDone:
			if perr == nil {
				r.reach(StageReady, r.c.Now(), "the exec daemon answered and `true` returned 0")
				r.result.Stage = StageReady
				r.result.Pod = &PodRecord{Name: probed.Name, UID: string(probed.UID), IP: probed.Status.PodIP}
				r.result.Notices = sortedNotices(r.result.Notices)
				return r.result, nil
			}
			return nil, r.fail(ctx, &failure{code: CodeExecdUnreachable,
				message:   fmt.Sprintf("exec daemon not answering within %s: %s", r.req.ExecdTimeout, oneLine(perr.Error())),
				retryable: true, executed: refusal.ExecutedUnknown})
		case <-watch.Changes():
		case <-tick.C:
		}
		if !watch.Synced() {
			continue
		}
		obj := watch.Object()
		if obj != nil {
			seenObject = true
		}
		pods := r.podsOf(obj, watch.Pods())
		if r.engine != enginePool {
			for _, p := range pods {
				r.ownedPods[p.Name] = true
			}
		}
		o := observe(r.engine, obj, pods, watch.Events(), seenObject)
		if o.fail != nil {
			// The stages the failing observation shows were passed: a Pod
			// first seen scheduled and failing to pull failed after
			// Scheduled, not while Queued. (Not Starting: its detail says
			// the exec daemon is being asked, which it will not be.)
			if stageRank[o.stage] > stageRank[StagePullingImage] && !containerRan(o.fail.code) {
				o.stage, o.detail = StageScheduled, "on node "+o.pod.Spec.NodeName
			}
			r.reachUpTo(o)
			return nil, r.fail(ctx, o.fail)
		}
		r.reachUpTo(o)
		if o.running && !probing {
			probing, probed = true, o.pod
			// The probe's context ends with the wait, so returning from
			// follow stops it.
			pod := o.pod
			crash.Go(func() { r.probe(waitCtx, pod, probeDone) })
		}
	}
}

// reachUpTo reports the stage observed, and the stages it implies that
// were passed between two observations (a Pod seen Running was scheduled).
func (r *run) reachUpTo(o observation) {
	now := r.c.Now()
	if stageRank[o.stage] >= stageRank[StageScheduled] && o.pod != nil && o.stage != StageScheduled {
		r.reach(StageScheduled, now, "on node "+o.pod.Spec.NodeName)
	}
	r.reach(o.stage, now, o.detail)
}

// probe asks the prober until it succeeds or ctx ends; the last error is
// the reason given when the exec daemon never answered.
func (r *run) probe(parent context.Context, pod *corev1.Pod, done chan<- error) {
	ctx, cancel := context.WithTimeout(parent, r.req.ExecdTimeout)
	defer cancel()
	interval := r.c.ProbeInterval
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	t := ProbeTarget{Engine: modelEngine(r.engine), Namespace: r.req.Namespace, Sandbox: r.id, Pod: pod}
	var err error
	for {
		if r.c.Prober == nil {
			err = errors.New("no exec prober configured")
		} else {
			err = r.c.Prober.ProbeReady(ctx, t)
		}
		if err == nil {
			done <- nil
			return
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return // the create is ending for another reason (deadline, cancel)
			}
			done <- err
			return
		case <-time.After(interval):
		}
	}
}

// executedNow says whether the start command may have run, from the
// latest objects.
func (r *run) executedNow(w *kube.SandboxWatch) refusal.Executed {
	if r.engine == enginePool && r.stage != StageQueued {
		return refusal.ExecutedUnknown
	}
	pod := pickPod(r.podsOf(w.Object(), w.Pods()))
	if pod == nil {
		return refusal.ExecutedNo
	}
	_, executed := podFailure(pod)
	return executed
}

// fail cleans up and builds the error.
func (r *run) fail(ctx context.Context, f *failure) *Error {
	e := &Error{actionError: refusal.Error{Code: f.code, Message: f.message, Retryable: f.retryable, Executed: f.executed},
		Stage: r.stage, Sandbox: r.id, Namespace: r.req.Namespace}
	if e.Executed == "" {
		e.Executed = refusal.ExecutedUnknown
	}
	if e.Executed == refusal.ExecutedNo && stageRank[r.stage] >= stageRank[StageStarting] {
		// The stage stream already said the main container ran (Starting):
		// a Pod gone since cannot make that "not executed".
		e.Executed = refusal.ExecutedUnknown
	}
	if r.req.KeepFailed {
		e.Cleanup = &Cleanup{Kept: true, Detail: fmt.Sprintf("kept %s %s/%s for inspection (--keep-failed); delete it when done", r.gvr.Resource, r.req.Namespace, r.id)}
	} else {
		pods := make([]string, 0, len(r.ownedPods))
		for p := range r.ownedPods {
			pods = append(pods, p)
		}
		e.Cleanup = r.cleanup(pods)
	}
	if e.Retryable && r.stage == StagePullingImage {
		// Incident 000's pile-up: callers deleted and re-created sandboxes
		// whose images were still pulling; a deleted Pod keeps its quota
		// and its image-pull slot until the pull ends, so each retry added
		// one more. Not retryable now; the reason says when it is.
		e.Retryable = false
		pulling := "still pulling its image (" + r.stageDetail() + ")"
		if f.code == CodeImagePull {
			// The pull that failed is the one the kubelet retries, whichever
			// image the last Pulling event named (the execd installer's,
			// often, pulled first).
			pulling = "retrying a pull that failed (" + strings.TrimPrefix(f.message, "image pull failed: ") + ")"
		}
		e.RetryReason = "the sandbox's Pod was " + pulling + "; a deleted Pod keeps its quota and image-pull slot until the pull ends, so creating again now adds to the pile-up: retry once that image is on the node (or the pull failed)"
		if e.Cleanup != nil && len(e.Cleanup.Terminating) > 0 {
			e.RetryReason += "; still terminating: " + strings.Join(e.Cleanup.Terminating, ", ")
		}
	}
	e.Stages = r.result.Stages
	r.emitFinal(e)
	return e
}

// stageDetail is the detail of the last stage reached.
func (r *run) stageDetail() string {
	if n := len(r.result.Stages); n > 0 {
		return r.result.Stages[n-1].Detail
	}
	return string(r.stage)
}

// cleanup deletes the object (and its Pods) on a context of its own: the
// caller's may be the one that was just cancelled.
func (r *run) cleanup(pods []string) *Cleanup {
	wait := r.req.CleanupWait
	ctx, cancel := context.WithTimeout(context.Background(), wait+r.c.Clients.RequestTimeout)
	defer cancel()
	selector := ""
	if r.engine != enginePool { // pool Pods go back to the pool, not away
		selector = r.target().PodSelector
	}
	gvr, name := r.gvr, r.id
	if r.claim != nil {
		// The claim is what was made: deleting it releases its Sandbox (the
		// claim owns it) and its Pod with it.
		gvr, name, selector, pods = r.claim.gvr, r.claim.name, "", nil
	}
	out := r.c.Clients.DeleteSandbox(ctx, gvr, r.req.Namespace, name, selector, pods, wait)
	c := &Cleanup{Deleted: out.Gone, Finalizers: out.Finalizers, Terminating: out.PodsTerminating}
	what := fmt.Sprintf("%s %s/%s", gvr.Resource, r.req.Namespace, name)
	switch {
	case out.Err != nil && !out.Gone:
		c.Pending = true
		c.Detail = fmt.Sprintf("cleanup failed: %v; delete %s by hand", out.Err, what)
	case !out.Gone:
		c.Pending = true
		c.Detail = fmt.Sprintf("deleted %s, but it is still there after %s", what, wait)
		if len(out.Finalizers) > 0 {
			c.Detail += ", held by finalizers " + strings.Join(out.Finalizers, ", ")
		}
	default:
		c.Detail = "deleted " + what
	}
	if len(out.PodsTerminating) > 0 {
		c.Detail += fmt.Sprintf("; pods %s still terminating (deletion requested)", strings.Join(out.PodsTerminating, ", "))
	}
	if out.Err != nil && out.Gone {
		c.Detail += "; " + oneLine(out.Err.Error())
	}
	return c
}
