// Package demo is sandscope's embedded demo fleet: in-memory Kubernetes
// clients (an object tracker behind client-go's typed core/v1 fake and its
// dynamic fake, serving the sandbox engines' custom resources and listing
// them in discovery) with the fleet simulator running on
// them, an image-config reader and exec transports that answer from the
// simulation, including a simulated interactive shell (the TUI's `s`).
// Nothing in the demo reaches a cluster, a registry or a host command.
//
// Wiring (package backend does it for the commands, so that none of them asks
// whether it runs on the demo):
//
//	d, err := demo.Start(ctx, demo.Options{})          // warm fleet, simulator running until ctx ends
//	w := kube.NewWatcher(d.Clients, d.WatcherOptions(kube.WatcherOptions{StuckAfter: g.StuckAfter}))
//	go w.Run(ctx)                                        // header says DEMO (SourceStatus.Demo)
//	execute.New(execute.Options{Cluster: d.Clients, Snapshot: ..., Transports: d.Transports()})
//	sweep.Sweep(ctx, []sweep.Target{d.SweepTarget()}, sweep.Options{ImageConfig: d.Images, ...})
//	d.Creator().Run(ctx, create.Request{Image: sim.ImageTrainer}, onStage) // the simulator adopts what it creates
package demo

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	"github.com/sandscope/sandscope/actions/create"
	"github.com/sandscope/sandscope/actions/execute"
	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/actions/sweep"
	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/demo/sim"
	"github.com/sandscope/sandscope/internal/crash"
	"github.com/sandscope/sandscope/kube"
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
	clients, api := newClients(opts.Namespaces[0])
	s, err := sim.New(clients.Kube, clients.Dynamic, sim.Config{
		Seed:          opts.Seed,
		Namespaces:    opts.Namespaces,
		ChurnPerHour:  opts.ChurnPerHour,
		Examples:      true,
		WarmPools:     true,
		Warmup:        opts.Warmup,
		EmulateServer: true,
		// Adopt what sandscope's create writes (the TUI's form, create
		// --demo) within a second, as an engine's controller would.
		AdoptEvery: time.Second,
		Clock:      opts.Clock,
	})
	if err != nil {
		return nil, fmt.Errorf("preparing the demo fleet: %w", err)
	}
	if err := s.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the demo fleet: %w", err)
	}
	// The fake clientset answers every log read with "fake logs" (and its
	// reactors do not see which Pod): the demo's Pods have the lines the
	// simulated kubelet kept.
	clients.Kube = &logsClientset{Interface: clients.Kube, sim: s}
	d := &Demo{Clients: clients, Sim: s, done: make(chan struct{})}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	api.housekeep(clk.Now()) // the warm-up's requests
	crash.Go(func() { api.keepBounded(ctx, clk) })
	crash.Go(func() {
		defer close(d.done)
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			d.err = err
		}
	})
	return d, nil
}

// How the in-memory API server stays the size of the fleet, however long
// the demo runs: client-go's fakes record every request they serve (a deep
// copy each, for tests to assert on), which the demo drops, and Events
// expire after eventTTL, as kube-apiserver's --event-ttl (default 1h)
// makes them.
const (
	housekeepingEvery = time.Minute
	eventTTL          = time.Hour
)

// memoryAPI is what housekeeping reaches in the in-memory API server.
type memoryAPI struct {
	fakes   []*k8stesting.Fake
	tracker k8stesting.ObjectTracker // core/v1's, which holds the Events
}

// keepBounded does the housekeeping every housekeepingEvery of clk until
// ctx ends.
func (a *memoryAPI) keepBounded(ctx context.Context, clk clock.Clock) {
	t := clk.NewTimer(housekeepingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			a.housekeep(clk.Now())
			t.Reset(housekeepingEvery)
		}
	}
}

