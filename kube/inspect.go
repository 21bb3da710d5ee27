package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/sandscope/sandscope/api/agentsandbox"
	"github.com/sandscope/sandscope/model"
)

// Inspector fetches on demand what the TUI shows beyond the fleet snapshot:
// the YAML of a sandbox object and its Pods, the main container's log, the
// Events about them; and deletes a sandbox object. Every read goes to the API
// server (no cache): the operator asked for the object as it is now.
type Inspector struct {
	c *Clients
	// agent is the agent-sandbox Sandbox resource at the served version; nil
	// when the CRD is not installed.
	agent *schema.GroupVersionResource
}

// NewInspector reads through c; agent comes from DiscoverSources (may be nil).
func NewInspector(c *Clients, agent *schema.GroupVersionResource) *Inspector {
	return &Inspector{c: c, agent: agent}
}

// mainContainerName is the OpenSandbox main container; other engines use the first container.
const mainContainerName = "sandbox"

// objectResource is the resource of the sandbox object itself, or nil for
// plain-Pod sandboxes (whose object is the Pod).
func (i *Inspector) objectResource(sb *model.Sandbox) (*schema.GroupVersionResource, error) {
	switch sb.Engine() {
	case model.EngineBatchSandbox:
		return &BatchSandboxGVR, nil
	case model.EngineAgent:
		if i.agent == nil {
			return nil, errors.New("agent-sandbox Sandbox CRD not served by this cluster")
		}
		return i.agent, nil
	case model.EnginePod:
		return nil, nil
	}
	return nil, fmt.Errorf("unknown engine %q", sb.Engine())
}

// claimOf is the SandboxClaim that owns an agent Sandbox, at the version
// its ownerReference names; nil when none does.
func claimOf(sb *model.Sandbox) (string, *schema.GroupVersionResource) {
	if sb.Meta == nil || sb.Engine() != model.EngineAgent {
		return "", nil
	}
	for _, r := range sb.Meta.OwnerReferences {
		if r.Kind != model.KindSandboxClaim {
			continue
		}
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil || gv.Group != agentsandbox.ExtensionsGroup {
			return "", nil
		}
		gvr := agentsandbox.Extension(agentsandbox.ResourceClaims, gv.Version)
		return r.Name, &gvr
	}
	return "", nil
}

// podNames are the Pods linked to the sandbox's slots, without duplicates.
func podNames(sb *model.Sandbox) []string {
	var out []string
	seen := map[string]bool{}
	for _, sl := range sb.Slots {
		if sl.PodName != "" && !seen[sl.PodName] {
			seen[sl.PodName] = true
			out = append(out, sl.PodName)
		}
	}
	if sb.Engine() == model.EnginePod && len(out) == 0 {
		out = append(out, sb.Name())
	}
	return out
}

// YAML returns the sandbox object and its Pods as one multi-document YAML
// stream, managedFields dropped. A Pod that is gone is a comment, not an error.
func (i *Inspector) YAML(ctx context.Context, sb *model.Sandbox) (string, error) {
	ctx, cancel := i.c.requestContext(ctx)
	defer cancel()
	var docs []string
	gvr, err := i.objectResource(sb)
	if err != nil {
		return "", err
	}
	if gvr != nil {
		obj, err := i.c.Dynamic.Resource(*gvr).Namespace(sb.Namespace()).Get(ctx, sb.Name(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// A deleted sandbox whose Pods stay (stuck Terminating, a
			// pile-up): what is left to read is its Pods.
			docs = append(docs, fmt.Sprintf("# %s %s/%s: not found (the sandbox object is gone; its Pods follow)\n",
				gvr.Resource, sb.Namespace(), sb.Name()))
		case err != nil:
			return "", fmt.Errorf("reading %s %s/%s: %w", gvr.Resource, sb.Namespace(), sb.Name(), err)
		default:
			obj.SetManagedFields(nil)
			out, err := yamlOrJSON(obj.Object)
			if err != nil {
				return "", fmt.Errorf("encoding %s/%s as YAML: %w", sb.Namespace(), sb.Name(), err)
			}
			docs = append(docs, out)
		}
	}
	for _, name := range podNames(sb) {
		p, err := i.c.Kube.CoreV1().Pods(sb.Namespace()).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			docs = append(docs, fmt.Sprintf("# Pod %s/%s: not found (gone)\n", sb.Namespace(), name))
			continue
		}
		if err != nil {
			return "", fmt.Errorf("reading pod %s/%s: %w", sb.Namespace(), name, err)
		}
		p.ManagedFields = nil
		// Typed GETs come back without kind/apiVersion; put them back for a readable document.
		p.APIVersion, p.Kind = "v1", "Pod"
		out, err := yamlOrJSON(p)
		if err != nil {
			return "", fmt.Errorf("encoding pod %s/%s as YAML: %w", sb.Namespace(), name, err)
		}
		docs = append(docs, out)
	}
	return strings.Join(docs, "---\n"), nil
}

