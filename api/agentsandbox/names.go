// Package agentsandbox holds the names of kubernetes-sigs agent-sandbox's
// API (group agents.x-k8s.io), the one place sandscope defines them. The
// group serves v1beta1 (current) and v1alpha1 (older): sandscope reads the
// server's preferred version, found by discovery.
package agentsandbox

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupName is the API group of agent-sandbox's Sandbox.
const GroupName = "agents.x-k8s.io"

// Served versions, newest first.
const (
	V1beta1  = "v1beta1"
	V1alpha1 = "v1alpha1"
)

// KindSandbox is the kind; Resource its plural.
const (
	KindSandbox = "Sandbox"
	Resource    = "sandboxes"
)

// Sandboxes is the Sandbox resource at version.
func Sandboxes(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: GroupName, Version: version, Resource: Resource}
}

// LabelNameHash is the label the agent-sandbox controller puts on a
// Sandbox's Pod: a hash of the Sandbox's name, not the name.
const LabelNameHash = "agents.x-k8s.io/sandbox-name-hash"

// ExtensionsGroup is the API group of the extensions the controller
// serves with --extensions: claims, warm pools and templates. Like the
// Sandbox, read at the server's preferred version.
const ExtensionsGroup = "extensions.agents.x-k8s.io"

// Kinds and resources of the extensions.
const (
	KindSandboxClaim    = "SandboxClaim"
	KindSandboxWarmPool = "SandboxWarmPool"
	KindSandboxTemplate = "SandboxTemplate"
	ResourceClaims      = "sandboxclaims"
	ResourceWarmPools   = "sandboxwarmpools"
	ResourceTemplates   = "sandboxtemplates"
)

// Extension is an extension resource at version.
func Extension(resource, version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: ExtensionsGroup, Version: version, Resource: resource}
}

// Labels and annotations the controller writes for the extensions.
const (
	// LabelWarmPoolSandbox marks a free warm-pool member: a hash of the
	// pool's name, removed when a claim adopts it.
	LabelWarmPoolSandbox = "agents.x-k8s.io/warm-pool-sandbox"
	// LabelClaimUID is set on a Sandbox a claim adopted.
	LabelClaimUID = "agents.x-k8s.io/claim-uid"
	// AnnotationSandboxName is set on a claim: the name of its Sandbox.
	AnnotationSandboxName = "agents.x-k8s.io/sandbox-name"
	// AnnotationPodName is set on a Sandbox: the name of its Pod.
	AnnotationPodName = "agents.x-k8s.io/pod-name"
)
