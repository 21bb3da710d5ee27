package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
)

// OpenSandbox's Pod layout.
const (
	// DefaultExecdImage is the image of the execd-installer init container.
	DefaultExecdImage = "opensandbox/execd:v1.0.0"

	// LabelCreatedBy marks objects sandscope created.
	LabelCreatedBy = "app.kubernetes.io/created-by"
	// LabelAgentSandbox links an agent-sandbox Pod to the Sandbox sandscope
	// created (agent Pods do not get opensandbox.io/id: the fleet would list
	// them twice, once as plain Pods).
	LabelAgentSandbox = "sandscope.io/sandbox"
)

// SandboxSpec is what to create, engine-neutral.
type SandboxSpec struct {
	Namespace string
	Name      string // = the sandbox id for OpenSandbox
	Image     string
	// Command is the main container's full command (for OpenSandbox it
	// starts with osv1.BootstrapPath).
	Command    []string
	Env        []corev1.EnvVar
	Resources  corev1.ResourceRequirements
	ExecdImage string
	ExpireTime *time.Time
	// Pool, when set, makes a pooled BatchSandbox; TaskCommand is then the
	// process the task template runs in the pool's Pod.
	Pool        string
	TaskCommand []string
	Labels      map[string]string
}

// BatchSandboxObject builds a BatchSandbox in template mode (or pool mode
// when spec.Pool is set) with OpenSandbox's own Pod layout.
func BatchSandboxObject(spec SandboxSpec) (*unstructured.Unstructured, error) {
	labels := map[string]string{osv1.LabelSandboxID: spec.Name, LabelCreatedBy: "sandscope"}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	if spec.ExpireTime == nil {
		labels[osv1.LabelManualCleanup] = "true"
	}
	body := map[string]any{"replicas": int64(1)}
	if spec.ExpireTime != nil {
		body["expireTime"] = spec.ExpireTime.UTC().Format(time.RFC3339)
	}
	if spec.Pool != "" {
		body["poolRef"] = spec.Pool
		process := map[string]any{"command": toAnySlice(spec.TaskCommand)}
		if len(spec.Env) > 0 {
			env := make([]any, 0, len(spec.Env))
			for _, e := range spec.Env {
				env = append(env, map[string]any{"name": e.Name, "value": e.Value})
			}
			process["env"] = env
		}
		body["taskTemplate"] = map[string]any{"spec": map[string]any{"process": process}}
	} else {
		ps := openSandboxPodSpec(spec)
		podSpec, err := toUnstructuredMap(&ps)
		if err != nil {
			return nil, err
		}
		body["template"] = map[string]any{
			"metadata": map[string]any{"labels": stringMapToAny(labels)},
			"spec":     podSpec,
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": BatchSandboxGVR.GroupVersion().String(),
		"kind":       "BatchSandbox",
		"metadata": map[string]any{
			"name": spec.Name, "namespace": spec.Namespace, "labels": stringMapToAny(labels),
		},
		"spec": body,
	}}, nil
}

func openSandboxPodSpec(spec SandboxSpec) corev1.PodSpec {
	execdImage := spec.ExecdImage
	if execdImage == "" {
		execdImage = DefaultExecdImage
	}
	mount := []corev1.VolumeMount{{Name: osv1.VolumeBin, MountPath: osv1.BinMountPath}}
	return corev1.PodSpec{
		// The container lives as long as the user command: an exit is the
		// end of the sandbox, not something to restart behind its back.
		RestartPolicy: corev1.RestartPolicyNever,
		InitContainers: []corev1.Container{{
			Name:         osv1.ContainerExecdInstaller,
			Image:        execdImage,
			Command:      []string{"/bin/sh", "-c", "cp ./execd ./bootstrap.sh " + osv1.BinMountPath + "/"},
			VolumeMounts: mount,
		}},
		Containers: []corev1.Container{{
			Name:         osv1.ContainerSandbox,
			Image:        spec.Image,
			Command:      spec.Command,
			Env:          spec.Env,
			Resources:    spec.Resources,
			VolumeMounts: mount,
		}},
		Volumes: []corev1.Volume{{Name: osv1.VolumeBin, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
}

// AgentSandboxObject builds an agents.x-k8s.io Sandbox at gvr's version
// whose one container runs spec.Command directly (agent-sandbox has no
// execd; commands reach it through the API server's exec).
func AgentSandboxObject(gvr schema.GroupVersionResource, spec SandboxSpec) (*unstructured.Unstructured, error) {
	labels := map[string]string{LabelAgentSandbox: spec.Name, LabelCreatedBy: "sandscope"}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	podSpec, err := toUnstructuredMap(&corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: osv1.ContainerSandbox, Image: spec.Image, Command: spec.Command, Env: spec.Env, Resources: spec.Resources,
		}},
	})
	if err != nil {
		return nil, err
	}
	// No spec.replicas: v1beta1 has none (the server prunes it with an
	// "unknown field" warning); a Sandbox runs unless operatingMode says
	// Suspended, and v1alpha1 defaults replicas to 1.
	body := map[string]any{
		"podTemplate": map[string]any{
			"metadata": map[string]any{"labels": stringMapToAny(labels)},
			"spec":     podSpec,
		},
	}
	if spec.ExpireTime != nil {
		body["shutdownTime"] = spec.ExpireTime.UTC().Format(time.RFC3339)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       "Sandbox",
		"metadata":   map[string]any{"name": spec.Name, "namespace": spec.Namespace, "labels": stringMapToAny(labels)},
		"spec":       body,
	}}, nil
}

