package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// bsbxStates is what a reader of BatchSandbox name saw, write by write:
// its endpoints annotation ("<absent>" when none), replicas, phase and
// condition type/reason/message.
func bsbxStates(evs []watch.Event, name string) []string {
	var out []string
	for _, ev := range evs {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || u.GetName() != name || ev.Type == watch.Deleted {
			continue
		}
		ep, has := u.GetAnnotations()[osv1.AnnotationEndpoints]
		if !has {
			ep = "<absent>"
		}
		st := "<no status>"
		if _, ok := u.Object["status"]; ok {
			rep, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			st = fmt.Sprintf("replicas=%d phase=%s", rep, phase)
			for _, c := range conds {
				m := c.(map[string]any)
				st += fmt.Sprintf(" %s/%s/%q", m["type"], m["reason"], m["message"])
			}
		}
		s := ep + " " + st
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// TestControllerSequencesOnARealAPIServer plays sandboxes through the real
// API server with the engines' real CRDs and checks, write by write, that
// what a reader sees is what the real OpenSandbox controller writes (the
// facts file on it), then that the fleet model reading the same watches
// makes the right rows of them.
func TestControllerSequencesOnARealAPIServer(t *testing.T) {
	r := startReplay(t, BatchSandboxGVR, Config{Seed: 31, ChurnPerHour: -1, PoolBuffer: -1})
	c, ns, ctx, s, w, bsbxs, pods := r.c, r.ns, r.ctx, r.s, r.w, r.objects, r.pods
	byScenario := map[Scenario]string{}
	for _, sc := range []Scenario{Recreated, StuckTerminating, FinalizerStuck, FailedSticky, OOMKill} {
		s.mu.Lock()
		err := s.createSandbox(ctx, createOpts{engine: EngineBatch, scenario: sc, node: -1})
		for _, sb := range s.sandboxes {
			if sb.scenario == sc {
				byScenario[sc] = sb.name
			}
		}
		s.mu.Unlock()
		if err != nil {
			t.Fatalf("creating a %s sandbox: %v", sc, err)
		}
	}
	// Until the re-created Pod runs (10-30 s after the first ran; it would
	// be re-created again 10-30 s later) and the stuck one was deleted.
	s.mu.Lock()
	recSb, stuckSb := s.sandboxes[key(ns, byScenario[Recreated])], s.sandboxes[key(ns, byScenario[StuckTerminating])]
	firstUID := recSb.pods[0].obj.UID
	s.mu.Unlock()
	done := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		p := recSb.pods[0].obj
		return p != nil && p.UID != firstUID && p.Status.Phase == corev1.PodRunning && stuckSb.deleting
	}
	r.runUntil(t, 200*time.Millisecond, time.Minute, done, "no re-creation and stuck deletion within a simulated minute")
	// The watches deliver those writes moments later: wait until the
	// recorders hold the simulator's last writes of the re-created sandbox
	// and the fleet model shows the outcome the checks below expect (on a
	// timeout they say what is missing).
	s.mu.Lock()
	lastPodRV, lastBsbxRV := recSb.pods[0].obj.ResourceVersion, recSb.obj.GetResourceVersion()
	s.mu.Unlock()
	rowIs := func(snap *fleet.Snapshot, sc Scenario, ok func(*model.Sandbox) bool) bool {
		sb := snap.Sandbox("bsbx/" + ns + "/" + byScenario[sc])
		return sb != nil && ok(sb)
	}
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		snap := w.Fleet().Snapshot()
		return pods.holds(lastPodRV) && bsbxs.holds(lastBsbxRV) &&
			rowIs(snap, Recreated, func(sb *model.Sandbox) bool { return sb.Identity() == model.IdentityUIDChanged }) &&
			rowIs(snap, StuckTerminating, func(sb *model.Sandbox) bool { return sb.EnginePhase == model.PhaseDeleted }) &&
			rowIs(snap, FailedSticky, func(sb *model.Sandbox) bool { return sb.EnginePhase == model.PhaseFailed }), nil
	})

	// The same-name re-creation, as the controller writes it.
	rec := byScenario[Recreated]
	var podEvs []watch.Event
	var uids []string
	for _, ev := range pods.snapshot() {
		if p, ok := ev.Object.(*corev1.Pod); ok && p.Name == rec+"-0" {
			podEvs = append(podEvs, ev)
			if !slices.Contains(uids, string(p.UID)) {
				uids = append(uids, string(p.UID))
			}
		}
	}
	if len(uids) != 2 {
		t.Fatalf("Pod %s-0 had UIDs %v, want two (re-created under the same name)", rec, uids)
	}
	ips := make([]string, 2) // per incarnation (the second may get the same address)
	for _, ev := range podEvs {
		p := ev.Object.(*corev1.Pod)
		if ev.Type == watch.Added && p.Spec.NodeName != "" {
			t.Errorf("Pod %s (uid %s) created bound to %s, want unbound", p.Name, p.UID, p.Spec.NodeName)
		}
		if i := slices.Index(uids, string(p.UID)); p.Status.PodIP != "" {
			ips[i] = p.Status.PodIP
		}
	}
	first := podEvs[0].Object.(*corev1.Pod)
	wantLabels := map[string]string{osv1.LabelSandboxID: "", "opensandbox.io/tenant": "", "app.kubernetes.io/part-of": "", osv1.LabelBatchSandboxName: rec, osv1.LabelPodIndex: "0"}
	if got := slices.Sorted(maps.Keys(first.Labels)); !slices.Equal(got, slices.Sorted(maps.Keys(wantLabels))) || first.Labels[osv1.LabelBatchSandboxName] != rec {
		t.Errorf("Pod labels %v, want the template's and the controller's two only", first.Labels)
	}
	if len(first.Annotations) != 0 || len(first.Finalizers) != 0 || first.GenerateName != rec+"-" {
		t.Errorf("Pod annotations %v finalizers %v generateName %q", first.Annotations, first.Finalizers, first.GenerateName)
	}
	if or := first.OwnerReferences; len(or) != 1 || or[0].Kind != "BatchSandbox" || or[0].Name != rec || or[0].Controller == nil || !*or[0].Controller ||
		or[0].BlockOwnerDeletion == nil || !*or[0].BlockOwnerDeletion {
		t.Errorf("Pod ownerReferences %+v", first.OwnerReferences)
	}
	if ips[0] == "" || ips[1] == "" {
		t.Fatalf("Pod %s-0 had IPs %v, want one per incarnation", rec, ips)
	}
	creating, running := `Progressing/Creating/"Sandbox is being created"`, `Ready/PodsReady/"Sandbox is running"`
	want := []string{
		"<absent> <no status>",                      // nothing written before a Pod exists
		`[""] <no status>`,                          // the Pod exists, unbound: endpoints first (an update) ...
		`[""] replicas=1 phase=Pending ` + creating, // ... then the status subresource
		`["` + ips[0] + `"] replicas=1 phase=Pending ` + creating,
		`["` + ips[0] + `"] replicas=1 phase=Succeed ` + running,
		`["` + ips[0] + `"] replicas=1 phase=Pending ` + creating, // deleted: Terminating, still counted, its IP kept
		`[] replicas=1 phase=Pending ` + creating,                 // gone: endpoints first ...
		`[] replicas=0 phase=Pending ` + creating,                 // ... then the status
		`[""] replicas=0 phase=Pending ` + creating,               // re-created, unbound
		`[""] replicas=1 phase=Pending ` + creating,
		`["` + ips[1] + `"] replicas=1 phase=Pending ` + creating,
		`["` + ips[1] + `"] replicas=1 phase=Succeed ` + running,
	}
	if got := bsbxStates(bsbxs.snapshot(), rec); !slices.Equal(got, want) {
		t.Errorf("BatchSandbox %s as a reader saw it:\n  %s\nwant:\n  %s", rec, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	evs, err := c.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := int32(0)
	for _, ev := range evs.Items {
		if ev.Reason == "SuccessfulCreate" && ev.InvolvedObject.Name == rec && ev.Message == "Created pod: "+rec+"-0" {
			created += ev.Count
		}
	}
	if created != 2 {
		t.Errorf("SuccessfulCreate for %s-0 counted %d times, want 2", rec, created)
	}

	// Finalizers, templates and the Failed summary.
	get := func(name string) *unstructured.Unstructured {
		u, err := c.Dynamic.Resource(BatchSandboxGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("BatchSandbox %s: %v", name, err)
		}
		return u
	}
	restartPolicy := func(name string) string {
		rp, _, _ := unstructured.NestedString(get(name).Object, "spec", "template", "spec", "restartPolicy")
		return rp
	}
	if u := get(rec); len(u.GetFinalizers()) != 0 {
		t.Errorf("%s without a taskTemplate has finalizers %v", rec, u.GetFinalizers())
	}
	if u := get(byScenario[FinalizerStuck]); !slices.Contains(u.GetFinalizers(), osv1.FinalizerTaskCleanup) || u.Object["spec"].(map[string]any)["taskTemplate"] == nil {
		t.Errorf("a BatchSandbox with a taskTemplate: finalizers %v, spec %v", u.GetFinalizers(), u.Object["spec"])
	}
	if rp, rpo := restartPolicy(rec), restartPolicy(byScenario[OOMKill]); rp != "Never" || rpo != "Always" {
		t.Errorf("template restartPolicy %q and %q, want Never and Always", rp, rpo)
	}
	failed := byScenario[FailedSticky]
	cond := fmt.Sprint(get(failed).Object["status"].(map[string]any)["conditions"])
	if !strings.Contains(cond, "PodFailed") || !strings.Contains(cond, "1/1 observed pods failed; primary reason=ImagePullBackOff; sample pod="+failed+"-0") {
		t.Errorf("Failed conditions %s", cond)
	}

	// The deleted sandbox whose Pod still pulls: object gone, Pod Terminating.
	stuck := byScenario[StuckTerminating]
	if _, err := c.Dynamic.Resource(BatchSandboxGVR).Namespace(ns).Get(ctx, stuck, metav1.GetOptions{}); err == nil {
		t.Errorf("BatchSandbox %s (no taskTemplate) still exists after its deletion", stuck)
	}
	if p, err := c.Kube.CoreV1().Pods(ns).Get(ctx, stuck+"-0", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Errorf("Pod %s-0 of the deleted sandbox: %v, deletionTimestamp %v", stuck, err, p.DeletionTimestamp)
	}

	// The fleet model, fed by the same watches.
	snap := w.Fleet().Snapshot()
	if sb := snap.Sandbox("bsbx/" + ns + "/" + rec); sb == nil || sb.Identity() != model.IdentityUIDChanged {
		t.Errorf("re-created sandbox row %+v, want UID_CHANGED (the watcher saw the first UID)", sb)
	}
	if sb := snap.Sandbox("bsbx/" + ns + "/" + stuck); sb == nil || sb.EnginePhase != model.PhaseDeleted || sb.State != model.StateTerminating {
		t.Errorf("deleted sandbox row %+v, want phase deleted, Terminating", sb)
	}
	if sb := snap.Sandbox("bsbx/" + ns + "/" + failed); sb == nil || sb.EnginePhase != model.PhaseFailed {
		t.Errorf("failed sandbox row %+v", sb)
	}
}
