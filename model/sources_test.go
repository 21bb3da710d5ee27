package model

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model/modeltest"
)

const ns = modeltest.Namespace

func TestBatchSandboxFromUnstructured(t *testing.T) {
	u := modeltest.UnstructuredBatchSandbox("a", map[string]string{
		osv1.AnnotationEndpoints:     `["10.0.3.7"]`,
		osv1.AnnotationAllocStatus:   `{"pods":["pool-x1","pool-x2"]}`,
		osv1.AnnotationAllocReleased: `{"pods":["pool-x1"]}`,
	})
	b := BatchSandboxFromUnstructured(u)
	exp := time.Date(2026, 11, 29, 18, 24, 5, 0, time.UTC)
	if b.Name != "a" || b.Namespace != ns || b.UID != "uid-a" || b.Phase != "Succeed" || b.Replicas != 1 ||
		b.ExpireTime == nil || !b.ExpireTime.Equal(exp) {
		t.Errorf("converted %+v", b)
	}
	if !reflect.DeepEqual(b.Endpoints, []string{"10.0.3.7"}) || !reflect.DeepEqual(b.AllocatedPods(), []string{"pool-x2"}) {
		t.Errorf("endpoints %q allocated %q", b.Endpoints, b.AllocatedPods())
	}
	if b.GetAnnotations() != nil || len(b.Notices()) != 0 {
		t.Errorf("kept annotations or noticed problems: %v %v", b.GetAnnotations(), b.Notices())
	}
}

func TestMalformedAnnotations(t *testing.T) {
	huge := `["` + strings.Repeat("1", 70<<10) + `"]`
	many := "[" + strings.Repeat(`"10.0.0.1",`, 2000) + `"10.0.0.1"]`
	cases := []struct {
		name, annotation, value string
		inMsg                   string
	}{
		{"endpoints not JSON", osv1.AnnotationEndpoints, `10.0.0.1`, "not a JSON array"},
		{"endpoints an object", osv1.AnnotationEndpoints, `{"ip":"10.0.0.1"}`, "not a JSON array"},
		{"endpoints with a number", osv1.AnnotationEndpoints, `[1]`, "entry 0 is not a string"},
		{"endpoints not an IP", osv1.AnnotationEndpoints, `["pod-a"]`, "not an IP address"},
		{"endpoints huge", osv1.AnnotationEndpoints, huge, "bytes"},
		{"endpoints too many", osv1.AnnotationEndpoints, many, "only the first 1024 kept"},
		{"alloc-status not JSON", osv1.AnnotationAllocStatus, `pods: [a]`, "not a JSON object"},
		{"alloc-status without pods", osv1.AnnotationAllocStatus, `{"pod":["a"]}`, `no "pods"`},
		{"alloc-status pods a string", osv1.AnnotationAllocStatus, `{"pods":"a"}`, "not an array"},
		{"alloc-released with a number", osv1.AnnotationAllocReleased, `{"pods":[7]}`, "pods[0] is not a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := BatchSandboxFromUnstructured(modeltest.UnstructuredBatchSandbox("a", map[string]string{tc.annotation: tc.value}))
			if len(b.Notices()) != 1 {
				t.Fatalf("notices %v", b.Notices())
			}
			n := b.Notices()[0]
			if n.Code != CodeBadAnnotation || !strings.Contains(n.Message, tc.annotation) || !strings.Contains(n.Message, tc.inMsg) {
				t.Errorf("notice %s %q", n.Code, n.Message)
			}
			if len(n.Message) > 600 {
				t.Errorf("message is %d bytes long", len(n.Message))
			}
			if len(b.Endpoints) > maxAnnotationEntries {
				t.Errorf("%d endpoints kept", len(b.Endpoints))
			}
		})
	}
}