// CreateObject creates a custom resource.
func (c *Clients) CreateObject(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := c.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating %s %s/%s: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
	return out, nil
}

// PoolTemplateImage returns the image of the main container ("sandbox", or
// the first) of a Pool's Pod template.
func (c *Clients) PoolTemplateImage(ctx context.Context, namespace, pool string) (string, error) {
	obj, err := c.Dynamic.Resource(PoolGVR).Namespace(namespace).Get(ctx, pool, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading pool %s/%s: %w", namespace, pool, err)
	}
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	image := ""
	for i, raw := range containers {
		m, _ := raw.(map[string]any)
		name, _ := m["name"].(string)
		img, _ := m["image"].(string)
		if i == 0 || name == osv1.ContainerSandbox {
			image = img
		}
	}
	if image == "" {
		return "", fmt.Errorf("pool %s/%s has no container image in its template", namespace, pool)
	}
	return image, nil
}

// WatchTarget says which objects belong to one sandbox being created.
type WatchTarget struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
	// PodSelector selects the candidate Pods (label selector string).
	PodSelector string
	// PodName, when known, narrows the Events watched to that Pod.
	PodName string
}

// SandboxWatch follows one sandbox object, the Pods that may back it and
// the Events about those Pods, through informers (so a dropped watch is
// re-listed, never silently ended). Changes fires after every update.
type SandboxWatch struct {
	objects cache.Store
	pods    cache.Store
	events  cache.Store
	changes chan struct{}
	stop    context.CancelFunc
	synced  func() bool
}

// WatchSandbox starts watching t until ctx ends or Stop.
func (c *Clients) WatchSandbox(ctx context.Context, t WatchTarget) (*SandboxWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &SandboxWatch{changes: make(chan struct{}, 1), stop: cancel}
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.notify() },
		UpdateFunc: func(any, any) { w.notify() },
		DeleteFunc: func(any) { w.notify() },
	}

	dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dynamic, 0, t.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", t.Name).String()
	})
	objInf := dyn.ForResource(t.GVR).Informer()
	pods := informers.NewSharedInformerFactoryWithOptions(c.Kube, 0, informers.WithNamespace(t.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = t.PodSelector }))
	podInf := pods.Core().V1().Pods().Informer()
	evSel := fields.Set{"involvedObject.kind": "Pod"}
	if t.PodName != "" {
		evSel["involvedObject.name"] = t.PodName
	}
	events := informers.NewSharedInformerFactoryWithOptions(c.Kube, 0, informers.WithNamespace(t.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = evSel.AsSelector().String() }))
	evInf := events.Core().V1().Events().Informer()
	for _, inf := range []cache.SharedIndexInformer{objInf, podInf, evInf} {
		if _, err := inf.AddEventHandler(notify); err != nil {
			cancel()
			return nil, fmt.Errorf("watching sandbox %s/%s: %w", t.Namespace, t.Name, err)
		}
	}
	w.objects, w.pods, w.events = objInf.GetStore(), podInf.GetStore(), evInf.GetStore()
	// Events are hints (Pulling): a user who may not list them still gets
	// every stage from the Pods, so they are not waited for.
	w.synced = func() bool { return objInf.HasSynced() && podInf.HasSynced() }
	dyn.Start(ctx.Done())
	pods.Start(ctx.Done())
	events.Start(ctx.Done())
	return w, nil
}

