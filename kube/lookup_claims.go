package kube

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/sandscope/sandscope/model"
)

// cutClaimRef reads "claim/NAME".
func cutClaimRef(ref string) (string, bool) {
	name, ok := strings.CutPrefix(ref, "claim/")
	return name, ok && name != ""
}

// claimSandboxes reads the agent-sandbox SandboxClaims called name and
// the Sandbox each is bound to, so that a claim name resolves to its
// sandbox, checked like any other. Nothing when the extension is not
// served; a claim RBAC forbids is a note, not a failure of the lookup.
func (l *lookup) claimSandboxes(ctx context.Context, ns, name string) error {
	gvr := l.sources.AgentExt.Claims
	if gvr == nil {
		return nil
	}
	objs, err := l.getCustom(ctx, *gvr, ns, name)
	if err != nil {
		if apierrors.IsForbidden(err) {
			l.note("claims not read: %v", err)
			return nil
		}
		return err
	}
	for _, u := range objs {
		c := model.SandboxClaimFromUnstructured(u)
		if !add(l, &l.claims, "claim/"+c.Namespace+"/"+c.Name, func() (*model.SandboxClaim, error) { return c, nil }) || c.Sandbox == "" {
			continue
		}
		if err := l.agentSandboxes(ctx, c.Namespace, c.Sandbox); err != nil {
			return err
		}
	}
	return nil
}