func TestAgentSandboxAndPoolFromUnstructured(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"metadata": map[string]interface{}{"name": "ag", "namespace": ns},
		"spec": map[string]interface{}{"replicas": int64(1), "shutdownTime": "2026-11-29T19:00:00Z",
			"podTemplate": map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{"name": "c", "image": "img:1"}}}}},
		"status": map[string]interface{}{"selector": "agents.x-k8s.io/sandbox-name-hash=abc", "podIPs": []interface{}{"10.0.0.5"}, "nodeName": "n1"},
	}}
	a := AgentSandboxFromUnstructured(u, "v1beta1")
	if a.Version != "v1beta1" || a.Suspended || !a.Routed() || a.ShutdownTime == nil ||
		a.Selector != "agents.x-k8s.io/sandbox-name-hash=abc" || !reflect.DeepEqual(a.PodIPs, []string{"10.0.0.5"}) || a.NodeName != "n1" {
		t.Errorf("agent %+v", a)
	}
	for _, spec := range []map[string]interface{}{{"operatingMode": "Suspended"}, {"replicas": int64(0)}} {
		if a := AgentSandboxFromUnstructured(&unstructured.Unstructured{Object: map[string]interface{}{"spec": spec}}, "v1beta1"); !a.Suspended || !a.Paused() {
			t.Errorf("spec %v: not suspended", spec)
		}
	}
	p := PoolFromUnstructured(&unstructured.Unstructured{Object: map[string]interface{}{
		"metadata": map[string]interface{}{"name": "pool-a", "namespace": ns},
		"spec":     map[string]interface{}{"capacitySpec": map[string]interface{}{"bufferMin": int64(2), "poolMax": int64(50)}},
		"status":   map[string]interface{}{"total": int64(10), "allocated": int64(4), "available": int64(6), "revision": "r3"},
	}})
	if p.Total != 10 || p.Allocated != 4 || p.Available != 6 || p.Revision != "r3" || p.BufferMin != 2 || p.PoolMax != 50 {
		t.Errorf("pool %+v", p)
	}
	// Wrong types anywhere: zero values, no panic.
	bad := &unstructured.Unstructured{Object: map[string]interface{}{"spec": "x", "status": []interface{}{1}}}
	_ = AgentSandboxFromUnstructured(bad, "v1alpha1")
	_ = PoolFromUnstructured(bad)
	_ = BatchSandboxFromUnstructured(bad)
}

func TestSlimPod(t *testing.T) {
	grace := int64(30)
	p := modeltest.RunningPod("a-0", "ua", "10.0.0.1", modeltest.OwnedBy("a", 0), modeltest.Restarted(1, "Error", 1))
	p.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", "x": "y"}
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	p.Finalizers = []string{"f"}
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.Volumes = []corev1.Volume{{Name: "v"}}
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "SECRET", Value: "s"}}
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("2")}
	p.Spec.Containers[0].LivenessProbe = &corev1.Probe{PeriodSeconds: 10, FailureThreshold: 3}
	p.Spec.InitContainers = []corev1.Container{{Name: "execd-installer", Image: "execd:1", Env: []corev1.EnvVar{{Name: "A"}}}}
	p.Status.Conditions = append(p.Status.Conditions,
		corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, // implied by nodeName: dropped
		corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}}
	p.Status.ContainerStatuses[0].ImageID = "docker-pullable://python@sha256:1"

	s := SlimPod(p)
	// Volumes, env, other resources, init container specs, annotations and
	// managedFields have no field in Pod; a single-stack podIPs repeats podIP,
	// so nothing rare is set but the two kept conditions (DisruptionTarget
	// comes only with an eviction).
	if r := s.Status.rare; r == nil || r.reason != "" || r.message != "" || r.podIPs != nil || r.initContainerStatuses != nil ||
		r.deletionGracePeriodSeconds != nil || r.terminationGrace != nil || r.startTime != nil || len(r.conditions) != 2 || s.Status.cond != 0 {
		t.Errorf("kept a dropped field: %+v", s)
	}
	if s.Name != "a-0" || s.UID != "ua" || s.Labels.Get(osv1.LabelPodIndex) != "0" || len(s.OwnerReferences) != 1 || len(s.Finalizers()) != 1 ||
		s.Spec.graceSet != true || s.Spec.grace != 30 || s.Spec.NodeName != "node-1" || s.Spec.Containers[0].LivenessProbe == nil ||
		s.Status.PodIP != "10.0.0.1" || !hasStart(s) || s.Spec.Containers[0].MemoryLimit == nil || s.Spec.Containers[0].MemoryLimit.String() != "1Gi" {
		t.Errorf("lost a kept field: %+v", s)
	}
	var types []corev1.PodConditionType
	for _, c := range s.Status.Conditions() {
		types = append(types, c.Type)
	}
	if !reflect.DeepEqual(types, []corev1.PodConditionType{corev1.PodReady, corev1.DisruptionTarget}) {
		t.Errorf("conditions %v", types)
	}
	cs := s.Status.ContainerStatuses[0]
	if cs.ImageID == "" || cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil || cs.State.Running == nil || !cs.Ready {
		t.Errorf("container status %+v", cs)
	}
	// A container that never ended keeps no memory limit.
	fresh := modeltest.RunningPod("b-0", "ub", "10.0.0.2")
	fresh.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	if l := SlimPod(fresh).Spec.Containers[0].MemoryLimit; l != nil {
		t.Errorf("memory limit %s kept for a container that never ended", l)
	}
	// Forensics' siblings keep it: their limit decides whether they are a
	// control; the rest of the Pod is SlimPod's.
	withLimits, slim := SlimPodWithLimits(fresh), SlimPod(fresh)
	if l := withLimits.Spec.Containers[0].MemoryLimit; l == nil || l.String() != "1Gi" {
		t.Errorf("SlimPodWithLimits: memory limit %v, want 1Gi", l)
	}
	withLimits.Spec.Containers[0].MemoryLimit = nil
	if !reflect.DeepEqual(withLimits, slim) {
		t.Errorf("SlimPodWithLimits differs from SlimPod beyond the memory limit:\n%+v\n%+v", withLimits, slim)
	}
	if SlimPod(nil) != nil {
		t.Error("SlimPod(nil) != nil")
	}
}