// housekeep drops the fakes' request logs and the Events last seen before
// now - eventTTL. It goes to the tracker directly: a request through the
// fakes would be logged again.
func (a *memoryAPI) housekeep(now time.Time) {
	for _, f := range a.fakes {
		f.ClearActions()
	}
	gvr := corev1.SchemeGroupVersion.WithResource("events")
	gvk := corev1.SchemeGroupVersion.WithKind("Event")
	obj, err := a.tracker.List(gvr, gvk, "")
	if err != nil {
		return
	}
	list, ok := obj.(*corev1.EventList)
	if !ok {
		return
	}
	for i := range list.Items {
		e := &list.Items[i]
		last := e.LastTimestamp.Time
		if last.IsZero() {
			last = e.CreationTimestamp.Time
		}
		if !last.IsZero() && now.Sub(last) > eventTTL {
			_ = a.tracker.Delete(gvr, e.Namespace, e.Name) // gone already: nothing to expire
		}
	}
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

// SweepTarget is the demo fleet as a sweep target, named as its clients'
// context. Its execd probe (sweep --probe) is answered by the simulation,
// never dialled. Pass Images as sweep.Options.ImageConfig so no registry
// is contacted.
func (d *Demo) SweepTarget() sweep.Target {
	t := sweep.ClientsTarget(d.Clients.Context, d.Clients)
	t.Ping = d.Sim.Ping
	return t
}

// Creator creates sandboxes in the demo fleet (`sandscope create --demo`):
// the start command is resolved by the simulated registry (Images), the
// simulator adopts the object the create writes and plays its engine and
// kubelet, and readiness is probed through the identity-checked exec path
// over the simulated exec daemons. backend.Conn.Creator builds the same for
// the commands, from the executor they choose.
func (d *Demo) Creator() *create.Creator {
	x := execute.New(execute.Options{Cluster: d.Clients, Transports: d.Transports()})
	return &create.Creator{Clients: d.Clients, Images: d.Images, Prober: &create.ExecProber{Exec: x}}
}

// NewClients returns in-memory clients that serve Pods, Events, Nodes and
// the engines' resources (BatchSandbox, Pool, SandboxSnapshot, agent-sandbox
// Sandbox v1beta1), with discovery listing them so kube.DiscoverSources
// finds them. Lists honour field selectors (status.podIP, spec.nodeName,
// metadata.name, involvedObject.name, ...) and watches honour label and
// field selectors, which the plain fakes ignore: a create follows exactly
// its own object, Pods and Events through selected informers. Like an API
// server, they refuse a sandbox object in a namespace that does not exist.
func NewClients(namespace string) *kube.Clients {
	c, _ := newClients(namespace)
	return c
}

// newClients is NewClients, with what the demo's housekeeping reaches.
func newClients(namespace string) (*kube.Clients, *memoryAPI) {
	agentGVR := sim.AgentSandboxGVR("v1beta1")
	snapshotGVR := schema.GroupVersionResource{Group: sim.BatchSandboxGVR.Group, Version: sim.BatchSandboxGVR.Version, Resource: "sandboxsnapshots"}
	listKinds := map[schema.GroupVersionResource]string{
		sim.BatchSandboxGVR: "BatchSandboxList",
		sim.PoolGVR:         "PoolList",
		snapshotGVR:         "SandboxSnapshotList",
		agentGVR:            "SandboxList",
		sim.ExtensionGVR(agentsandbox.ResourceClaims, "v1beta1"):    "SandboxClaimList",
		sim.ExtensionGVR(agentsandbox.ResourceWarmPools, "v1beta1"): "SandboxWarmPoolList",
		sim.ExtensionGVR(agentsandbox.ResourceTemplates, "v1beta1"): "SandboxTemplateList",
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	// A plain tracker, not a field-managed one: the latter rebuilds a REST
	// mapper on every write, which makes the demo's warm-up take tens of
	// seconds instead of about one.
	kc := newClientset()
	kc.fake.PrependReactor("list", "pods", fieldSelectedList(kc.tracker))
	kc.fake.PrependReactor("list", "events", fieldSelectedList(kc.tracker))
	kc.fake.PrependWatchReactor("*", selectedWatch(kc.tracker, newTombstones(kc.tracker).install(&kc.fake)))
	dyn.PrependReactor("list", "*", fieldSelectedList(dyn.Tracker()))
	dyn.PrependWatchReactor("*", selectedWatch(dyn.Tracker(), newTombstones(dyn.Tracker()).install(&dyn.Fake)))
	dyn.PrependReactor("create", "*", namespaceMustExist(kc.tracker))
	disc := kc.discovery
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
		{GroupVersion: agentsandbox.ExtensionsGroup + "/v1beta1", APIResources: []metav1.APIResource{
			{Name: agentsandbox.ResourceClaims, SingularName: "sandboxclaim", Namespaced: true, Kind: agentsandbox.KindSandboxClaim, Verbs: verbs},
			{Name: agentsandbox.ResourceWarmPools, SingularName: "sandboxwarmpool", ShortNames: []string{"swp"}, Namespaced: true, Kind: agentsandbox.KindSandboxWarmPool, Verbs: verbs},
			{Name: agentsandbox.ResourceTemplates, SingularName: "sandboxtemplate", Namespaced: true, Kind: agentsandbox.KindSandboxTemplate, Verbs: verbs},
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
	}, &memoryAPI{fakes: []*k8stesting.Fake{&kc.fake, &dyn.Fake}, tracker: kc.tracker}
}

var verbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}

// fieldSelectedList answers lists that carry a field selector, which the
// fakes' default reactors ignore (a Pod list for status.podIP=X would return
// every Pod, and the exec check would see many holders of one IP; a list of
// BatchSandboxes for metadata.name=X would return all of them). Label
// selectors are applied too (the typed and dynamic fakes apply them again).
func fieldSelectedList(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		list, ok := action.(k8stesting.ListActionImpl)
		if !ok {
			return false, nil, nil
		}
		sel := list.GetListRestrictions().Fields
		if sel == nil || sel.Empty() {
			return false, nil, nil
		}
		obj, err := tracker.List(list.GetResource(), list.GetKind(), list.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return true, nil, err
		}
		kept := make([]runtime.Object, 0, len(items))
		for _, item := range items {
			if selected(item, list.GetListRestrictions().Labels, sel) {
				kept = append(kept, item)
			}
		}
		if err := meta.SetList(obj, kept); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	}
}

// selectedWatch watches from the requested resourceVersion, deletions
// since then included (tombs), and delivers only the events of objects that
// match the watch's label and field selectors (the fakes deliver every
// object of the resource). An object that stops matching is not reported
// deleted, as a real server would: nothing in sandscope relabels what it
// watches.
func selectedWatch(tracker k8stesting.ObjectTracker, tombs *tombstones) k8stesting.WatchReactionFunc {
	return func(action k8stesting.Action) (bool, watch.Interface, error) {
		wa, ok := action.(k8stesting.WatchActionImpl)
		if !ok {
			return false, nil, nil
		}
		w, err := tracker.Watch(wa.GetResource(), wa.GetNamespace(), wa.ListOptions)
		if err != nil {
			return true, nil, fmt.Errorf("watching %s: %w", wa.GetResource().Resource, err)
		}
		if err := tombs.replay(w, wa.GetResource(), wa.GetNamespace(), wa.ListOptions); err != nil {
			w.Stop()
			return true, nil, err
		}
		r := wa.GetWatchRestrictions()
		if (r.Labels == nil || r.Labels.Empty()) && (r.Fields == nil || r.Fields.Empty()) {
			return true, w, nil
		}
		return true, watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			if e.Type == watch.Error || e.Type == watch.Bookmark {
				return e, true
			}
			return e, selected(e.Object, r.Labels, r.Fields)
		}), nil
	}
}

