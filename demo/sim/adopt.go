package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// Adoption: the simulator plays the engine and the kubelet for sandboxes it
// did not create. sandscope's create (actions/create, kube.BatchSandboxObject
// and kube.AgentSandboxObject) writes a BatchSandbox — with a Pod template,
// or a poolRef and a task — or an agent-sandbox Sandbox through the API, then
// follows what the engine and the kubelet make of it. A real controller
// reconciles every object of its kind; the simulator lists its namespaces
// every Config.AdoptEvery of virtual time instead of watching, so that
// adopting runs in an event like every other operation: for a given
// sequence of outside writes the operations stay the same, and every draw
// comes from the seeded generator.
//
// An adopted sandbox then lives like the simulator's own (scenario Normal):
// the engine adds its finalizers, makes Pods <name>-<index> (non-pooled,
// owned by the object, labelled with its name and index) or allocates an
// idle pool Pod, and writes the endpoints annotation and status; the kubelet
// schedules, pulls and starts them. What the simulated registry and the
// start command decide, a create sees: a main image the nodes cannot pull
// (ImageMissing, or one the demo registry does not have; init images always
// pull) ends in ErrImagePull then ImagePullBackOff (and a sticky engine
// Failed), a start command that ends at once (a shell or an interpreter with
// no script and no terminal) ends the main container. The Pod's own command
// and image are what is run, so the simulated exec daemon answers only where
// the engine's osv1.BootstrapPath started it.
//
// Deleting the object (a create cleaning up, a user) is noticed on the next
// poll: its Pods go as the garbage collector would take them (pool Pods are
// recycled) and the simulator forgets it. A step of an adopted sandbox that
// finds its object or Pod gone is not an error for the same reason.

// maxAdoptedReplicas bounds the Pods made for one adopted object, so a stray
// replicas value cannot exhaust the simulated nodes' Pod ranges.
const maxAdoptedReplicas = 4