// The fields few Pods set live in PodStatus.rare, allocated only for a Pod
// that sets one, and read through PodStatus's methods.
func TestSlimPodRareStatus(t *testing.T) {
	initDone := corev1.ContainerStatus{Name: "execd-installer", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}
	initFailed := corev1.ContainerStatus{Name: "execd-installer", RestartCount: 2,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	cases := []struct {
		name                  string
		pod                   *corev1.Pod
		rare                  bool
		reason, message       string
		podIPs                int
		initContainerStatuses int
	}{
		{name: "running, single stack, init done", pod: modeltest.RunningPod("a-0", "ua", "10.0.0.1", func(p *corev1.Pod) {
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{initDone}
		})},
		{name: "evicted", pod: modeltest.RunningPod("a-0", "ua", "10.0.0.1", func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
		}), rare: true, reason: "Evicted", message: "The node was low on resource: memory."},
		{name: "dual stack", pod: modeltest.RunningPod("a-0", "ua", "10.0.0.1", func(p *corev1.Pod) {
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}
		}), rare: true, podIPs: 2},
		{name: "init container failing", pod: modeltest.RunningPod("a-0", "ua", "10.0.0.1", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{initFailed}
		}), rare: true, initContainerStatuses: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := &SlimPod(tc.pod).Status
			if (st.rare != nil) != tc.rare {
				t.Errorf("rare = %+v, want one: %v", st.rare, tc.rare)
			}
			if st.Reason() != tc.reason || st.Message() != tc.message || len(st.PodIPs()) != tc.podIPs ||
				len(st.InitContainerStatuses()) != tc.initContainerStatuses {
				t.Errorf("reason %q message %q podIPs %v init statuses %+v", st.Reason(), st.Message(), st.PodIPs(), st.InitContainerStatuses())
			}
		})
	}
}

// A sandbox made from a template, with well-formed annotations, carries no
// rare part; a pooled one keeps its pool and allocated Pods there.
func TestBatchSandboxRareOnlyWhenSet(t *testing.T) {
	tmpl := BatchSandboxFromUnstructured(modeltest.UnstructuredBatchSandbox("a", map[string]string{osv1.AnnotationEndpoints: `["10.0.3.7"]`}))
	if tmpl.rare != nil {
		t.Errorf("template sandbox carries %+v", tmpl.rare)
	}
	u := modeltest.UnstructuredBatchSandbox("p", map[string]string{osv1.AnnotationAllocStatus: `{"pods":["pool-x1"]}`})
	u.Object["spec"] = map[string]interface{}{"poolRef": "pool-x", "replicas": int64(1)}
	pooled := BatchSandboxFromUnstructured(u)
	if pooled.PoolRef() != "pool-x" || !reflect.DeepEqual(pooled.AllocatedPods(), []string{"pool-x1"}) || pooled.Notices() != nil {
		t.Errorf("pooled sandbox: pool %q allocated %q notices %v", pooled.PoolRef(), pooled.AllocatedPods(), pooled.Notices())
	}
}