func (w *SandboxWatch) notify() {
	select {
	case w.changes <- struct{}{}:
	default:
	}
}

// Changes receives a value after updates (coalesced).
func (w *SandboxWatch) Changes() <-chan struct{} { return w.changes }

// Synced is true once the object and Pod informers have listed.
func (w *SandboxWatch) Synced() bool { return w.synced() }

// Stop ends the watches.
func (w *SandboxWatch) Stop() { w.stop() }

// Object is the sandbox object as last seen, nil when absent.
func (w *SandboxWatch) Object() *unstructured.Unstructured {
	if objects := storeItems[*unstructured.Unstructured](w.objects); len(objects) > 0 {
		return objects[0]
	}
	return nil
}

// Pods are the candidate Pods, sorted by name.
func (w *SandboxWatch) Pods() []*corev1.Pod {
	out := storeItems[*corev1.Pod](w.pods)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Events are the Events about the candidate Pods.
func (w *SandboxWatch) Events() []*corev1.Event { return storeItems[*corev1.Event](w.events) }

// storeItems are the items of an informer's store that are of type T.
func storeItems[T any](store cache.Store) []T {
	var out []T
	for _, o := range store.List() {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// DeleteOutcome reports a cleanup.
type DeleteOutcome struct {
	// Gone: the sandbox object no longer exists.
	Gone bool
	// Finalizers still holding the object when the wait ended.
	Finalizers []string
	// PodsDeleted are Pods whose deletion was requested; PodsTerminating
	// those still present (Terminating) when the wait ended.
	PodsDeleted     []string
	PodsTerminating []string
	Err             error
}

// DeleteSandbox deletes the sandbox object and its Pods — those named in
// pods plus those podSelector (a label unique to this sandbox; "" for none)
// finds now — since the garbage collector would only get to them later and
// a Pod left pulling holds quota and pull slots. It then waits up to wait
// for everything to disappear. A deletion held by a finalizer is reported,
// not waited on forever.
func (c *Clients) DeleteSandbox(ctx context.Context, gvr schema.GroupVersionResource, namespace, name, podSelector string, pods []string, wait time.Duration) DeleteOutcome {
	var out DeleteOutcome
	res := c.Dynamic.Resource(gvr).Namespace(namespace)
	policy := metav1.DeletePropagationBackground
	err := res.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy})
	switch {
	case apierrors.IsNotFound(err):
		out.Gone = true
	case err != nil:
		out.Err = fmt.Errorf("deleting %s %s/%s: %w", gvr.Resource, namespace, name, err)
		return out
	}
	var errs []error
	if podSelector != "" {
		list, err := c.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: podSelector})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing pods of %s/%s: %w", namespace, name, err))
		} else {
			for _, p := range list.Items {
				if !slices.Contains(pods, p.Name) {
					pods = append(pods, p.Name)
				}
			}
		}
	}
	sort.Strings(pods)
	for _, p := range pods {
		err := c.Kube.CoreV1().Pods(namespace).Delete(ctx, p, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting pod %s/%s: %w", namespace, p, err))
			continue
		}
		out.PodsDeleted = append(out.PodsDeleted, p)
	}
	out.Err = errors.Join(errs...)

	// Wait for the object only: its Pods' deletion is requested, and a Pod
	// ends when its kubelet has stopped it (for a Pod stuck pulling an image
	// that can be minutes); those still present are reported, not awaited.
	deadline := time.Now().Add(wait)
	for !out.Gone {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out.Gone = true
			out.Finalizers = nil
			continue
		case err == nil:
			out.Finalizers = obj.GetFinalizers()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	for _, p := range out.PodsDeleted {
		if _, err := c.Kube.CoreV1().Pods(namespace).Get(ctx, p, metav1.GetOptions{}); err == nil {
			out.PodsTerminating = append(out.PodsTerminating, p)
		}
	}
	return out
}

func toUnstructuredMap(v any) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", v, err)
	}
	return m, nil
}

func stringMapToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toAnySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