// adoptPoll lists the sandbox objects of every namespace of the fleet,
// adopts the new ones and follows the adopted ones.
func (s *Sim) adoptPoll(ctx context.Context) error {
	s.after(s.cfg.AdoptEvery, "adopt", s.adoptPoll)
	var errs []error
	for _, ns := range s.cfg.Namespaces {
		for _, gvr := range []schema.GroupVersionResource{BatchSandboxGVR, AgentSandboxGVR(s.cfg.AgentVersion)} {
			if err := s.adoptIn(ctx, gvr, ns); err != nil {
				errs = append(errs, err)
			}
		}
		if s.cfg.WarmPools {
			// The extensions controller serves claims written by others
			// (create --warm-pool) as it serves the simulation's own.
			if err := s.adoptClaims(ctx, ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (s *Sim) adoptIn(ctx context.Context, gvr schema.GroupVersionResource, ns string) error {
	return s.pollList(ctx, gvr, ns, func(u *unstructured.Unstructured) error {
		sb := s.sandboxes[key(ns, u.GetName())]
		switch {
		case sb == nil && u.GetDeletionTimestamp() == nil:
			return s.adopt(ctx, gvr, u)
		case sb != nil && sb.adopted && sb.servedBy(gvr):
			return s.followAdopted(ctx, sb, u)
		case sb != nil && deletedByOthers(sb, gvr) && u.GetDeletionTimestamp() != nil:
			// One of the simulator's own, deleted by a user (the TUI's
			// delete): the engine cleans up and removes its finalizers.
			sb.deleting = true
			return s.teardown(ctx, sb)
		}
		return nil
	}, func(listed map[string]bool) map[string]func() error {
		lost := map[string]func() error{}
		for k, sb := range s.sandboxes {
			if sb.ns == ns && (sb.adopted && sb.servedBy(gvr) || deletedByOthers(sb, gvr)) && !listed[sb.name] {
				lost[k] = func() error { return s.loseAdopted(ctx, sb) }
			}
		}
		return lost
	})
}

// deletedByOthers: sb is one of the simulator's own sandboxes with an
// engine object of gvr that the simulator is not deleting itself, so that
// the object gone or deleting means someone else deleted it (a user, the
// TUI's delete). Its Pods then go as for an adopted one.
func deletedByOthers(sb *sandbox, gvr schema.GroupVersionResource) bool {
	return !sb.adopted && !sb.deleting && !sb.gone && sb.obj != nil && sb.engine != EnginePod && sb.servedBy(gvr)
}

// servedBy says whether gvr is the resource of sb's engine object.
func (sb *sandbox) servedBy(gvr schema.GroupVersionResource) bool {
	if sb.engine == EngineAgent {
		return gvr.Group == AgentSandboxGVR("").Group
	}
	return gvr == BatchSandboxGVR
}

// adopt takes an object it did not write and does what the engine does on
// its first reconcile.
func (s *Sim) adopt(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	ns, name := u.GetNamespace(), u.GetName()
	labels := u.GetLabels()
	sb := &sandbox{
		engine: EngineBatch, scenario: Normal, ns: ns, name: name, id: name, tenant: labels["opensandbox.io/tenant"],
		adopted: true, pinned: true, restartPolicy: corev1.RestartPolicyAlways, events: map[eventKey]*corev1.Event{},
	}
	if id := labels[osv1.LabelSandboxID]; id != "" {
		sb.id = id
	}
	templatePath := []string{"spec", "template"}
	finalizers := []string{osv1.FinalizerTaskCleanup}
	poolRef, _, _ := unstructured.NestedString(u.Object, "spec", "poolRef")
	switch {
	case gvr.Group == AgentSandboxGVR("").Group:
		sb.engine, templatePath, finalizers = EngineAgent, []string{"spec", "podTemplate"}, nil
	case poolRef != "":
		sb.engine = EnginePooled
		finalizers = append(finalizers, osv1.FinalizerPoolAllocation)
		// A Pool the simulation does not run allocates nothing: the sandbox
		// stays Pending, as behind a real engine whose Pool is missing.
		if p := s.pools[ns]; p != nil && p.name == poolRef {
			sb.pool = p
			sb.image = ImagePython
		}
	}
	if sb.engine != EnginePooled {
		sb.template = templateOf(u, templatePath...)
	}
	if t := sb.template; t != nil {
		main := t.Spec.Containers[0]
		sb.image, sb.entrypoint = main.Image, main.Command
		if t.Spec.RestartPolicy != "" {
			sb.restartPolicy = t.Spec.RestartPolicy
		}
		// Only the engine's osv1.BootstrapPath starts execd (NOT_EXEC_READY otherwise).
		sb.noBootstrap = sb.engine == EngineBatch && (len(main.Command) == 0 || main.Command[0] != osv1.BootstrapPath)
		sb.execdDown = sb.noBootstrap
	}
	replicas := int64(1)
	if r, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); found {
		replicas = min(max(r, 0), maxAdoptedReplicas)
	}

	k := key(ns, name)
	s.sandboxes[k] = sb
	obj, err := s.mutateCR(ctx, gvr, u, false, "adopted", func(o *unstructured.Unstructured) {
		for _, f := range finalizers {
			addFinalizer(o, f)
		}
		s.stampAdopted(o)
	})
	if err != nil {
		delete(s.sandboxes, k) // tried again on the next poll
		return err
	}
	sb.obj = obj
	switch {
	case sb.engine == EnginePooled && sb.pool != nil:
		return s.allocate(ctx, sb)
	case sb.template != nil:
		for i := range int(replicas) {
			if err := s.newSandboxPod(ctx, sb, i, s.leastUsedNode()); err != nil {
				return err
			}
		}
	}
	return s.reconcile(ctx, sb)
}

// templateOf reads the Pod template at path of u; nil when there is none
// the engine could make a Pod from.
func templateOf(u *unstructured.Unstructured, path ...string) *corev1.PodTemplateSpec {
	raw, found, err := unstructured.NestedMap(u.Object, path...)
	if !found || err != nil {
		return nil
	}
	var t corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &t); err != nil || len(t.Spec.Containers) == 0 {
		return nil
	}
	return &t
}

// stampAdopted sets what an API server sets on create, when the simulator
// emulates one (a client-go fake leaves UID and creation time empty).
func (s *Sim) stampAdopted(o metav1.Object) {
	if !s.cfg.EmulateServer {
		return
	}
	if o.GetUID() == "" {
		o.SetUID(types.UID(s.newUID()))
	}
	if ts := o.GetCreationTimestamp(); ts.IsZero() {
		o.SetCreationTimestamp(metav1.NewTime(s.now))
	}
	if o.GetGeneration() == 0 {
		o.SetGeneration(1)
	}
}

// followAdopted reacts to what others did to an adopted sandbox: deleting
// its object (held by the engine's finalizers on a real API server) or its
// Pods.
func (s *Sim) followAdopted(ctx context.Context, sb *sandbox, u *unstructured.Unstructured) error {
	sb.obj = u
	if u.GetDeletionTimestamp() != nil {
		// The engine cleans up and removes its finalizers.
		sb.deleting = true
		return s.teardown(ctx, sb)
	}
	released := false
	for _, p := range sb.pods {
		if p == nil || p.obj == nil || p.pool != nil {
			continue // a pool Pod deleted behind the sandbox stays listed (#954)
		}
		cur, err := s.kube.CoreV1().Pods(sb.ns).Get(ctx, p.obj.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading pod %s/%s: %w", sb.ns, p.obj.Name, err)
		case cur.DeletionTimestamp == nil:
			continue
		}
		// Deleted, or being deleted: the kubelet stops it and lets it go.
		// The simulated engine does not make a new one.
		if err := s.releasePod(ctx, p); err != nil {
			return err
		}
		released = true
	}
	if released {
		return s.reconcile(ctx, sb)
	}
	return nil
}

// loseAdopted: the object is gone (an adopted sandbox's, or one of the
// simulator's own that a user deleted). Its Pods go with it, as the garbage
// collector takes the Pods an object owns (pool Pods are recycled).
func (s *Sim) loseAdopted(ctx context.Context, sb *sandbox) error {
	sb.deleting = true
	for _, p := range sb.pods {
		if err := s.releasePod(ctx, p); err != nil {
			return err
		}
	}
	s.forget(sb)
	return nil
}

// guarded wraps an event of sb's life cycle. For an adopted sandbox an
// object or Pod that vanished under the step is not a simulation error:
// someone else deleted it, and the next poll lets the sandbox go. Steps of a
// sandbox being deleted do not run.
func (s *Sim) guarded(sb *sandbox, fn func(context.Context) error) func(context.Context) error {
	if sb == nil || !sb.adopted {
		return fn
	}
	return func(ctx context.Context) error {
		if sb.gone || sb.deleting {
			return nil
		}
		if err := fn(ctx); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
}

// pollList is one poll of a controller over gvr's objects in ns: each
// listed object, in name order (the order of a list is not part of the
// simulation's input), goes to visit; then the actions lost returns for
// what the simulation tracks and the list no longer holds run, in key
// order. An object gone between the list and a write is no error: the
// next poll sees it. A resource the server does not serve lists nothing.
func (s *Sim) pollList(ctx context.Context, gvr schema.GroupVersionResource, ns string,
	visit func(u *unstructured.Unstructured) error, lost func(listed map[string]bool) map[string]func() error) error {
	list, err := s.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing %s in %s: %w", gvr.Resource, ns, err)
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
	listed := make(map[string]bool, len(items))
	var errs []error
	keep := func(err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	for i := range items {
		listed[items[i].GetName()] = true
		keep(visit(&items[i]))
	}
	gone := lost(listed)
	for _, k := range slices.Sorted(maps.Keys(gone)) {
		keep(gone[k]())
	}
	return errors.Join(errs...)
}
