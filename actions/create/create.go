// Package create makes sandboxes that fail fast (never a sandbox started with sleep because its image could not be read): it
// knows what will run before it creates anything, it reports every stage as
// it is reached, and it fails — and cleans up — the moment failure is
// certain.
//
// # Resolving the start command
//
// OpenSandbox replaces the image's ENTRYPOINT with its bootstrap, so the
// start command must be put back explicitly. In order: --entrypoint; the
// entrypoint table (ConfigMap "sandscope-entrypoints", image digest → argv);
// the registry (Entrypoint + Cmd of the image config, read by
// kube/imageconfig); otherwise the create is refused before anything exists
// (ENTRYPOINT_UNRESOLVED, retryable when the registry was unreachable). A
// keep-alive sandbox is made only on request (KeepAlive), with a notice.
//
// # Stages, for the CLI and the TUI
//
//	c := &create.Creator{Clients: clients, Images: reader, Prober: prober}
//	res, err := c.Run(ctx, create.Request{Image: "python:3.12"}, func(u create.StageUpdate) {
//		// called synchronously, in order, once per stage reached:
//		// Queued → Scheduled → PullingImage → Starting → Ready, or Failed.
//		// u.Elapsed is the time spent in the previous stage; u.Final marks
//		// the last update (Ready, Failed, or Queued with Wait=false).
//	})
//
// The callback runs on Run's goroutine: a UI should hand it to its event
// loop (e.g. send it on a buffered channel, or p.Send in bubbletea) and
// return at once. Cancelling ctx (Ctrl-C, the user closing the form) fails
// the create with CANCELED and deletes what was created. err is nil exactly
// when res.Stage is Ready (or Queued with Wait=false); otherwise it holds a
// *Error (errors.As), whose Created tells a failure after creating from an
// error before anything was created, and whose Code the rest.
//
// Ready means a command really ran: the ReadyProber (the identity-checked
// exec path) ran `true` in the sandbox and it returned 0.
package create

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sandscope/sandscope/actions/refusal"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
)

// KeepAliveArgv is the engine's own keep-alive entrypoint.
var KeepAliveArgv = []string{"tail", "-f", "/dev/null"}

// Defaults of Request.
const (
	DefaultLifetime     = 10 * time.Minute
	DefaultWaitTimeout  = 3 * time.Minute
	DefaultExecdTimeout = 30 * time.Second
	DefaultCleanupWait  = 10 * time.Second
)

// Engine choices for Request.Engine.
const (
	EngineAuto         = ""
	EngineBatchSandbox = string(model.EngineBatchSandbox)
	EngineAgent        = string(model.EngineAgent)
)

type engineKind int

const (
	engineBatchSandbox engineKind = iota
	enginePool
	engineAgent
)

// Request is one create.
type Request struct {
	Namespace  string
	Image      string   // required unless Pool is set (then the pool's image)
	Entrypoint []string // explicit start command
	KeepAlive  bool     // start tail -f /dev/null instead; the image's command will not run
	Pool       string
	// WarmPool creates an agent-sandbox SandboxClaim on this
	// SandboxWarmPool instead of a Sandbox: the sandbox is the one the
	// claim is bound to, running the pool's template.
	WarmPool string
	// Template creates an agent-sandbox Sandbox from this SandboxTemplate's
	// pod template (its image and command), as the controller's own
	// claims do.
	Template string
	Env      map[string]string
	CPU      string // Kubernetes quantity, set as request and limit
	Memory   string
	// Lifetime sets the sandbox's expireTime (0: DefaultLifetime; negative:
	// no expiry, the engine's manual-cleanup label).
	Lifetime time.Duration
	// WaitTimeout is the total deadline to reach Ready (0: DefaultWaitTimeout).
	// A sandbox that would expire first is given up at its expiry.
	WaitTimeout time.Duration
	// ExecdTimeout bounds how long the exec daemon may take to answer once
	// the main container runs (0: DefaultExecdTimeout).
	ExecdTimeout time.Duration
	// CleanupWait bounds the wait for a deleted object to disappear.
	CleanupWait time.Duration
	NoWait      bool // return after Queued
	KeepFailed  bool // leave a failed sandbox for inspection
	Engine      string
	ExecdImage  string
	// EntrypointTable is the ConfigMap name (default sandscope-entrypoints).
	EntrypointTable string
}

