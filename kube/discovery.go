package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	"github.com/sandscope/sandscope/api/agentsandbox"
	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/crash"
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
//
// Every request here is a round trip before the first watch-list, so it
// asks as few, one after the other, as it can: client-go's discovery
// client reads /api and /apis in the aggregated format, whose answer
// carries every group version's resources; a server (or fake) without it
// names only the groups, and the two group versions read here are then
// asked for together.
func DiscoverSources(ctx context.Context, disc discovery.DiscoveryInterface) (Sources, error) {
	var s Sources
	dc := discovery.ToDiscoveryInterfaceWithContext(disc)
	groups, resources, failed, err := groupsAndMaybeResources(ctx, dc)
	if err != nil {
		return s, discoveryError(ctx, dc, err)
	}
	s.Agent = agentResource(groups)
	osGV := schema.GroupVersion{Group: OpenSandboxGroup, Version: OpenSandboxVersion}
	want := []schema.GroupVersion{osGV}
	extGV, extServed := preferredVersion(groups, agentsandbox.ExtensionsGroup)
	if s.Agent != nil && extServed {
		want = append(want, extGV)
	}
	lists, err := resourcesOf(ctx, dc, groups, resources, failed, want)
	if err != nil {
		return s, err
	}
	if list := lists[osGV]; list != nil {
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
	}
	if !s.BatchSandbox {
		s.Notes = append(s.Notes, "OpenSandbox BatchSandbox CRD not installed")
		s.NotInstalled = append(s.NotInstalled, model.EngineBatchSandbox)
	}
	if s.Agent == nil {
		s.Notes = append(s.Notes, "agent-sandbox Sandbox CRD not installed")
		s.NotInstalled = append(s.NotInstalled, model.EngineAgent)
		return s, nil
	}
	if list := lists[extGV]; list != nil {
		s.AgentExt = agentExtensions(list, extGV.Version)
	}
	if missing := s.AgentExt.missing(); len(missing) > 0 {
		s.Notes = append(s.Notes, "agent-sandbox extensions not installed ("+strings.Join(missing, ", ")+"): claims and warm pools are not shown")
	}
	return s, nil
}

// discoveryError is the error of a failed discovery of the groups. client-go
// reads /api and /apis raw, which keeps only the status code of a denial:
// the server's own words ("forbidden: User ... cannot get path ...") are
// lost. A group version's request decodes them, so a denied discovery asks
// for OpenSandbox's, as sandscope did before reading /apis, and reports its
// denial.
func discoveryError(ctx context.Context, dc discovery.DiscoveryInterfaceWithContext, err error) error {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return fmt.Errorf("discovering API groups: %w", err)
	}
	gv := schema.GroupVersion{Group: OpenSandboxGroup, Version: OpenSandboxVersion}
	if _, gvErr := dc.ServerResourcesForGroupVersionWithContext(ctx, gv.String()); gvErr != nil && !apierrors.IsNotFound(gvErr) {
		return fmt.Errorf("discovering %s: %w", gv, gvErr)
	}
	return fmt.Errorf("discovering API groups: %w", err)
}

// groupsAndMaybeResources is client-go's own discovery of the groups, with
// every group version's resources when the server answers in the
// aggregated format (nil resources when it does not, or the client cannot
// ask for it) and the group versions the server could not describe.
func groupsAndMaybeResources(ctx context.Context, dc discovery.DiscoveryInterfaceWithContext) (*metav1.APIGroupList, map[schema.GroupVersion]*metav1.APIResourceList, map[schema.GroupVersion]error, error) {
	if ad, ok := dc.(discovery.AggregatedDiscoveryInterfaceWithContext); ok {
		return ad.GroupsAndMaybeResourcesWithContext(ctx)
	}
	groups, err := dc.ServerGroupsWithContext(ctx)
	return groups, nil, nil, err
}