// The fuzz targets: whatever an annotation holds, parsing never panics, keeps
// its bounds, and a value that is not clean JSON of the right shape yields a notice.
func FuzzParseEndpoints(f *testing.F) {
	for _, s := range annotationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		eps, problem := parseEndpoints(v)
		if len(eps) > maxAnnotationEntries {
			t.Fatalf("%d entries", len(eps))
		}
		var clean []string
		if json.Unmarshal([]byte(v), &clean) != nil {
			if problem == "" {
				t.Fatalf("invalid value %q accepted without a problem", v)
			}
		} else {
			// What encoding/json reads, entry for entry, unless dropped.
			if len(clean) > maxAnnotationEntries {
				clean = clean[:maxAnnotationEntries]
			}
			if len(eps) != len(clean) {
				t.Fatalf("%q: %d entries, encoding/json reads %d", v, len(eps), len(clean))
			}
			for i := range eps {
				if eps[i] != clean[i] && eps[i] != "" {
					t.Fatalf("%q: entry %d reads %q, encoding/json reads %q", v, i, eps[i], clean[i])
				}
			}
		}
		b := BatchSandboxFromUnstructured(modeltest.UnstructuredBatchSandbox("a", map[string]string{osv1.AnnotationEndpoints: v}))
		if (problem != "") != (len(b.Notices()) == 1) {
			t.Fatalf("problem %q but notices %v", problem, b.Notices())
		}
	})
}

func FuzzParseAllocPods(f *testing.F) {
	for _, s := range annotationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		pods, problem := parseAllocPods(v)
		if len(pods) > maxAnnotationEntries {
			t.Fatalf("%d pods", len(pods))
		}
		for _, p := range pods {
			if p == "" {
				t.Fatal("empty Pod name kept")
			}
		}
		if problem == "" {
			var doc struct{ Pods []string }
			if json.Unmarshal([]byte(v), &doc) != nil {
				t.Fatalf("invalid value %q accepted without a problem", v)
			}
		}
		_ = BatchSandboxFromUnstructured(modeltest.UnstructuredBatchSandbox("a", map[string]string{osv1.AnnotationAllocStatus: v, osv1.AnnotationAllocReleased: v}))
	})
}

var annotationSeeds = []string{
	`["10.0.0.1"]`, `[""]`, `[]`, `null`, `["10.0.0.1",""]`, `[1,2]`, `[null]`, `{"pods":["a"]}`, `{"pods":null}`,
	`{"pods":[1]}`, `{"pods":"a"}`, `{}`, `"x"`, ``, `[`, `["\u0000"]`, `["::1"]`, `{"pods":["a","b"],"x":1}`,
	`[["10.0.0.1"]]`, `{"pods":[""]}`, strings.Repeat("[", 10000),
	"[\"10.0.0.\\u0031\"]", "[\"\xff\"]", `["\ud800"]`, `["10.0.0.1"] `, `["10.0.0.1"]x`,
}

// TestAnnotationSeedCorpus runs the fuzz seeds as a normal test.
func TestAnnotationSeedCorpus(t *testing.T) {
	for _, s := range annotationSeeds {
		_, _ = parseEndpoints(s)
		_, _ = parseAllocPods(s)
	}
}

// An endpoints entry that is no IP address is dropped (its slot keeps its
// place), and the notice quotes it without a control character in it.
func TestEndpointsNotIPDropped(t *testing.T) {
	hostile := "10.0.0.9\x1b]0;evil\x07\u009b2J"
	v, _ := json.Marshal([]string{"10.0.0.1", hostile, "fe80::1%\x1b[2J", "fd00::2"})
	b := BatchSandboxFromUnstructured(modeltest.UnstructuredBatchSandbox("a", map[string]string{osv1.AnnotationEndpoints: string(v)}))
	if want := []string{"10.0.0.1", "", "", "fd00::2"}; !slices.Equal(b.Endpoints, want) {
		t.Errorf("endpoints %q, want %q", b.Endpoints, want)
	}
	if len(b.Notices()) != 1 || b.Notices()[0].Code != CodeBadAnnotation {
		t.Fatalf("notices %v", b.Notices())
	}
	n := b.Notices()[0]
	for _, s := range append([]string{n.Message}, n.Evidence[0].Text) {
		if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) {
			t.Errorf("notice holds a control character: %q", s)
		}
	}
	if !strings.Contains(n.Message, `"10.0.0.9␛]0;evil␇`) {
		t.Errorf("notice does not quote the entry: %q", n.Message)
	}
}

