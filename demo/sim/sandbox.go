package sim

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the simulator keeps of each sandbox, its Pods and the Pools: the
// state its events act on, between writes through the API.

// sandbox is one simulated sandbox: its engine object and Pods as last
// written, and where its scenario stands.
type sandbox struct {
	engine        Engine
	scenario      Scenario
	ns, name, id  string
	tenant        string
	requestID     string
	image         string
	entrypoint    []string
	noBootstrap   bool
	liveness      bool
	restartPolicy corev1.RestartPolicy
	task          bool // written with a spec.taskTemplate (see hasTask)
	expire        *time.Time
	pinned        bool // an example: never deleted by its user
	pool          *pool
	warmPool      *warmPool // an agent-sandbox warm pool's free member (warmpool.go)
	madeAt        time.Time // when its warm pool made it (the pool's readiness grace runs from it)
	claim         *simClaim // made for this claim (a cold start)
	// expired: past its shutdownTime, the agent-sandbox controller deleted
	// the Pod and wiped the status (expiry.go).
	expired bool

	// adopted: the object was written by someone else (sandscope's create)
	// and the simulator plays its engine; template is the Pod template it
	// carries (nil for a pooled sandbox).
	adopted  bool
	template *corev1.PodTemplateSpec

	obj         *unstructured.Unstructured // the engine object as last written (nil for plain Pods)
	pods        []*simPod                  // slot i <-> pod index i
	failedStuck bool                       // BatchSandbox phase Failed, sticky
	failedMsg   string                     // its PodFailed summary, as first written
	execdDown   bool
	deleting    bool
	gone        bool
	events      map[eventKey]*corev1.Event
}

// simPod is a sandbox's Pod in one slot (a re-created Pod takes the slot
// over), or a Pool's warm Pod.
type simPod struct {
	obj      *corev1.Pod // as last written; nil once deleted
	lastName string      // the Pod's name after it was deleted
	node     int
	ip       string
	pool     *pool // owning Pool, for pool Pods
}

// pool is the Pool of one namespace and its pre-warmed Pods.
type pool struct {
	ns, name, revision string
	obj                *unstructured.Unstructured
	idle               []*simPod // Running, not allocated
	warming            int       // created, not yet Running
	allocated          int
}

// key is the namespace/name key of the simulator's maps.
func key(ns, name string) string { return ns + "/" + name }

// goneOrTerminating: the Pod was deleted or is being deleted; no kubelet
// or scenario step acts on it any more.
func (p *simPod) goneOrTerminating() bool {
	return p.obj == nil || p.obj.DeletionTimestamp != nil
}

// name is the Pod's name, also once it is gone.
func (p *simPod) name() string {
	if p.obj != nil {
		return p.obj.Name
	}
	return p.lastName
}

// hasTask: the BatchSandbox carries a spec.taskTemplate (a pooled sandbox
// running the caller's command, or a sandbox written with one).
func (sb *sandbox) hasTask() bool {
	return sb.task || sb.entrypoint != nil && sb.pool != nil
}