// resourcesOf returns the resources of each group version of want that the
// server serves (absent: not served), from the aggregated answer when there
// is one, else asked for all at once. A group version the server failed to
// describe is an error: whether its CRD is installed cannot be told.
func resourcesOf(ctx context.Context, dc discovery.DiscoveryInterfaceWithContext, groups *metav1.APIGroupList,
	resources map[schema.GroupVersion]*metav1.APIResourceList, failed map[schema.GroupVersion]error, want []schema.GroupVersion) (map[schema.GroupVersion]*metav1.APIResourceList, error) {
	out := map[schema.GroupVersion]*metav1.APIResourceList{}
	var ask []schema.GroupVersion
	for _, gv := range want {
		switch {
		case failed[gv] != nil:
			return nil, fmt.Errorf("discovering %s: %w", gv, failed[gv])
		case !servesVersion(groups, gv):
		case resources != nil:
			if list := resources[gv]; list != nil {
				out[gv] = list
			}
		default:
			ask = append(ask, gv)
		}
	}
	lists := make([]*metav1.APIResourceList, len(ask))
	errs := make([]error, len(ask))
	var wg sync.WaitGroup
	for i, gv := range ask {
		wg.Go(func() {
			lists[i], errs[i] = dc.ServerResourcesForGroupVersionWithContext(ctx, gv.String())
		})
	}
	wg.Wait()
	for i, gv := range ask {
		switch {
		case errs[i] == nil:
			out[gv] = lists[i]
		case apierrors.IsNotFound(errs[i]):
		default:
			return nil, fmt.Errorf("discovering %s: %w", gv, errs[i])
		}
	}
	return out, nil
}

// servesVersion reports whether groups list gv.
func servesVersion(groups *metav1.APIGroupList, gv schema.GroupVersion) bool {
	for _, g := range groups.Groups {
		if g.Name != gv.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == gv.Version {
				return true
			}
		}
	}
	return false
}

// preferredVersion is group's preferred version (its first when the server
// prefers none); false when the group is not served.
func preferredVersion(groups *metav1.APIGroupList, group string) (schema.GroupVersion, bool) {
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		version := g.PreferredVersion.Version
		if version == "" && len(g.Versions) > 0 {
			version = g.Versions[0].Version
		}
		return schema.GroupVersion{Group: group, Version: version}, version != ""
	}
	return schema.GroupVersion{}, false
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

// agentExtensions finds the extensions in their group version's resources.
func agentExtensions(list *metav1.APIResourceList, version string) AgentExtensions {
	var x AgentExtensions
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
	return x
}

func agentResource(groups *metav1.APIGroupList) *schema.GroupVersionResource {
	gv, ok := preferredVersion(groups, AgentSandboxGroup)
	if !ok {
		return nil
	}
	gvr := agentsandbox.Sandboxes(gv.Version)
	return &gvr
}

// earlyDiscovery is a DiscoverSources started with the connection check,
// taken once.
type earlyDiscovery struct {
	mu     sync.Mutex
	found  <-chan discovered // nil once taken
	cancel context.CancelFunc
}

type discovered struct {
	sources Sources
	err     error
}

func startDiscovery(ctx context.Context, disc discovery.DiscoveryInterface) *earlyDiscovery {
	ctx, cancel := context.WithCancel(ctx)
	found := make(chan discovered, 1)
	crash.Go(func() {
		s, err := DiscoverSources(ctx, disc)
		found <- discovered{s, err}
	})
	return &earlyDiscovery{found: found, cancel: cancel}
}

// take waits for the discovery the first time (ok true), or says there was
// none left to take. Later callers discover again: the engines installed
// may have changed since.
func (e *earlyDiscovery) take(ctx context.Context) (d discovered, ok bool) {
	if e == nil {
		return d, false
	}
	e.mu.Lock()
	found := e.found
	e.found = nil
	e.mu.Unlock()
	if found == nil {
		return d, false
	}
	defer e.cancel()
	select {
	case d = <-found:
		return d, true
	case <-ctx.Done():
		return discovered{err: fmt.Errorf("discovering the engines: %w", ctx.Err())}, true
	}
}

// stop ends a discovery nothing will take.
func (e *earlyDiscovery) stop() {
	if e != nil {
		e.cancel()
	}
}

// Sources is DiscoverSources on the clients' server: the discovery
// started with the connection check when there is one not yet taken
// (ConnectOptions.Discover), else a new one.
func (c *Clients) Sources(ctx context.Context) (Sources, error) {
	if d, ok := c.early.take(ctx); ok {
		return d.sources, d.err
	}
	return DiscoverSources(ctx, c.Discovery)
}

// discoveryBackoff spaces the tries of a discovery whose answer was lost:
// about 6 s in all, within any command's time.
var discoveryBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 6}

// discoverRetrying runs discover again, after backoff, while its answer
// was lost (AnswerLost). Discovery decides what a watcher waits for, so its
// failure ends the watcher: one lost answer must not read as a server that
// is not there. A refused connection, a refusal or a malformed answer is
// final at once.
func discoverRetrying(ctx context.Context, backoff wait.Backoff, discover func(context.Context) (Sources, error)) (Sources, error) {
	var found Sources
	err := RetryLostAnswers(ctx, backoff, AnswerLost, func(ctx context.Context) error {
		var err error
		found, err = discover(ctx)
		return err
	})
	if err != nil {
		return Sources{}, err
	}
	return found, nil
}