// The termination grace and the conditions are kept compactly (an int32
// beside HostNetwork, one condition by pointer); what is set reads back,
// whatever its size, and a reset leaves nothing behind.
func TestPodGraceAndConditions(t *testing.T) {
	var p Pod
	for _, v := range []int64{30, 0, -1, 1 << 31, -1 << 40, 1<<31 - 1} {
		p.SetTerminationGracePeriodSeconds(&v)
		if got, ok := p.TerminationGracePeriodSeconds(); !ok || got != v {
			t.Errorf("grace %d reads %d, %v", v, got, ok)
		}
	}
	p.SetTerminationGracePeriodSeconds(nil)
	if got, ok := p.TerminationGracePeriodSeconds(); ok || p.Status.rare.terminationGrace != nil {
		t.Errorf("unset grace reads %d, %v", got, ok)
	}
	at := metav1.NewTime(time.Unix(1764600000, 0))
	one := []PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at}}
	p.Status.SetConditions(one)
	if got := p.Status.Conditions(); !reflect.DeepEqual(got, one) || p.Status.rare.conditions != nil {
		t.Errorf("one condition reads %v, or is not kept in the Pod's fields", got)
	}
	if c, ok := p.Status.Condition(corev1.PodReady); !ok || !reflect.DeepEqual(c, one[0]) {
		t.Errorf("Condition(Ready) reads %v, %v", c, ok)
	}
	if c, ok := p.Status.Condition(corev1.DisruptionTarget); ok {
		t.Errorf("Condition(DisruptionTarget) reads %v", c)
	}
	two := append(slices.Clone(one), PodCondition{Type: corev1.DisruptionTarget})
	p.Status.SetConditions(two)
	if got := p.Status.Conditions(); len(got) != 2 || p.Status.cond != 0 {
		t.Errorf("two conditions read %v", got)
	}
	if c, ok := p.Status.Condition(corev1.DisruptionTarget); !ok || c.Type != corev1.DisruptionTarget {
		t.Errorf("Condition(DisruptionTarget) of two reads %v, %v", c, ok)
	}
	p.Status.SetConditions(nil)
	if got := p.Status.Conditions(); got != nil {
		t.Errorf("no condition reads %v", got)
	}
	// What the Pod's fields cannot hold is kept whole: a reason or message,
	// another type or status, a time Unix nanoseconds cannot hold or the
	// epoch (0 stands for unset), and no time at all reads back as none.
	for _, c := range []PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "m"},
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/3 nodes"},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: "Maybe"},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Date(3000, 1, 1, 0, 0, 0, 0, time.Local))},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Unix(0, 0))},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionUnknown},
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse},
	} {
		for _, set := range []func(){func() { p.Status.SetConditions([]PodCondition{c}) }, func() { p.Status.SetCondition(c) }} {
			set()
			if got := p.Status.Conditions(); len(got) != 1 || !reflect.DeepEqual(got[0], c) {
				t.Errorf("%+v reads %+v", c, got)
			}
			if got, ok := p.Status.Condition(c.Type); !ok || !reflect.DeepEqual(got, c) {
				t.Errorf("Condition(%s) of %+v reads %+v, %v", c.Type, c, got, ok)
			}
		}
	}
	// A plain condition set alone costs no allocation (a decoder's list
	// would be garbage between the Pod's long-lived parts), and replaces
	// the several kept before.
	p.Status.SetConditions(two)
	if n := testing.AllocsPerRun(10, func() { p.Status.SetCondition(one[0]) }); n != 0 {
		t.Errorf("SetCondition of a plain condition: %v allocations", n)
	}
	if got := p.Status.Conditions(); !reflect.DeepEqual(got, one) || p.Status.rare.conditions != nil {
		t.Errorf("after SetCondition: %v", got)
	}
}

func hasStart(p *Pod) bool {
	_, ok := p.Status.StartTime()
	return ok
}

// A start time is a word of the Pod, not an allocation of its own; the
// times a word of Unix nanoseconds cannot hold are kept whole, apart.
func TestPodStartTime(t *testing.T) {
	var s PodStatus
	if got, ok := s.StartTime(); ok {
		t.Errorf("a Pod without a start time reads %v", got)
	}
	start := metav1.NewTime(time.Date(2026, 3, 1, 12, 30, 5, 7, time.UTC))
	if n := testing.AllocsPerRun(10, func() { s.SetStartTime(&start) }); n != 0 || s.rare != nil {
		t.Errorf("a start time took %v allocations, rare part %+v", n, s.rare)
	}
	for _, v := range []time.Time{start.Time, time.Unix(0, 0), time.Unix(1, 0), time.Unix(-1, 0),
		time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), {}} {
		s.SetStartTime(&metav1.Time{Time: v})
		if got, ok := s.StartTime(); !ok || !got.Equal(v) {
			t.Errorf("start time %v reads %v, %v", v, got, ok)
		}
	}
	s.SetStartTime(nil)
	if got, ok := s.StartTime(); ok || s.rare.startTime != nil {
		t.Errorf("an unset start time reads %v", got)
	}
}