// ProbeTarget is the sandbox a ReadyProber checks.
type ProbeTarget struct {
	Engine    model.Engine
	Namespace string
	Sandbox   string
	Pod       *corev1.Pod // the Pod as last seen (name, UID, IP)
}

// ReadyProber runs a trivial command (`true`) in the sandbox through the
// identity-checked exec path. It returns nil only when the command ran and
// returned 0; any error means "not yet" and it is called again until the
// exec deadline passes. Implementations must honour ctx.
type ReadyProber interface {
	ProbeReady(ctx context.Context, t ProbeTarget) error
}

// ProberFunc adapts a function to ReadyProber.
type ProberFunc func(ctx context.Context, t ProbeTarget) error

// ProbeReady calls f.
func (f ProberFunc) ProbeReady(ctx context.Context, t ProbeTarget) error { return f(ctx, t) }

// ImageReader reads an image's config from its registry: the digest the
// reference names, and its ENTRYPOINT and CMD. It is all a create needs of
// a registry, so the real *imageconfig.Reader and the demo's simulated
// sim.ImageReader both satisfy it. A failure should be an
// *imageconfig.Error: its Kind decides the refusal's message and whether it
// is retryable (an unreachable registry is, a missing image is not). An
// image without ENTRYPOINT and CMD returns its config (with Digest) together
// with an error of Kind NoEntrypoint, so the entrypoint table can still
// answer for it by digest.
type ImageReader interface {
	Read(ctx context.Context, ref string) (model.ImageConfig, error)
}

var _ ImageReader = (*imageconfig.Reader)(nil)

// Creator creates sandboxes.
type Creator struct {
	Clients *kube.Clients
	Images  ImageReader
	Prober  ReadyProber
	// Sources, when set, skips discovery; otherwise each Run asks
	// Clients.Sources once (the discovery started with the connection, when
	// there is one).
	Sources *kube.Sources
	// ProbeInterval between exec probes (default 500ms).
	ProbeInterval time.Duration
	Now           func() time.Time
	// ReadOnly refuses every Run with READ_ONLY. It is set once, where the
	// Creator is built (from --readonly), so no caller can forget it.
	ReadOnly bool
}

// Source of the start command.
type Source string

// The sources of a start command: given by the user, found in the entrypoint
// table, or read from the image's config in its registry.
const (
	SourceExplicit Source = "explicit"
	SourceTable    Source = "table"
	SourceRegistry Source = "registry"
)

// Entrypoint is the resolved start command.
type Entrypoint struct {
	Argv   []string `json:"argv"`
	Source Source   `json:"source"`
	Digest string   `json:"digest,omitempty"` // image digest, when the registry or the table answered
}

// StageRecord is one stage reached.
type StageRecord struct {
	Stage  Stage     `json:"stage"`
	At     time.Time `json:"at"`
	Detail string    `json:"detail,omitempty"`
}

// StageUpdate is sent to the Run callback once per stage reached.
type StageUpdate struct {
	Sandbox   string        `json:"sandbox"`
	Namespace string        `json:"namespace"`
	Stage     Stage         `json:"stage"`
	At        time.Time     `json:"at"`
	Detail    string        `json:"detail,omitempty"`
	Elapsed   time.Duration `json:"-"` // time spent in the previous stage
	Final     bool          `json:"-"`
	Err       *Error        `json:"-"` // set on Failed
	// Set on Failed, from Err, so the stage stream and the error object
	// say the same about whether the command may have run and whether to
	// retry.
	Executed  refusal.Executed `json:"executed,omitempty"`
	Retryable *bool            `json:"retryable,omitempty"`
}

// Result of a create that reached Ready (or Queued with NoWait).
type Result struct {
	Sandbox    string         `json:"sandbox"`
	Namespace  string         `json:"namespace"`
	Engine     model.Engine   `json:"engine"`
	Stage      Stage          `json:"stage"`
	Entrypoint Entrypoint     `json:"entrypoint"`
	Notices    []model.Notice `json:"notices"`
	Stages     []StageRecord  `json:"stages"`
	// Pod is the Pod the Ready probe ran in. A caller keeps it to prove,
	// at every later exec (sandscope exec --expect-uid UID --expect-ip IP),
	// that the sandbox still runs in that Pod: the controller re-creates a
	// deleted Pod under the same name with a new UID and none of its state.
	Pod *PodRecord `json:"pod,omitempty"`
	// Claim is the SandboxClaim made (--warm-pool); Sandbox is then the
	// Sandbox it is bound to.
	Claim string `json:"claim,omitempty"`
}

