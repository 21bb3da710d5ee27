// Package v1alpha1 holds the names of OpenSandbox's API (group
// sandbox.opensandbox.io, version v1alpha1) and of the Pods and annotations
// its controller writes, exactly as the engine spells them: the one place
// sandscope defines them, as client-go's sample-controller keeps a group's
// names under pkg/apis/<group>/<version>. sandscope reads these objects;
// it does not define their Go types.
package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// Group and version of OpenSandbox's custom resources.
const (
	GroupName = "sandbox.opensandbox.io"
	Version   = "v1alpha1"
)

// SchemeGroupVersion is the group and version sandscope reads.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

// Resources, all namespaced, with a status subresource.
var (
	BatchSandboxes   = SchemeGroupVersion.WithResource("batchsandboxes")
	Pools            = SchemeGroupVersion.WithResource("pools")
	SandboxSnapshots = SchemeGroupVersion.WithResource("sandboxsnapshots")
)

// Kinds.
const (
	KindBatchSandbox = "BatchSandbox"
	KindPool         = "Pool"
)

// Annotations the controller writes on a BatchSandbox.
const (
	// AnnotationEndpoints: a JSON array of Pod IPs, one per Pod index, ""
	// for a Pod not yet placed. What the engine forwards to.
	AnnotationEndpoints = "sandbox.opensandbox.io/endpoints"
	// AnnotationAllocStatus: {"pods":[...]}, the pool Pods given to a
	// pooled BatchSandbox; AnnotationAllocReleased lists those given back.
	AnnotationAllocStatus   = "sandbox.opensandbox.io/alloc-status"
	AnnotationAllocReleased = "sandbox.opensandbox.io/alloc-released"
)

// Labels.
const (
	// LabelSandboxID: the sandbox id, on the BatchSandbox and its Pods.
	LabelSandboxID = "opensandbox.io/id"
	// LabelManualCleanup: set when the sandbox has no expiry.
	LabelManualCleanup = "opensandbox.io/manual-cleanup"
	// LabelBatchSandboxName and LabelPodIndex: on a BatchSandbox's own Pods
	// (and, in newer versions, on pool Pods allocated to it).
	LabelBatchSandboxName = "batch-sandbox.sandbox.opensandbox.io/name"
	LabelPodIndex         = "batch-sandbox.sandbox.opensandbox.io/pod-index"
	// LabelPoolName and LabelPoolRevision: on a Pool's Pods.
	LabelPoolName     = "sandbox.opensandbox.io/pool-name"
	LabelPoolRevision = "sandbox.opensandbox.io/pool-revision"
)

// Finalizers.
const (
	// FinalizerTaskCleanup: on a BatchSandbox with a taskTemplate.
	FinalizerTaskCleanup = "batch-sandbox.sandbox.opensandbox.io/task-cleanup"
	// FinalizerPoolAllocation: on a pooled BatchSandbox; it can leave one
	// Terminating after its Pool is deleted.
	FinalizerPoolAllocation = "pool.sandbox.opensandbox.io/pool-allocation"
)

// The Pod layout.
const (
	// ContainerSandbox is the main container: command = bootstrap + entrypoint.
	ContainerSandbox = "sandbox"
	// ContainerExecdInstaller is the init container that copies execd and
	// bootstrap.sh into VolumeBin.
	ContainerExecdInstaller = "execd-installer"
	VolumeBin               = "opensandbox-bin"
	BinMountPath            = "/opt/opensandbox"
	// BootstrapPath starts execd in the background, then the user command.
	BootstrapPath = BinMountPath + "/bootstrap.sh"
	// ExecdPort is the in-sandbox exec daemon's HTTP port.
	ExecdPort = 44772
)
