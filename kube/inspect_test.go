package kube_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sandscope/sandscope/internal/testcluster"
	"github.com/sandscope/sandscope/kube"
	"github.com/sandscope/sandscope/model"
)

// inspectFixture creates BatchSandbox "sbx-i" with one running Pod "sbx-i-0".
func inspectFixture(t *testing.T) (*testcluster.Cluster, string, *kube.Inspector, *model.Sandbox) {
	t.Helper()
	c, ns := testcluster.GetWithNamespace(t)
	ctl, kl := c.Controller(t), c.Kubelet(t)
	created := ctl.Create(kube.BatchSandboxGVR, ns, testcluster.BatchSandbox("sbx-i", nil))
	kl.CreatePod(ns, testcluster.SandboxPod("sbx-i-0", ""))
	kl.SetRunning(ns, "sbx-i-0", "10.9.0.5")
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	sb := &model.Sandbox{Key: "bsbx/" + ns + "/sbx-i",
		Meta:  &model.ObjectMeta{Namespace: ns, Name: "sbx-i", UID: created.GetUID()},
		Slots: []model.Slot{{RecordedIP: "10.9.0.5", PodName: "sbx-i-0"}}}
	return c, ns, kube.NewInspector(clients, nil), sb
}

func TestInspectorYAML(t *testing.T) {
	_, _, in, sb := inspectFixture(t)
	out, err := in.YAML(testcluster.Context(t), sb)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: BatchSandbox", "name: sbx-i\n", "---\n", "kind: Pod", "name: sbx-i-0", "podIP: 10.9.0.5"} {
		if !strings.Contains(out, want) {
			t.Errorf("YAML lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "managedFields") {
		t.Errorf("YAML keeps managedFields")
	}
	// A Pod that is gone is a comment, not a failure.
	gone := *sb
	gone.Slots = []model.Slot{{PodName: "sbx-i-9"}}
	out, err = in.YAML(testcluster.Context(t), &gone)
	if err != nil || !strings.Contains(out, "# Pod "+sb.Namespace()+"/sbx-i-9: not found") {
		t.Fatalf("gone pod: %v\n%s", err, out)
	}
}

// backOffEvents records the kubelet's BackOff Event on sbx-i-0 and reads
// sb's Events back through in.
func backOffEvents(t *testing.T, c *testcluster.Cluster, ns string, in *kube.Inspector, sb *model.Sandbox) []corev1.Event {
	t.Helper()
	now := time.Now()
	c.Kubelet(t).Event(ns, "sbx-i-0", "Warning", "BackOff", "Back-off restarting failed container", now, now, 3)
	evs, err := in.Events(testcluster.Context(t), sb)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestInspectorEvents(t *testing.T) {
	c, ns, in, sb := inspectFixture(t)
	evs := backOffEvents(t, c, ns, in, sb)
	found := false
	for _, e := range evs {
		found = found || (e.Reason == "BackOff" && e.InvolvedObject.Name == "sbx-i-0")
	}
	if !found {
		t.Fatalf("events %+v lack BackOff of sbx-i-0", evs)
	}
}

func TestInspectorLogsNamesWhatFailed(t *testing.T) {
	_, _, in, sb := inspectFixture(t)
	// No kubelet serves logs in the test cluster: the error must say which
	// Pod and container could not be read.
	err := in.Logs(testcluster.Context(t), sb, kube.LogOptions{Follow: true}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "sbx-i-0") || !strings.Contains(err.Error(), "container sandbox") {
		t.Fatalf("Logs error = %v", err)
	}
	noPod := *sb
	noPod.Slots = nil
	if err := in.Logs(testcluster.Context(t), &noPod, kube.LogOptions{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "has no Pod") {
		t.Fatalf("Logs without a Pod = %v", err)
	}
}

func TestInspectorDelete(t *testing.T) {
	c, ns, in, sb := inspectFixture(t)
	ctx := testcluster.Context(t)
	// A same-name successor (other UID) must not be deleted.
	stale, staleMeta := *sb, *sb.Meta
	staleMeta.UID = "00000000-0000-0000-0000-000000000000"
	stale.Meta = &staleMeta
	if err := in.Delete(ctx, &stale); err == nil || !apierrors.IsConflict(err) {
		t.Fatalf("delete with a stale UID = %v, want a conflict", err)
	}
	if err := in.Delete(ctx, sb); err != nil {
		t.Fatal(err)
	}
	_, err := c.Dynamic.Resource(kube.BatchSandboxGVR).Namespace(ns).Get(ctx, "sbx-i", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
	if err := in.Delete(ctx, sb); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
}

// An object the YAML encoder refuses (a C1 control in an annotation, which
// any tenant may write) is shown as JSON, not hidden behind an error.
func TestInspectorYAMLFallsBackToJSON(t *testing.T) {
	c, ns := testcluster.GetWithNamespace(t)
	obj := testcluster.BatchSandbox("sbx-c1", nil)
	obj.SetAnnotations(map[string]string{"tenant/note": "csi\u009b2J"})
	c.Controller(t).Create(kube.BatchSandboxGVR, ns, obj)
	clients, err := kube.NewClients(c.Config, ns)
	if err != nil {
		t.Fatal(err)
	}
	sb := &model.Sandbox{Key: "bsbx/" + ns + "/sbx-c1", Meta: &model.ObjectMeta{Namespace: ns, Name: "sbx-c1"}}
	out, err := kube.NewInspector(clients, nil).YAML(testcluster.Context(t), sb)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# shown as JSON", `"name": "sbx-c1"`, "\"tenant/note\": \"csi\u009b2J\""} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A tenant flooding Events about a Pod (names that list first, older times)
// cannot hide the real ones: every page is read and the newest are kept.
func TestInspectorEventsFloodKeepsNewest(t *testing.T) {
	c, ns, in, sb := inspectFixture(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	const flood = 1100
	var wg sync.WaitGroup
	errs := make(chan error, flood)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < flood; i += 8 {
				ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("a-flood-%05d", i), Namespace: ns},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: "sbx-i-0"},
					Reason:         "Noise", Message: "flood", Type: "Normal", FirstTimestamp: old, LastTimestamp: old, Count: 1}
				if _, err := cs.CoreV1().Events(ns).Create(testcluster.Context(t), ev, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	evs := backOffEvents(t, c, ns, in, sb)
	found := false
	for _, e := range evs {
		found = found || e.Reason == "BackOff"
	}
	if !found || len(evs) > 500 {
		t.Fatalf("%d events, BackOff among them: %v", len(evs), found)
	}
}
