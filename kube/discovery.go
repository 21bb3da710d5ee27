package kube

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
)

// Group names of the sandbox engines sandscope reads.
const (
	OpenSandboxGroup   = osv1.GroupName
	OpenSandboxVersion = osv1.Version
	AgentSandboxGroup  = agentsandbox.GroupName
)

// Resources of the engines, at the versions sandscope reads them.
var (
	BatchSandboxGVR    = osv1.BatchSandboxes
	PoolGVR            = osv1.Pools
	SandboxSnapshotGVR = osv1.SandboxSnapshots
)

// Sources says which sandbox sources a cluster serves. Pods are always there.
type Sources struct {
	BatchSandbox bool
	Pool         bool
	Snapshot     bool
	// Agent is the agent-sandbox Sandbox resource at the server's preferred
	// version (v1beta1 or v1alpha1); nil when the CRD is not installed.
	Agent *schema.GroupVersionResource
	// AgentExt are the agent-sandbox extensions served (claims, warm
	// pools, templates) at their group's preferred version; each nil when
	// not served.
	AgentExt AgentExtensions
	// Notes are visible remarks, such as a missing CRD. Not errors.
	Notes []string
	// NotInstalled lists the engines whose CRD is missing (model.Engine*).
	NotInstalled []model.Engine
}

// DiscoverSources asks discovery which engine CRDs the server serves. A
// missing CRD becomes a note; only a failing server is an error.
func DiscoverSources(ctx context.Context, disc discovery.DiscoveryInterface) (Sources, error) {
	var s Sources
	list, err := disc.ServerResourcesForGroupVersion(OpenSandboxGroup + "/" + OpenSandboxVersion)
	switch {
	case err == nil:
		for _, r := range list.APIResources {
			switch r.Name {
			case BatchSandboxGVR.Resource:
				s.BatchSandbox = true
			case PoolGVR.Resource:
				s.Pool = true
			case SandboxSnapshotGVR.Resource:
				s.Snapshot = true
			}
		}
	case apierrors.IsNotFound(err):
	default:
		return s, fmt.Errorf("discovering %s/%s: %w", OpenSandboxGroup, OpenSandboxVersion, err)
	}
	if !s.BatchSandbox {
		s.Notes = append(s.Notes, "OpenSandbox BatchSandbox CRD not installed")
		s.NotInstalled = append(s.NotInstalled, model.EngineBatchSandbox)
	}
	groups, err := disc.ServerGroups()
	if err != nil {
		return s, fmt.Errorf("discovering API groups: %w", err)
	}
	s.Agent = agentResource(groups)
	if s.Agent == nil {
		s.Notes = append(s.Notes, "agent-sandbox Sandbox CRD not installed")
		s.NotInstalled = append(s.NotInstalled, model.EngineAgent)
		return s, nil
	}
	if s.AgentExt, err = agentExtensions(disc, groups); err != nil {
		return s, err
	}
	if missing := s.AgentExt.missing(); len(missing) > 0 {
		s.Notes = append(s.Notes, "agent-sandbox extensions not installed ("+strings.Join(missing, ", ")+"): claims and warm pools are not shown")
	}
	return s, nil
}

// AgentExtensions are the resources of agent-sandbox's extensions group.
type AgentExtensions struct {
	Claims, WarmPools, Templates *schema.GroupVersionResource
}

// Any reports whether at least one extension is served.
func (x AgentExtensions) Any() bool {
	return x.Claims != nil || x.WarmPools != nil || x.Templates != nil
}

func (x AgentExtensions) missing() []string {
	var out []string
	for _, r := range []struct {
		gvr  *schema.GroupVersionResource
		kind string
	}{{x.Claims, agentsandbox.KindSandboxClaim}, {x.WarmPools, agentsandbox.KindSandboxWarmPool}, {x.Templates, agentsandbox.KindSandboxTemplate}} {
		if r.gvr == nil {
			out = append(out, r.kind)
		}
	}
	return out
}

// agentExtensions finds the extensions at their group's preferred version.
func agentExtensions(disc discovery.DiscoveryInterface, groups *metav1.APIGroupList) (AgentExtensions, error) {
	var x AgentExtensions
	version := ""
	for _, g := range groups.Groups {
		if g.Name == agentsandbox.ExtensionsGroup {
			version = g.PreferredVersion.Version
			if version == "" && len(g.Versions) > 0 {
				version = g.Versions[0].Version
			}
		}
	}
	if version == "" {
		return x, nil
	}
	list, err := disc.ServerResourcesForGroupVersion(agentsandbox.ExtensionsGroup + "/" + version)
	switch {
	case apierrors.IsNotFound(err):
		return x, nil
	case err != nil:
		return x, fmt.Errorf("discovering %s/%s: %w", agentsandbox.ExtensionsGroup, version, err)
	}
	for _, r := range list.APIResources {
		gvr := agentsandbox.Extension(r.Name, version)
		switch r.Name {
		case agentsandbox.ResourceClaims:
			x.Claims = &gvr
		case agentsandbox.ResourceWarmPools:
			x.WarmPools = &gvr
		case agentsandbox.ResourceTemplates:
			x.Templates = &gvr
		}
	}
	return x, nil
}

func agentResource(groups *metav1.APIGroupList) *schema.GroupVersionResource {
	for _, g := range groups.Groups {
		if g.Name != AgentSandboxGroup {
			continue
		}
		version := g.PreferredVersion.Version
		if version == "" && len(g.Versions) > 0 {
			version = g.Versions[0].Version
		}
		if version == "" {
			return nil
		}
		gvr := agentsandbox.Sandboxes(version)
		return &gvr
	}
	return nil
}
