package create

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/sandscope/sandscope/kube/imageconfig"
	"github.com/sandscope/sandscope/model"
)

// Notice codes of a create result.
const (
	NoticeEntrypointFromRegistry = "ENTRYPOINT_FROM_REGISTRY"
	NoticeEntrypointFromTable    = "ENTRYPOINT_FROM_TABLE"
	NoticeTableUnreadable        = "ENTRYPOINT_TABLE_UNREADABLE"
)

// resolve finds the start command: explicit → table (by digest) → registry
// → refusal. Nothing is created before it answers.
func (c *Creator) resolve(ctx context.Context, req Request, image string) (Entrypoint, []model.Notice, error) {
	if req.KeepAlive {
		return Entrypoint{Argv: KeepAliveArgv, Source: SourceExplicit}, []model.Notice{{
			Code: model.CodeEntrypointNotRun, Severity: model.SeverityWarning,
			Message: fmt.Sprintf("keep-alive requested: the sandbox runs %s; the ENTRYPOINT/CMD of %s will not run", strings.Join(KeepAliveArgv, " "), image),
		}}, nil
	}
	if len(req.Entrypoint) > 0 {
		return Entrypoint{Argv: req.Entrypoint, Source: SourceExplicit}, nil, nil
	}
	var notices []model.Notice

	table, terr := c.Clients.GetEntrypoints(ctx, req.Namespace, req.EntrypointTable)
	switch {
	case terr == nil:
	case apierrors.IsForbidden(terr):
		// Not allowed to read it: say so, and go on to the registry.
		notices = append(notices, model.Notice{Code: NoticeTableUnreadable, Severity: model.SeverityWarning,
			Message: fmt.Sprintf("entrypoint table %s/%s not readable (forbidden); using the registry", req.Namespace, req.EntrypointTable)})
		table = nil
	default:
		return Entrypoint{}, nil, kubeError("reading the entrypoint table", terr)
	}
	lookup := func(digest string) (Entrypoint, []model.Notice, bool) {
		if table == nil || digest == "" {
			return Entrypoint{}, nil, false
		}
		e, ok := table.Entries[digest]
		if !ok {
			return Entrypoint{}, nil, false
		}
		return Entrypoint{Argv: e.Argv, Source: SourceTable, Digest: digest}, append(notices, model.Notice{
			Code: NoticeEntrypointFromTable, Severity: model.SeverityInfo,
			Message: fmt.Sprintf("start command of %s (%s) taken from entrypoint table %s: %s", image, digest, req.EntrypointTable, strings.Join(e.Argv, " ")),
		}), true
	}
	// A digest reference is looked up without asking the registry, so the
	// table still answers while the registry is down.
	if d, err := name.NewDigest(image); err == nil {
		if ep, n, ok := lookup(d.DigestStr()); ok {
			return ep, n, nil
		}
	}

	cfg, err := c.Images.Read(ctx, image)
	if ep, n, ok := lookup(cfg.Digest); ok {
		return ep, n, nil
	}
	if err == nil {
		argv := imageconfig.Argv(cfg)
		return Entrypoint{Argv: argv, Source: SourceRegistry, Digest: cfg.Digest}, append(notices, model.Notice{
			Code: NoticeEntrypointFromRegistry, Severity: model.SeverityInfo,
			Message: fmt.Sprintf("read ENTRYPOINT+CMD of %s (%s) from the registry and start it: %s", image, cfg.Digest, strings.Join(argv, " ")),
		}), nil
	}
	return Entrypoint{}, nil, unresolved(image, err)
}

const unresolvedHint = "pass --entrypoint, add one to the entrypoint table (sandscope entrypoints set IMAGE -- ARGV...), or ask for --keep-alive"

func unresolved(image string, err error) *Error {
	e := nothingCreated(CodeEntrypointUnresolved, "", false)
	e.Err = err
	var ie *imageconfig.Error
	if !errors.As(err, &ie) {
		e.Message = fmt.Sprintf("cannot resolve the start command of %s: %v; %s", image, err, unresolvedHint)
		return e
	}
	e.Retryable = ie.Retryable()
	switch ie.Kind {
	case imageconfig.NoEntrypoint:
		e.Message = fmt.Sprintf("image %s has neither ENTRYPOINT nor CMD and no --entrypoint or table entry was given; %s", image, unresolvedHint)
	case imageconfig.NotFound:
		e.Message = fmt.Sprintf("image %s does not exist: %v", image, ie)
	default:
		e.Message = fmt.Sprintf("cannot read the start command of %s: %v; %s", image, ie, unresolvedHint)
	}
	return e
}

// Resolve answers which start command a create would use, without creating
// anything (for a form preview or `--dry-run`).
func (c *Creator) Resolve(ctx context.Context, req Request) (Entrypoint, []model.Notice, error) {
	if err := validate(&req); err != nil {
		return Entrypoint{}, nil, err
	}
	if req.Namespace == "" {
		req.Namespace = c.Clients.Namespace
	}
	image := req.Image
	if image == "" && req.Pool != "" {
		var err error
		if image, err = c.Clients.PoolTemplateImage(ctx, req.Namespace, req.Pool); err != nil {
			return Entrypoint{}, nil, kubeError("reading the pool", err)
		}
	}
	return c.resolve(ctx, req, image)
}
