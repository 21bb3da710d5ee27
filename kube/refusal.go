package kube

import (
	"errors"
	"fmt"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ClusterRoleHint says where the verbs sandscope needs are written down.
const ClusterRoleHint = "deploy/clusterrole.yaml grants it"

// authorizerVerb finds the verb in the API server's Forbidden message
// (`User "u" cannot watch resource "pods" in API group "" ...`): the
// Status's details name the resource, not the verb.
var authorizerVerb = regexp.MustCompile(`cannot (\w+) resource`)

// forbiddenRequest describes a 403 for a resource the watcher reads: the
// verb refused (watch and list are separate grants), the resource with its
// API group, and where, as "list batchsandboxes.sandbox.opensandbox.io in
// namespace x (deploy/clusterrole.yaml grants it)". It names no user: the
// reader knows whose credentials it runs with.
func forbiddenRequest(resource, namespace string, err error) (message, verb string) {
	verb = "list/watch"
	qualified := resource
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		if m := authorizerVerb.FindStringSubmatch(st.Message); m != nil {
			verb = m[1]
		}
		if d := st.Details; d != nil && d.Kind != "" {
			qualified = d.Kind // a Forbidden's details carry the resource as Kind
			if d.Group != "" {
				qualified += "." + d.Group
			}
		}
	}
	where := "in all namespaces"
	if namespace != "" {
		where = "in namespace " + namespace
	}
	return fmt.Sprintf("%s %s %s (%s)", verb, qualified, where, ClusterRoleHint), verb
}
