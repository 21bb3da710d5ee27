// Package inspect is the layer between the terminal UI (and `explain`) and
// kube's on-demand reads: YAML, logs, events, delete, and restart
// forensics. It owns two policies: read-only mode refuses delete with code
// READ_ONLY, before anything reaches the API server; and a Pod's restart
// verdict is Forensics.Explain's, whoever asks (the detail view, sweep).
package inspect

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/forensics"
)

// Reader is what Service needs from kube (satisfied by *kube.Inspector).
type Reader interface {
	YAML(ctx context.Context, sb *model.Sandbox) (string, error)
	Logs(ctx context.Context, sb *model.Sandbox, opts kube.LogOptions, w io.Writer) error
	Events(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error)
	Delete(ctx context.Context, sb *model.Sandbox) error
	ForceDelete(ctx context.Context, sb *model.Sandbox) error
}

// Service is what the UI calls; its methods have the shapes of ui.Backend's fields.
type Service struct {
	kube     Reader
	readOnly bool
	// LogTail bounds the log history fetched before following (default 2000 lines).
	LogTail int64
}

// New returns a Service over r; readOnly refuses Delete.
func New(r Reader, readOnly bool) *Service {
	return &Service{kube: r, readOnly: readOnly, LogTail: 2000}
}

// YAML returns the sandbox object and its Pods as YAML.
func (s *Service) YAML(ctx context.Context, sb *model.Sandbox) (string, error) {
	return s.kube.YAML(ctx, sb)
}

// Logs streams the main container's log (following, unless previous) into w.
func (s *Service) Logs(ctx context.Context, sb *model.Sandbox, previous bool, w io.Writer) error {
	tail := s.LogTail
	opts := kube.LogOptions{Previous: previous, Follow: !previous}
	if tail > 0 {
		opts.TailLines = &tail
	}
	return s.kube.Logs(ctx, sb, opts, w)
}

// Events lists the Events about the sandbox object and its Pods.
func (s *Service) Events(ctx context.Context, sb *model.Sandbox) ([]corev1.Event, error) {
	return s.kube.Events(ctx, sb)
}

// Delete deletes the sandbox object, unless read-only.
func (s *Service) Delete(ctx context.Context, sb *model.Sandbox) error {
	if s.readOnly {
		return refusal.New(refusal.CodeReadOnly, fmt.Sprintf("read-only mode: not deleting %s/%s", sb.Namespace(), sb.Name()), false)
	}
	return s.kube.Delete(ctx, sb)
}

// ForceDelete deletes the sandbox object and its Pods with no grace
// period (k9s's kill), unless read-only.
func (s *Service) ForceDelete(ctx context.Context, sb *model.Sandbox) error {
	if s.readOnly {
		return refusal.New(refusal.CodeReadOnly, fmt.Sprintf("read-only mode: not force-deleting %s/%s", sb.Namespace(), sb.Name()), false)
	}
	return s.kube.ForceDelete(ctx, sb)
}

// RestartReader is what ExplainRestart needs from kube (satisfied by
// *kube.Clients): the Pod a name designates, read live, and its Events.
type RestartReader interface {
	ResolvePod(ctx context.Context, namespace, name string) (*corev1.Pod, string, error)
	PodEvents(ctx context.Context, namespace, pod string) ([]corev1.Event, error)
}

// RestartReport is ExplainRestart's answer: the explanation and how the
// name was resolved.
type RestartReport struct {
	Resolved string `json:"resolved"` // "Pod x", "BatchSandbox y → Pod y-0"
	*forensics.RestartExplanation
}

// ExplainRestart reads the Pod that name designates (a Pod, or a sandbox's
// primary Pod) and its Events, and predicts a liveness kill forward from
// each block start. Events that cannot be read are a note, not a failure:
// they expire anyway, and the recorded termination is the comparison.
func ExplainRestart(ctx context.Context, r RestartReader, namespace, name, container string, blockStarts []time.Time) (*RestartReport, error) {
	pod, how, err := r.ResolvePod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	events, evErr := r.PodEvents(ctx, namespace, pod.Name)
	x, err := forensics.ExplainRestart(model.SlimPodWithLimits(pod), events, container, blockStarts)
	if err != nil {
		return nil, err
	}
	if evErr != nil {
		x.Notes = append(x.Notes, "the Pod's Events could not be read: "+evErr.Error())
	}
	return &RestartReport{Resolved: how, RestartExplanation: x}, nil
}
