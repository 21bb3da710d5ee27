package execute

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// noPods is a cluster in which every live read finds nothing.
type noPods struct{}

func (noPods) LivePod(_ context.Context, _, name string) (*corev1.Pod, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

func (noPods) PodsWithIP(context.Context, string, string) ([]corev1.Pod, bool, error) {
	return nil, false, nil
}

func (noPods) LiveBatchSandbox(_ context.Context, _, name string) (*model.BatchSandbox, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "batchsandboxes"}, name)
}

// elsewhereFleet is a synced snapshot of namespace eval: sandbox web, its
// Pod web-0, and a bare Pod loose.
func elsewhereFleet() *fleet.Snapshot {
	pod := &model.Pod{ObjectMeta: model.ObjectMeta{Namespace: "eval", Name: "web-0", UID: "u1"}}
	loose := &model.Pod{ObjectMeta: model.ObjectMeta{Namespace: "eval", Name: "loose", UID: "u2"}}
	sb := &model.Sandbox{Key: "bsbx/eval/web", Meta: &model.ObjectMeta{Namespace: "eval", Name: "web"},
		Slots: []model.Slot{{PodName: "web-0", BoundUID: "u1", RecordedIP: "10.0.0.1", Pod: pod, Identity: model.IdentityOK}}}
	return fleet.NewSnapshot(1, model.SourceStatus{Synced: true}, []*model.Sandbox{sb}, []*model.Pod{pod, loose}, nil)
}

// notFoundIn runs ref in namespace through the check before dispatch and
// returns its refusal, which must be NOT_FOUND, executed no.
func notFoundIn(t *testing.T, x *Executor, namespace, ref string) *refusal.Error {
	t.Helper()
	_, _, _, _, _, err := x.admit(context.Background(), Request{Namespace: namespace, Ref: ref, Command: []string{"id"}}, ViaKube)
	e := asError(err)
	if e == nil || e.Code != refusal.CodeNotFound || e.Executed != refusal.ExecutedNo {
		t.Fatalf("%s in %s: %v, want NOT_FOUND, executed no", ref, namespace, err)
	}
	return e
}

// A sandbox name not in -n's namespace is NOT_FOUND naming the namespaces
// that hold it, whether the fleet read is of every namespace (the TUI) or
// of -n's only (the demo's one-shot exec, which reads the others through
// Elsewhere).
func TestNotFoundNamesTheNamespacesThatHoldTheSandbox(t *testing.T) {
	empty := fleet.NewSnapshot(1, model.SourceStatus{Synced: true}, nil, nil, nil)
	for name, x := range map[string]*Executor{
		"watched everywhere": New(Options{Cluster: noPods{}, Snapshot: elsewhereFleet}),
		"watched in -n": New(Options{Cluster: noPods{}, Snapshot: func() *fleet.Snapshot { return empty },
			Elsewhere: func(context.Context, string) (*fleet.Snapshot, error) { return elsewhereFleet(), nil }}),
	} {
		t.Run(name, func(t *testing.T) {
			if e := notFoundIn(t, x, "sandboxes", "web"); !strings.Contains(e.Message, "namespace eval") {
				t.Errorf("message %q does not name namespace eval", e.Message)
			}
			if e := notFoundIn(t, x, "sandboxes", "nosuch"); strings.Contains(e.Message, "eval") {
				t.Errorf("a name held nowhere: message %q names a namespace", e.Message)
			}
		})
	}
}

// pod/NAME of a Pod nobody saw in -n's namespace is NOT_FOUND naming the
// namespaces that hold a Pod of that name, not POD_GONE: nothing says it
// ever existed there. A Pod the model bound (or the caller's --expect-uid
// names) that the API server no longer has is gone.
func TestPodRefNotFoundIsNotGone(t *testing.T) {
	x := New(Options{Cluster: noPods{}, Snapshot: elsewhereFleet})
	for _, pod := range []string{"pod/loose", "pod/web-0"} {
		if e := notFoundIn(t, x, "sandboxes", pod); !strings.Contains(e.Message, "namespace eval") {
			t.Errorf("%s: message %q does not name namespace eval", pod, e.Message)
		}
	}
	if e := notFoundIn(t, x, "sandboxes", "pod/nosuch"); strings.Contains(e.Message, "eval") {
		t.Errorf("a Pod held nowhere: message %q names a namespace", e.Message)
	}
	// Looked for in every namespace (no -n in the demo), it says so: it
	// said "in namespace " with no name, and "pod /nosuch".
	if e := notFoundIn(t, x, "", "pod/nosuch"); !strings.Contains(e.Message, `no pod "nosuch" in any namespace`) ||
		len(e.Evidence) == 0 || strings.Contains(e.Evidence[0].Text, " /nosuch") {
		t.Errorf("a Pod looked for everywhere: %q, evidence %v", e.Message, e.Evidence)
	}
	for _, req := range []Request{
		{Namespace: "eval", Ref: "pod/loose"},                   // the model bound it
		{Namespace: "sandboxes", Ref: "pod/x", ExpectUID: "u9"}, // the caller recorded it
	} {
		req.Command = []string{"id"}
		_, _, _, _, _, err := x.admit(context.Background(), req, ViaKube)
		if e := asError(err); e == nil || e.Code != CodePodGone {
			t.Errorf("%s in %s (uid %q): %v, want POD_GONE", req.Ref, req.Namespace, req.ExpectUID, err)
		}
	}
}

// An --expect-ip that is no IP address is the caller's usage error, refused
// before the target is read, not IP_STALE blamed on the Pod.
func TestExpectIPNotAnIPIsUsage(t *testing.T) {
	x := New(Options{Cluster: noPods{}, Snapshot: elsewhereFleet})
	_, _, _, _, _, err := x.admit(context.Background(), Request{Namespace: "eval", Ref: "web", Command: []string{"id"}, ExpectIP: "notanip"}, ViaKube)
	if e := asError(err); e == nil || e.Code != refusal.CodeUsage || e.Executed != refusal.ExecutedNo {
		t.Errorf("--expect-ip notanip: %v, want USAGE, executed no", err)
	}
	for _, ip := range []string{"10.0.0.1", "fd00::1"} {
		if err := CheckExpectIP(ip); err != nil {
			t.Errorf("--expect-ip %s: %v", ip, err)
		}
	}
}