// selected matches obj against label and field selectors. The fields are
// those the API server supports for the object's kind and sandscope selects
// on; a selector on any other field matches nothing.
func selected(obj runtime.Object, lsel labels.Selector, fsel fields.Selector) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if lsel != nil && !lsel.Empty() && !lsel.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	if fsel == nil || fsel.Empty() {
		return true
	}
	set := fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
	switch o := obj.(type) {
	case *corev1.Pod:
		set["spec.nodeName"], set["status.podIP"], set["status.phase"] = o.Spec.NodeName, o.Status.PodIP, string(o.Status.Phase)
	case *corev1.Event:
		io := o.InvolvedObject
		set["involvedObject.kind"], set["involvedObject.name"], set["involvedObject.namespace"] = io.Kind, io.Name, io.Namespace
		set["involvedObject.uid"], set["reason"], set["type"] = string(io.UID), o.Reason, o.Type
	}
	for _, req := range fsel.Requirements() {
		if _, ok := set[req.Field]; !ok {
			return false
		}
	}
	return fsel.Matches(set)
}

// namespaceMustExist refuses, as an API server does, an object created in a
// namespace that does not exist (the fakes accept anything), so a create in
// a namespace outside the demo fleet is refused instead of waiting for an
// engine that never looks there.
func namespaceMustExist(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	nsGVR := corev1.SchemeGroupVersion.WithResource("namespaces")
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		ns := action.GetNamespace()
		if ns == "" {
			return false, nil, nil
		}
		if _, err := tracker.Get(nsGVR, "", ns); apierrors.IsNotFound(err) {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
		}
		return false, nil, nil
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

// Transport is an execute.Transport answered by the simulation. Through
// pods/exec (ViaKube) it carries a terminal and stdin as the real one does,
// for a simulated shell (shell.go); the execd transports are one-shot, as
// the real ones are.
type Transport struct {
	Sim *sim.Sim
	Via execute.Via
}

// Streams is true for pods/exec only: execd has no stdin or terminal.
func (t *Transport) Streams() bool { return t.Via == execute.ViaKube }

// Exec runs d in the simulated sandbox. A shell (sh or bash, no script) with
// stdin or a terminal is the simulated interactive shell; any other command
// runs once and reads no input (the simulated commands take none).
func (t *Transport) Exec(ctx context.Context, d execute.Dispatch) (execute.Outcome, error) {
	streams := d.Stdin != nil || d.TTY || d.Interactive
	if streams && !t.Streams() {
		return execute.Outcome{}, &refusal.Error{Code: refusal.CodeUsage, Executed: refusal.ExecutedNo,
			Message: "the demo's simulated " + string(t.Via) + " runs one-shot commands only (no stdin, no terminal)"}
	}
	if len(d.Command) == 0 {
		return execute.Outcome{}, &refusal.Error{Code: refusal.CodeUsage, Executed: refusal.ExecutedNo, Message: "no command given"}
	}
	stdout, stderr := d.Stdout, d.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	if d.TTY {
		// A terminal is one output stream, translated as a pty does.
		stdout = crlfWriter{w: stdout}
		stderr = stdout
	}
	if streams && interactiveShell(d.Command) {
		sh := &shell{pod: d.Pod, tty: d.TTY, in: d.Stdin, stdout: stdout, stderr: stderr,
			run: func(ctx context.Context, line string, last int, stdout, stderr io.Writer) (int, bool, error) {
				// By UID too: a real session is bound to the container it
				// started in and never moves into a same-name re-creation.
				return t.Sim.ShellLine(ctx, sim.ExecRequest{Namespace: d.Namespace, Pod: d.Pod, UID: d.UID,
					Stdout: stdout, Stderr: stderr}, line, last)
			}}
		code, err := sh.serve(ctx)
		if err != nil {
			return execute.Outcome{}, err
		}
		return execute.Outcome{ExitCode: code}, nil
	}
	if d.Interactive {
		// A login shell the simulated image lacks (--shell zsh): say so the
		// way a container runtime does, so execute.Shell falls back to sh.
		return execute.Outcome{}, &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedNo,
			Message: fmt.Sprintf("simulated kube: OCI runtime exec failed: exec: %q: executable file not found in $PATH", d.Command[0])}
	}
	req := sim.ExecRequest{Namespace: d.Namespace, Pod: d.Pod, Command: d.Command, Stdout: stdout, Stderr: stderr,
		Execd: t.Via != execute.ViaKube}
	if t.Via == execute.ViaExecdDirect {
		req.Address = d.Address
	}
	code, err := t.Sim.Exec(ctx, req)
	if err != nil {
		return execute.Outcome{}, &refusal.Error{Code: execute.CodeTransport, Executed: refusal.ExecutedNo, Retryable: true,
			Message: "simulated " + string(t.Via) + ": " + err.Error(), Err: err}
	}
	return execute.Outcome{ExitCode: code}, nil
}

// interactiveShell: argv starts a shell that reads its commands from stdin
// (no -c script), possibly as a login or interactive shell.
func interactiveShell(argv []string) bool {
	if len(argv) == 0 || !sim.IsShell(argv[0]) {
		return false
	}
	for _, a := range argv[1:] {
		if a != "-i" && a != "-l" && a != "--login" && a != "-s" {
			return false
		}
	}
	return true
}

// KnownImages are the images the demo's registry serves, for the create
// form: two reach Ready, the others show a failure each (see the README).
func KnownImages() []string {
	return []string{sim.ImageTrainer, sim.ImageScorer, sim.ImagePython, sim.ImageBashBox, sim.ImageMissing, sim.ImageUnreachable}
}