// yamlOrJSON encodes v as YAML, or, when the YAML encoder refuses it (it
// rejects some control characters, which any tenant can put in an
// annotation), as indented JSON, which is YAML too: the object is shown
// all the same instead of hidden behind an error.
func yamlOrJSON(v any) (string, error) {
	out, err := yaml.Marshal(v)
	if err == nil {
		return string(out), nil
	}
	js, jerr := json.MarshalIndent(v, "", "  ")
	if jerr != nil {
		return "", err
	}
	return fmt.Sprintf("# shown as JSON: the YAML encoder refused it (%v)\n%s\n", err, js), nil
}

// LogOptions selects which log to stream.
type LogOptions struct {
	Previous  bool   // the previous (terminated) instance of the container
	Follow    bool   // keep streaming until ctx ends
	TailLines *int64 // nil = whole log
	// Timestamps asks the kubelet to prefix each line with its RFC3339Nano time.
	Timestamps bool
	Pod        string // "" = the sandbox's first linked Pod
	Container  string // "" = the main container
	// SinceSeconds reads only the lines of the last seconds (nil: all,
	// within TailLines).
	SinceSeconds *int64
}

// Logs streams the main container's log of the sandbox's Pod into w until the
// log ends or ctx is cancelled (following). It returns nil on cancellation.
func (i *Inspector) Logs(ctx context.Context, sb *model.Sandbox, opts LogOptions, w io.Writer) error {
	name := opts.Pod
	if name == "" {
		names := podNames(sb)
		if len(names) == 0 {
			return fmt.Errorf("sandbox %s/%s has no Pod yet", sb.Namespace(), sb.Name())
		}
		name = names[0]
	}
	container := opts.Container
	if container == "" {
		var err error
		if container, err = i.mainContainer(ctx, sb.Namespace(), name); err != nil {
			return err
		}
	}
	req := i.c.Kube.CoreV1().Pods(sb.Namespace()).GetLogs(name, &corev1.PodLogOptions{
		Container: container, Follow: opts.Follow && !opts.Previous, Previous: opts.Previous, TailLines: opts.TailLines,
		Timestamps: opts.Timestamps, SinceSeconds: opts.SinceSeconds,
	})
	stream, err := req.Stream(ctx)
	if err != nil {
		return fmt.Errorf("opening log of %s/%s container %s: %w", sb.Namespace(), name, container, err)
	}
	defer stream.Close()
	if _, err := io.Copy(w, stream); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading log of %s/%s: %w", sb.Namespace(), name, err)
	}
	return nil
}

func (i *Inspector) mainContainer(ctx context.Context, ns, pod string) (string, error) {
	p, err := i.c.LivePod(ctx, ns, pod)
	if err != nil {
		return "", err
	}
	if len(p.Spec.Containers) == 0 {
		return "", fmt.Errorf("pod %s/%s has no containers", ns, pod)
	}
	for _, c := range p.Spec.Containers {
		if c.Name == mainContainerName {
			return c.Name, nil
		}
	}
	return p.Spec.Containers[0].Name, nil
}

