// Package demo is sandscope's embedded demo fleet: in-memory Kubernetes
// clients (client-go fake clientsets that serve the sandbox engines' custom
// resources and list them in discovery) with the fleet simulator running on
// them, an image-config reader and exec transports that answer from the
// simulation. Nothing in the demo reaches a cluster, a registry or a host
// command.
//
// Wiring (cli):
//
//	d, err := demo.Start(ctx, demo.Options{})          // warm fleet, simulator running until ctx ends
//	w := kube.NewWatcher(d.Clients, d.WatcherOptions(kube.WatcherOptions{StuckAfter: g.StuckAfter}))
//	go w.Run(ctx)                                        // header says DEMO (SourceStatus.Demo)
//	execute.New(execute.Options{Cluster: d.Clients, Snapshot: ..., Transports: d.Transports()})
//	sweep.Sweep(ctx, []sweep.Target{d.SweepTarget()}, sweep.Options{ImageConfig: d.Images, ...})
package demo

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/kube/sim"
)

// Names the demo shows in the header.
const (
	ContextName = "demo"
	ClusterName = "sandscope-demo"
	ServerName  = "in-memory (simulated fleet)"
)

// Options tune the demo. The zero value is the documented demo.
type Options struct {
	// Seed makes the fleet reproducible. 0 means 1.
	Seed int64
	// Namespaces of the fleet. Default ["sandboxes", "eval"].
	Namespaces []string
	// Warmup is how much history the fleet has when the demo opens. Default
	// 15 minutes: stuck Pods are already stuck, kills already happened.
	Warmup time.Duration
	// ChurnPerHour: sandboxes created and deleted per hour. Default 800.
	ChurnPerHour int
	// Clock paces the simulation. Default the real clock.
	Clock clock.Clock
}

// Demo is a running demo fleet.
type Demo struct {
	// Clients are in-memory clients of the simulated cluster. Config is nil:
	// there is no server to dial.
	Clients *kube.Clients
	// Sim is the simulator playing the engines and the kubelet.
	Sim *sim.Sim
	// Images answers image-config reads from the simulation.
	Images sim.ImageReader

	done chan struct{}
	err  error
}

// Start builds the in-memory cluster, writes the initial fleet (with
// Options.Warmup of history already played) and keeps the simulation running
// in the background until ctx ends.
func Start(ctx context.Context, opts Options) (*Demo, error) {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if len(opts.Namespaces) == 0 {
		opts.Namespaces = []string{"sandboxes", "eval"}
	}
	if opts.Warmup == 0 {
		opts.Warmup = 15 * time.Minute
	}
	clients := NewClients(opts.Namespaces[0])
	s, err := sim.New(clients.Kube, clients.Dynamic, sim.Config{
		Seed:          opts.Seed,
		Namespaces:    opts.Namespaces,
		ChurnPerHour:  opts.ChurnPerHour,
		Examples:      true,
		Warmup:        opts.Warmup,
		EmulateServer: true,
		Clock:         opts.Clock,
	})
	if err != nil {
		return nil, fmt.Errorf("preparing the demo fleet: %w", err)
	}
	if err := s.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the demo fleet: %w", err)
	}
	d := &Demo{Clients: clients, Sim: s, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			d.err = err
		}
	}()
	return d, nil
}

// Done is closed when the simulation has stopped (its context ended).
func (d *Demo) Done() <-chan struct{} { return d.done }

// WatcherOptions returns base with what the demo needs: Demo set (the header
// says DEMO) and the simulated image-config reader.
func (d *Demo) WatcherOptions(base kube.WatcherOptions) kube.WatcherOptions {
	base.Demo = true
	base.ImageConfig = d.Images
	return base
}

// SweepTarget is the demo fleet as a sweep target (`sandscope sweep --demo`).
// Pass Images as sweep.Options.ImageConfig so no registry is contacted.
func (d *Demo) SweepTarget() sweep.Target {
	return sweep.ClientsTarget(ContextName, d.Clients)
}

