package create

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// claimRun is the SandboxClaim a --warm-pool create made.
type claimRun struct {
	gvr         schema.GroupVersionResource
	name        string
	podSelector string // the bound Sandbox's status.selector
}

// SourceTemplate means the start command is the warm pool's template's.
const SourceTemplate Source = "template"

// runClaim creates a SandboxClaim on req.WarmPool and follows it: Queued
// (the claim accepted), Bound (it names its Sandbox: a pool member it
// adopted, or one made for it), then the Sandbox's own stages to Ready.
// On failure the claim is deleted (and with it, through its ownership, the
// Sandbox it holds).
func (c *Creator) runClaim(ctx context.Context, req Request, src *kube.Sources, onStage func(StageUpdate)) (*Result, error) {
	if src.Agent == nil || src.AgentExt.Claims == nil {
		return nil, nothingCreated(CodeEngineUnavailable, "agent-sandbox's SandboxClaim CRD is not installed in this cluster (the controller's --extensions)", false)
	}
	if gvr := src.AgentExt.WarmPools; gvr != nil {
		if _, err := c.Clients.Dynamic.Resource(*gvr).Namespace(req.Namespace).Get(ctx, req.WarmPool, metav1.GetOptions{}); err != nil {
			return nil, kubeError("reading warm pool "+req.WarmPool, err)
		}
	}
	name := "claim-" + uuid.NewString()[:13]
	claimGVR := *src.AgentExt.Claims
	labels := map[string]any{kube.LabelCreatedBy: "sandscope"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": claimGVR.GroupVersion().String(), "kind": agentsandbox.KindSandboxClaim,
		"metadata": map[string]any{"name": name, "namespace": req.Namespace, "labels": labels},
		"spec":     map[string]any{"warmPoolRef": map[string]any{"name": req.WarmPool}},
	}}
	if req.Lifetime > 0 {
		obj.Object["spec"].(map[string]any)["lifecycle"] = map[string]any{
			"shutdownTime": c.Now().Add(req.Lifetime).UTC().Format(time.RFC3339), "shutdownPolicy": "Delete"}
	}
	r := &run{c: c, req: req, engine: engineAgent, gvr: *src.Agent, id: name, onStage: onStage,
		claim:  &claimRun{gvr: claimGVR, name: name},
		result: &Result{Sandbox: "", Claim: name, Namespace: req.Namespace, Engine: model.EngineAgent, Entrypoint: Entrypoint{Source: SourceTemplate}, Notices: []model.Notice{}, Stages: []StageRecord{}}}
	if _, err := c.Clients.CreateObject(ctx, claimGVR, obj); err != nil {
		e := kubeError("creating the claim", err)
		if e.Code == CodeConnection || ctx.Err() != nil {
			e.Executed = refusal.ExecutedUnknown
			e.Sandbox, e.Namespace = name, req.Namespace
			e.Cleanup = r.cleanup(nil)
		}
		return nil, e
	}
	r.ownedPods = map[string]bool{}
	r.reach(StageQueued, c.Now(), "claim "+name+" accepted by warm pool "+req.WarmPool)
	if req.NoWait {
		r.result.Stage = StageQueued
		r.emitFinal(nil)
		return r.result, nil
	}
	sandbox, selector, err := r.waitBound(ctx)
	if err != nil {
		return nil, err
	}
	r.id, r.claim.podSelector, r.result.Sandbox = sandbox, selector, sandbox
	r.reach(StageBound, c.Now(), "claim "+name+" bound to Sandbox "+sandbox)
	return r.follow(ctx)
}