// Events lists the Events about the sandbox object and about each of its Pods.
func (i *Inspector) Events(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error) {
	var out []corev1.Event
	if sb.Engine() != model.EnginePod {
		sel := fields.Set{"involvedObject.name": sb.Name()}.AsSelector().String()
		evs, err := i.c.listEvents(ctx, sb.Namespace(), sel)
		if err != nil {
			return nil, fmt.Errorf("listing events of sandbox %s/%s: %w", sb.Namespace(), sb.Name(), err)
		}
		for _, e := range evs {
			if e.InvolvedObject.Kind != "Pod" { // same-name Pods are listed below
				out = append(out, e)
			}
		}
	}
	for _, name := range podNames(sb) {
		evs, err := i.c.PodEvents(ctx, sb.Namespace(), name)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

// Delete deletes the sandbox object (the engine tears its Pods down); a
// plain-Pod sandbox deletes its Pod. Already gone is not an error.
func (i *Inspector) Delete(ctx context.Context, sb *model.Sandbox) error {
	return i.delete(ctx, sb, false)
}

// ForceDelete is k9s's kill (ctrl+k): the sandbox object and each of its
// Pods deleted with no grace period, the Pods removed at once without
// waiting for the kubelet. Finalizers still hold the object until their
// controllers remove them; ForceDelete does not remove them.
func (i *Inspector) ForceDelete(ctx context.Context, sb *model.Sandbox) error {
	if err := i.delete(ctx, sb, true); err != nil {
		return err
	}
	if sb.Engine() == model.EnginePod {
		return nil
	}
	ctx, cancel := i.c.requestContext(ctx)
	defer cancel()
	zero := int64(0)
	var errs []error
	for _, sl := range sb.Slots {
		if sl.PodName == "" {
			continue
		}
		opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
		if sl.Pod != nil && sl.Pod.UID != "" {
			uid := sl.Pod.UID // the Pod shown, never a successor of its name
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		err := i.c.Kube.CoreV1().Pods(sb.Namespace()).Delete(ctx, sl.PodName, opts)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("force-deleting pod %s/%s: %w", sb.Namespace(), sl.PodName, err))
		}
	}
	return errors.Join(errs...)
}

func (i *Inspector) delete(ctx context.Context, sb *model.Sandbox, force bool) error {
	ctx, cancel := i.c.requestContext(ctx)
	defer cancel()
	gvr, err := i.objectResource(sb)
	if err != nil {
		return err
	}
	if claim, cgvr := claimOf(sb); cgvr != nil {
		// A claimed Sandbox is its claim's: deleting only the Sandbox would
		// leave the user's claim bound to nothing. The claim goes, and its
		// Sandbox with it (the claim owns it).
		bg := metav1.DeletePropagationBackground
		err := i.c.Dynamic.Resource(*cgvr).Namespace(sb.Namespace()).Delete(ctx, claim, metav1.DeleteOptions{PropagationPolicy: &bg})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting claim %s/%s of sandbox %s: %w", sb.Namespace(), claim, sb.Name(), err)
		}
		if err == nil {
			return nil
		}
	}
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	if force {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	if sb.UID() != "" {
		// Delete exactly the object shown, never a same-name successor.
		uid := sb.UID()
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if gvr == nil {
		err = i.c.Kube.CoreV1().Pods(sb.Namespace()).Delete(ctx, sb.Name(), opts)
	} else {
		err = i.c.Dynamic.Resource(*gvr).Namespace(sb.Namespace()).Delete(ctx, sb.Name(), opts)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s/%s: %w", sb.Engine(), sb.Namespace(), sb.Name(), err)
	}
	return nil
}