// NewClients returns in-memory clients that serve Pods, Events, Nodes and
// the engines' resources (BatchSandbox, Pool, SandboxSnapshot, agent-sandbox
// Sandbox v1beta1), with discovery listing them so kube.DiscoverSources
// finds them. Pod lists honour field selectors (status.podIP, spec.nodeName,
// ...), which the plain fake ignores.
func NewClients(namespace string) *kube.Clients {
	agentGVR := sim.AgentSandboxGVR("v1beta1")
	snapshotGVR := schema.GroupVersionResource{Group: sim.BatchSandboxGVR.Group, Version: sim.BatchSandboxGVR.Version, Resource: "sandboxsnapshots"}
	listKinds := map[schema.GroupVersionResource]string{
		sim.BatchSandboxGVR: "BatchSandboxList",
		sim.PoolGVR:         "PoolList",
		snapshotGVR:         "SandboxSnapshotList",
		agentGVR:            "SandboxList",
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	// NewSimpleClientset, not NewClientset: the field-managed tracker of the
	// latter rebuilds a REST mapper on every write, which makes the demo's
	// warm-up take tens of seconds instead of about one.
	kc := kubefake.NewSimpleClientset()
	kc.PrependReactor("list", "pods", podFieldSelector(kc.Tracker()))
	disc := kc.Discovery().(*fakediscovery.FakeDiscovery)
	disc.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "Pod", Verbs: verbs},
			{Name: "events", Namespaced: true, Kind: "Event", Verbs: verbs},
			{Name: "nodes", Namespaced: false, Kind: "Node", Verbs: verbs},
			{Name: "namespaces", Namespaced: false, Kind: "Namespace", Verbs: verbs},
		}},
		{GroupVersion: sim.BatchSandboxGVR.GroupVersion().String(), APIResources: []metav1.APIResource{
			{Name: "batchsandboxes", SingularName: "batchsandbox", ShortNames: []string{"bsbx"}, Namespaced: true, Kind: "BatchSandbox", Verbs: verbs},
			{Name: "batchsandboxes/status", Namespaced: true, Kind: "BatchSandbox", Verbs: []string{"get", "patch", "update"}},
			{Name: "pools", SingularName: "pool", Namespaced: true, Kind: "Pool", Verbs: verbs},
			{Name: "sandboxsnapshots", SingularName: "sandboxsnapshot", ShortNames: []string{"sbxsnap"}, Namespaced: true, Kind: "SandboxSnapshot", Verbs: verbs},
		}},
		{GroupVersion: agentGVR.GroupVersion().String(), APIResources: []metav1.APIResource{
			{Name: "sandboxes", SingularName: "sandbox", Namespaced: true, Kind: "Sandbox", Verbs: verbs},
		}},
	}
	return &kube.Clients{
		Kube:           kc,
		Dynamic:        dyn,
		Discovery:      disc,
		Context:        ContextName,
		Cluster:        ClusterName,
		Server:         ServerName,
		Namespace:      namespace,
		AllNamespaces:  true,
		RequestTimeout: kube.DefaultRequestTimeout,
	}
}

var verbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}

// podFieldSelector answers Pod lists that carry a field selector, which the
// fake's default reactor ignores (it would return every Pod for
// status.podIP=X, and the exec check would see many holders of one IP).
func podFieldSelector(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		list, ok := action.(k8stesting.ListAction)
		if !ok {
			return false, nil, nil
		}
		sel := list.GetListRestrictions().Fields
		if sel == nil || sel.Empty() {
			return false, nil, nil
		}
		obj, err := tracker.List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), action.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		all := obj.(*corev1.PodList)
		lsel := list.GetListRestrictions().Labels
		out := &corev1.PodList{ListMeta: all.ListMeta}
		for _, p := range all.Items {
			set := fields.Set{
				"metadata.name": p.Name, "metadata.namespace": p.Namespace, "spec.nodeName": p.Spec.NodeName,
				"status.podIP": p.Status.PodIP, "status.phase": string(p.Status.Phase),
			}
			if sel.Matches(set) && (lsel == nil || lsel.Matches(labels.Set(p.Labels))) {
				out.Items = append(out.Items, p)
			}
		}
		return true, out, nil
	}
}

// Transports are exec transports that run commands in the simulated
// sandboxes. execd-direct routes by address, like the real one: a request
// for a recorded IP that another Pod now holds lands in that Pod.
func (d *Demo) Transports() map[execute.Via]execute.Transport {
	return map[execute.Via]execute.Transport{
		execute.ViaKube:        &Transport{Sim: d.Sim, Via: execute.ViaKube},
		execute.ViaExecd:       &Transport{Sim: d.Sim, Via: execute.ViaExecd},
		execute.ViaExecdDirect: &Transport{Sim: d.Sim, Via: execute.ViaExecdDirect},
	}
}

// Transport is an execute.Transport answered by the simulation. One-shot
// commands only: no stdin, no terminal.
type Transport struct {
	Sim *sim.Sim
	Via execute.Via
}

// Streams is false: the simulated sandboxes take no stdin or terminal.
func (t *Transport) Streams() bool { return false }

// Exec runs d in the simulated sandbox.
func (t *Transport) Exec(ctx context.Context, d execute.Dispatch) (execute.Outcome, error) {
	if d.Stdin != nil || d.TTY || d.Interactive {
		return execute.Outcome{}, &execute.Error{Code: execute.CodeUsage, Executed: execute.ExecutedNo,
			Message: "the demo's simulated sandboxes run one-shot commands only (no stdin, no terminal)"}
	}
	req := sim.ExecRequest{Namespace: d.Namespace, Pod: d.Pod, Command: d.Command, Stdout: d.Stdout, Stderr: d.Stderr,
		Execd: t.Via != execute.ViaKube}
	if t.Via == execute.ViaExecdDirect {
		req.Address = d.Address
	}
	code, err := t.Sim.Exec(ctx, req)
	if err != nil {
		return execute.Outcome{}, &execute.Error{Code: execute.CodeTransport, Executed: execute.ExecutedNo, Retryable: true,
			Message: "simulated " + string(t.Via) + ": " + err.Error(), Err: err}
	}
	return execute.Outcome{ExitCode: code}, nil
}