// waitBound polls the claim until it names its Sandbox and that Sandbox
// has its status.selector (written at once by its controller).
func (r *run) waitBound(ctx context.Context) (sandbox, selector string, _ error) {
	deadline := time.Now().Add(r.req.WaitTimeout)
	for {
		u, err := r.c.Clients.Dynamic.Resource(r.claim.gvr).Namespace(r.req.Namespace).Get(ctx, r.claim.name, metav1.GetOptions{})
		if err == nil {
			cl := model.SandboxClaimFromUnstructured(u)
			if cl.State() == model.ClaimFailed {
				rc := cl.ReadyCondition()
				return "", "", r.fail(ctx, &failure{code: CodeCreateRejected, message: fmt.Sprintf("claim %s failed: %s %s", cl.Name, rc.Reason, oneLine(rc.Message)),
					executed: refusal.ExecutedNo})
			}
			if cl.Sandbox != "" {
				sb, gerr := r.c.Clients.Dynamic.Resource(r.gvr).Namespace(r.req.Namespace).Get(ctx, cl.Sandbox, metav1.GetOptions{})
				if gerr == nil {
					if sel, _, _ := unstructured.NestedString(sb.Object, "status", "selector"); sel != "" {
						return cl.Sandbox, sel, nil
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", "", r.fail(ctx, &failure{code: CodeCanceled, message: "canceled at stage " + string(r.stage), retryable: true, executed: refusal.ExecutedNo})
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", "", r.fail(ctx, &failure{code: CodeTimeout, message: fmt.Sprintf("claim %s not bound to a Sandbox within %s (--wait-timeout): warm pool %s may be dry",
				r.claim.name, r.req.WaitTimeout, r.req.WarmPool), retryable: true, executed: refusal.ExecutedNo})
		}
	}
}

// runTemplate creates a v1beta1 Sandbox whose pod template is the
// SandboxTemplate's (with sandscope's label, and no service-account token,
// as the controller gives Sandboxes made from a template), and follows it
// as any agent Sandbox.
func (c *Creator) runTemplate(ctx context.Context, req Request, src *kube.Sources, onStage func(StageUpdate)) (*Result, error) {
	engine, gvr, err := chooseEngine(src, Request{Engine: EngineAgent})
	if err != nil {
		return nil, err
	}
	if src.AgentExt.Templates == nil {
		return nil, nothingCreated(CodeEngineUnavailable, "agent-sandbox's SandboxTemplate CRD is not installed in this cluster (the controller's --extensions)", false)
	}
	tmpl, err := c.Clients.Dynamic.Resource(*src.AgentExt.Templates).Namespace(req.Namespace).Get(ctx, req.Template, metav1.GetOptions{})
	if err != nil {
		return nil, kubeError("reading template "+req.Template, err)
	}
	podTemplate, _, _ := unstructured.NestedMap(tmpl.Object, "spec", "podTemplate")
	containers, _, _ := unstructured.NestedSlice(podTemplate, "spec", "containers")
	if len(containers) == 0 {
		return nil, usage(fmt.Sprintf("template %s has no container", req.Template))
	}
	var argv []string
	if m, ok := containers[0].(map[string]any); ok {
		for _, k := range []string{"command", "args"} {
			list, _ := m[k].([]any)
			for _, a := range list {
				if s, ok := a.(string); ok {
					argv = append(argv, s)
				}
			}
		}
	}
	id := "tmpl-" + uuid.NewString()[:13]
	podTemplate = runtimeCopy(podTemplate)
	labels, _, _ := unstructured.NestedStringMap(podTemplate, "metadata", "labels")
	if labels == nil {
		labels = map[string]string{}
	}
	labels[kube.LabelAgentSandbox], labels[kube.LabelCreatedBy] = id, "sandscope"
	anyLabels := map[string]any{}
	for k, v := range labels {
		anyLabels[k] = v
	}
	_ = unstructured.SetNestedMap(podTemplate, anyLabels, "metadata", "labels")
	_ = unstructured.SetNestedField(podTemplate, false, "spec", "automountServiceAccountToken")
	spec := map[string]any{"podTemplate": podTemplate}
	if req.Lifetime > 0 {
		spec["shutdownTime"] = c.Now().Add(req.Lifetime).UTC().Format(time.RFC3339)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": agentsandbox.KindSandbox,
		"metadata": map[string]any{"name": id, "namespace": req.Namespace,
			"labels": map[string]any{kube.LabelAgentSandbox: id, kube.LabelCreatedBy: "sandscope"}},
		"spec": spec,
	}}
	r := &run{c: c, req: req, engine: engine, gvr: gvr, id: id, onStage: onStage,
		result: &Result{Sandbox: id, Namespace: req.Namespace, Engine: model.EngineAgent,
			Entrypoint: Entrypoint{Argv: argv, Source: SourceTemplate}, Notices: []model.Notice{}, Stages: []StageRecord{}}}
	return r.create(ctx, obj)
}

// runtimeCopy deep-copies a JSON-like map.
func runtimeCopy(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return runtime.DeepCopyJSON(m)
}