// PodRecord identifies one Pod incarnation.
type PodRecord struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
	IP   string `json:"ip,omitempty"`
}

// Run resolves the start command, creates the sandbox and follows it to
// Ready or Failed. See the package doc.
func (c *Creator) Run(ctx context.Context, req Request, onStage func(StageUpdate)) (*Result, error) {
	if onStage == nil {
		onStage = func(StageUpdate) {}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ReadOnly {
		return nil, nothingCreated(refusal.CodeReadOnly, "read-only mode: create refused (drop --readonly to create)", false)
	}
	if err := validate(&req); err != nil {
		return nil, err
	}
	if req.Namespace == "" {
		req.Namespace = c.Clients.Namespace
	}
	src, err := c.sources(ctx)
	if err != nil {
		return nil, err
	}
	if req.WarmPool != "" {
		return c.runClaim(ctx, req, src, onStage)
	}
	if req.Template != "" {
		return c.runTemplate(ctx, req, src, onStage)
	}
	engine, gvr, err := chooseEngine(src, req)
	if err != nil {
		return nil, err
	}
	image := req.Image
	if engine == enginePool {
		poolImage, perr := c.Clients.PoolTemplateImage(ctx, req.Namespace, req.Pool)
		if perr != nil {
			return nil, kubeError("reading the pool", perr)
		}
		if image != "" && image != poolImage {
			return nil, usage(fmt.Sprintf("--image %s differs from pool %s's image %s (a pooled sandbox runs the pool's image)", image, req.Pool, poolImage))
		}
		image = poolImage
	}
	ep, notices, rerr := c.resolve(ctx, req, image)
	if rerr != nil {
		return nil, rerr
	}

	id := uuid.NewString()
	now := c.Now()
	spec := kube.SandboxSpec{
		Namespace: req.Namespace, Name: id, Image: image, ExecdImage: req.ExecdImage,
		Env: envVars(req.Env), Resources: resources(req),
	}
	if req.Lifetime > 0 {
		t := now.Add(req.Lifetime).Truncate(time.Second)
		spec.ExpireTime = &t
	}
	obj, oerr := func() (any, error) {
		switch engine {
		case engineAgent:
			spec.Command = ep.Argv
			return kube.AgentSandboxObject(gvr, spec)
		case enginePool:
			spec.Pool, spec.TaskCommand = req.Pool, ep.Argv
		default:
			spec.Command = append([]string{osv1.BootstrapPath}, ep.Argv...)
		}
		return kube.BatchSandboxObject(spec)
	}()
	if oerr != nil {
		return nil, nothingCreated(CodeInternal, oerr.Error(), false)
	}
	run := &run{c: c, req: req, engine: engine, gvr: gvr, id: id, onStage: onStage,
		result: &Result{Sandbox: id, Namespace: req.Namespace, Engine: modelEngine(engine), Entrypoint: ep, Notices: append([]model.Notice{}, notices...), Stages: []StageRecord{}}}
	return run.create(ctx, obj)
}

func modelEngine(e engineKind) model.Engine {
	if e == engineAgent {
		return model.EngineAgent
	}
	return model.EngineBatchSandbox
}

func validate(req *Request) error {
	req.Image = strings.TrimSpace(req.Image)
	switch {
	case req.WarmPool != "" && (req.Pool != "" || req.Engine == EngineBatchSandbox):
		return usage("--warm-pool is agent-sandbox's: it excludes --pool and --engine bsbx")
	case req.WarmPool != "" && (req.Image != "" || len(req.Entrypoint) > 0 || req.KeepAlive):
		return usage("--warm-pool runs the pool's template: --image, --entrypoint and --keep-alive do not apply")
	case req.Template != "" && (req.WarmPool != "" || req.Pool != "" || req.Engine == EngineBatchSandbox || req.Image != "" || len(req.Entrypoint) > 0 || req.KeepAlive):
		return usage("--template runs the SandboxTemplate's pod: it excludes --warm-pool, --pool, --engine bsbx, --image, --entrypoint and --keep-alive")
	case req.Image == "" && req.Pool == "" && req.WarmPool == "" && req.Template == "":
		return usage("--image is required (or --pool, --warm-pool or --template)")
	case req.KeepAlive && len(req.Entrypoint) > 0:
		return usage("--keep-alive and --entrypoint exclude each other")
	case req.Engine != EngineAuto && req.Engine != EngineBatchSandbox && req.Engine != EngineAgent:
		return usage(fmt.Sprintf("--engine %q: want bsbx or agent", req.Engine))
	case req.Pool != "" && req.Engine == EngineAgent:
		return usage("--pool needs the BatchSandbox engine")
	}
	for k := range req.Env {
		if k == "" || strings.ContainsAny(k, "= ") {
			return usage(fmt.Sprintf("--env %q: want KEY=VALUE", k))
		}
	}
	for flag, q := range map[string]string{"--cpu": req.CPU, "--memory": req.Memory} {
		if q == "" {
			continue
		}
		if _, err := resource.ParseQuantity(q); err != nil {
			return usage(fmt.Sprintf("%s %q: %v", flag, q, err))
		}
	}
	if req.Lifetime == 0 {
		req.Lifetime = DefaultLifetime
	}
	if req.WaitTimeout <= 0 {
		req.WaitTimeout = DefaultWaitTimeout
	}
	if req.ExecdTimeout <= 0 {
		req.ExecdTimeout = DefaultExecdTimeout
	}
	if req.CleanupWait <= 0 {
		req.CleanupWait = DefaultCleanupWait
	}
	if req.EntrypointTable == "" {
		req.EntrypointTable = kube.DefaultEntrypointsConfigMap
	}
	return nil
}

// sources is the engines the cluster serves: c.Sources, or the clients'
// discovery.
func (c *Creator) sources(ctx context.Context) (*kube.Sources, error) {
	if c.Sources != nil {
		return c.Sources, nil
	}
	s, err := c.Clients.Sources(ctx)
	if err != nil {
		return nil, kubeError("discovering the sandbox engines", err)
	}
	return &s, nil
}

func chooseEngine(src *kube.Sources, req Request) (engineKind, schema.GroupVersionResource, error) {
	wantAgent := req.Engine == EngineAgent || (req.Engine == EngineAuto && !src.BatchSandbox && src.Agent != nil && req.Pool == "")
	if wantAgent {
		if src.Agent == nil {
			return 0, schema.GroupVersionResource{}, nothingCreated(CodeEngineUnavailable, "the agent-sandbox Sandbox CRD is not installed in this cluster", false)
		}
		return engineAgent, *src.Agent, nil
	}
	if !src.BatchSandbox {
		return 0, schema.GroupVersionResource{}, nothingCreated(CodeEngineUnavailable, "no sandbox engine installed: neither the BatchSandbox nor the agent-sandbox Sandbox CRD is served", false)
	}
	if req.Pool != "" {
		return enginePool, kube.BatchSandboxGVR, nil
	}
	return engineBatchSandbox, kube.BatchSandboxGVR, nil
}

func envVars(env map[string]string) []corev1.EnvVar {
	keys := slices.Sorted(maps.Keys(env))
	out := make([]corev1.EnvVar, 0, len(keys))
	for _, k := range keys {
		out = append(out, corev1.EnvVar{Name: k, Value: env[k]})
	}
	return out
}

func resources(req Request) corev1.ResourceRequirements {
	var r corev1.ResourceRequirements
	set := func(name corev1.ResourceName, q string) {
		if q == "" {
			return
		}
		if r.Limits == nil {
			r.Limits, r.Requests = corev1.ResourceList{}, corev1.ResourceList{}
		}
		r.Limits[name] = resource.MustParse(q) // validated
		r.Requests[name] = resource.MustParse(q)
	}
	set(corev1.ResourceCPU, req.CPU)
	set(corev1.ResourceMemory, req.Memory)
	return r
}

// kubeError turns an API failure before anything was created into an Error.
func kubeError(doing string, err error) *Error {
	e := nothingCreated(CodeCreateRejected, doing+": "+oneLine(err.Error()), false)
	e.Err = err
	var ce *kube.ConnectError
	switch {
	case apierrors.IsForbidden(err):
		e.Code = refusal.CodeForbidden
	case apierrors.IsNotFound(err):
		e.Code = refusal.CodeNotFound
	case errors.As(err, &ce), isConnectionError(err):
		e.Code, e.Retryable = CodeConnection, true
	}
	return e
}

func isConnectionError(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsServiceUnavailable(err) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "no such host") || strings.Contains(err.Error(), "i/o timeout")
}

func sortedNotices(n []model.Notice) []model.Notice {
	sort.SliceStable(n, func(i, j int) bool { return n[i].Severity.Rank() > n[j].Severity.Rank() })
	return n
}
