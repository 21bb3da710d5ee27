package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restwatch "k8s.io/client-go/rest/watch"
	"sigs.k8s.io/randfill"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// randomPodCases is how many random Pods TestPodWireRandomPods decodes.
const randomPodCases = 3000

// TestPodWireRandomPods: on random Pods, decodePod makes exactly the Pod
// that the generated decoder and SlimPodSharing make, with and without
// shared string lists.
func TestPodWireRandomPods(t *testing.T) {
	t.Parallel()
	f := podFiller(1)
	lists := mem.NewStringLists()
	seen := map[string]int{}
	for i := range randomPodCases {
		data := marshalPod(t, randomPod(f))
		l := lists
		if i%3 == 0 {
			l = nil // SlimPod's copies
		}
		pod, slim := checkPodWire(t, fmt.Sprintf("random Pod %d", i), data, l)
		tallyCases(seen, pod, slim)
	}
	// The generator must reach every case SlimPodSharing tells apart, or
	// the comparison proves little.
	for _, c := range []string{
		"memory limit kept", "memory limit dropped", "ended without limit",
		"init statuses kept", "init statuses dropped", "podIPs kept", "podIPs dropped",
		"Ready kept", "DisruptionTarget kept", "PodScheduled kept", "PodScheduled dropped", "other condition dropped",
		"label shares an owner's name", "long label", "owners", "finalizers", "no rare status", "rare status",
		"liveness probe", "command", "deletion grace", "termination grace",
	} {
		if seen[c] < 20 {
			t.Errorf("case %q came up %d times in %d Pods", c, seen[c], randomPodCases)
		}
	}
	t.Logf("cases: %v", seen)
}

// tallyCases counts in seen the cases SlimPodSharing tells apart that the
// Pod pod (slimmed: slim) shows.
func tallyCases(seen map[string]int, pod *corev1.Pod, slim *model.Pod) {
	for i, c := range pod.Spec.Containers {
		_, limited := c.Resources.Limits[corev1.ResourceMemory]
		kept := slim.Spec.Containers[i].MemoryLimit != nil
		switch {
		case kept:
			seen["memory limit kept"]++
		case limited:
			seen["memory limit dropped"]++
		case model.KeepsMemoryLimit(slim.Status.ContainerStatuses, c.Name):
			seen["ended without limit"]++
		}
		if c.LivenessProbe != nil {
			seen["liveness probe"]++
		}
		if c.Command != nil {
			seen["command"]++
		}
	}
	if len(pod.Status.InitContainerStatuses) > 0 {
		if slim.Status.InitContainerStatuses() != nil {
			seen["init statuses kept"]++
		} else {
			seen["init statuses dropped"]++
		}
	}
	if len(pod.Status.PodIPs) > 0 {
		if slim.Status.PodIPs() != nil {
			seen["podIPs kept"]++
		} else {
			seen["podIPs dropped"]++
		}
	}
	kept := map[corev1.PodConditionType]int{}
	for _, c := range slim.Status.Conditions() {
		kept[c.Type]++
	}
	for _, c := range pod.Status.Conditions {
		switch {
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue:
			seen["PodScheduled dropped"]++
		case kept[c.Type] > 0:
			seen[string(c.Type)+" kept"]++
		default:
			seen["other condition dropped"]++
		}
	}
	for _, v := range pod.Labels {
		if len(v) > 24 {
			seen["long label"]++
		}
		for _, o := range pod.OwnerReferences {
			if v != "" && v == o.Name {
				seen["label shares an owner's name"]++
			}
		}
	}
	st := &slim.Status
	rare := st.Reason() != "" || st.Message() != "" || st.PodIPs() != nil || st.InitContainerStatuses() != nil || slim.GetDeletionGracePeriodSeconds() != nil
	for key, n := range map[string]bool{"owners": len(pod.OwnerReferences) > 0, "finalizers": pod.Finalizers != nil,
		"rare status": rare, "no rare status": !rare,
		"deletion grace": pod.DeletionGracePeriodSeconds != nil, "termination grace": pod.Spec.TerminationGracePeriodSeconds != nil} {
		if n {
			seen[key]++
		}
	}
}

// TestPodWireMergedPods: two Pod messages one after the other are one
// message, merged by protobuf's rules (message fields merge, repeated
// fields append, the last scalar wins). The generated decoder follows
// them, and so must decodePod: every field the decoder reads then occurs
// twice, in every combination of set and unset.
func TestPodWireMergedPods(t *testing.T) {
	t.Parallel()
	checkMergedPodWire(t, 2, "merged Pods", func(i int, a, b *corev1.Pod) []byte {
		if i%2 == 0 {
			// Same container names, so that statuses of one Pod find the
			// containers of the other.
			b.Spec.Containers = slices.Clone(a.Spec.Containers)
		}
		return append(marshalPod(t, a), marshalPod(t, b)...)
	})
}

// TestPodWireMergedElements: as TestPodWireMergedPods, one level down: each
// container, container status, init container status, condition, podIP
// and owner reference is two messages one after the other, which merge
// (a container's resources into one limits map, its status's states into
// one, ...).
func TestPodWireMergedElements(t *testing.T) {
	t.Parallel()
	checkMergedPodWire(t, 7, "merged elements", func(_ int, a, b *corev1.Pod) []byte { return mergedElements(t, a, b) })
}

// checkMergedPodWire checks decodePod on pairs of random Pods (filler seed)
// that merge makes one message of; the i-th pair's case is named what i.
func checkMergedPodWire(t *testing.T, seed int64, what string, merge func(i int, a, b *corev1.Pod) []byte) {
	t.Helper()
	f := podFiller(seed)
	lists := mem.NewStringLists()
	for i := range randomPodCases / 6 {
		a, b := randomPod(f), randomPod(f)
		checkPodWire(t, fmt.Sprintf("%s %d", what, i), merge(i, a, b), lists)
	}
}

// mergedElements is Pod a whose repeated message fields hold a's elements
// each followed by the b's element of the same index, in one field value.
func mergedElements(t testing.TB, a, b *corev1.Pod) []byte {
	t.Helper()
	meta, spec, status := a.ObjectMeta, a.Spec, a.Status
	meta.OwnerReferences, spec.Containers = nil, nil
	status.ContainerStatuses, status.InitContainerStatuses, status.Conditions, status.PodIPs = nil, nil, nil, nil
	metaBytes := appendMerged(t, marshalOrFail(t, &meta), metaOwnerReferences, a.OwnerReferences, b.OwnerReferences)
	specBytes := appendMerged(t, marshalOrFail(t, &spec), specContainers, a.Spec.Containers, b.Spec.Containers)
	statusBytes := marshalOrFail(t, &status)
	statusBytes = appendMerged(t, statusBytes, statusContainerStatuses, a.Status.ContainerStatuses, b.Status.ContainerStatuses)
	statusBytes = appendMerged(t, statusBytes, statusInitContainerStatuses, a.Status.InitContainerStatuses, b.Status.InitContainerStatuses)
	statusBytes = appendMerged(t, statusBytes, statusConditions, a.Status.Conditions, b.Status.Conditions)
	statusBytes = appendMerged(t, statusBytes, statusPodIPs, a.Status.PodIPs, b.Status.PodIPs)
	var out []byte
	for _, f := range []struct {
		num  protowire.Number
		data []byte
	}{{podMetadata, metaBytes}, {podSpec, specBytes}, {podStatus, statusBytes}} {
		out = protowire.AppendBytes(protowire.AppendTag(out, f.num, protowire.BytesType), f.data)
	}
	return out
}

// appendMerged appends to msg field num holding as[i] then bs[i] for each
// element of as (alone past the end of bs).
func appendMerged[T any, PT interface {
	*T
	Marshal() ([]byte, error)
}](t testing.TB, msg []byte, num protowire.Number, as, bs []T) []byte {
	for i := range as {
		v := marshalOrFail(t, PT(&as[i]))
		if i < len(bs) {
			v = append(v, marshalOrFail(t, PT(&bs[i]))...)
		}
		msg = protowire.AppendBytes(protowire.AppendTag(msg, num, protowire.BytesType), v)
	}
	return msg
}

func marshalOrFail(t testing.TB, m interface{ Marshal() ([]byte, error) }) []byte {
	t.Helper()
	data, err := m.Marshal()
	if err != nil {
		t.Fatalf("marshaling a %T: %v", m, err)
	}
	return data
}

// TestPodWireSimulatorPods: the simulator's Pods, as the scale bench loads
// them into a real server.
func TestPodWireSimulatorPods(t *testing.T) {
	t.Parallel()
	lists := mem.NewStringLists()
	seen := map[string]int{}
	for i, data := range simulatorPods(t, 300) {
		pod, slim := checkPodWire(t, fmt.Sprintf("simulator Pod %d", i), data, lists)
		tallyCases(seen, pod, slim)
	}
	t.Logf("cases: %v", seen)
}

// checkPodWire decodes data both ways and fails t unless the Pods are
// reflect.DeepEqual; it returns the Pod and the slim Pod. The buffer
// decodePod read is overwritten before the comparison: nothing the Pod
// keeps may alias it.
func checkPodWire(t testing.TB, what string, data []byte, lists *mem.StringLists) (*corev1.Pod, *model.Pod) {
	t.Helper()
	var pod corev1.Pod
	if err := pod.Unmarshal(data); err != nil {
		t.Fatalf("%s: the generated decoder: %v", what, err)
	}
	want := model.SlimPodSharing(&pod, lists)
	buf := slices.Clone(data)
	got, rv, err := decodePod(buf, lists, nil)
	if err != nil {
		t.Fatalf("%s: decodePod: %v", what, err)
	}
	for i := range buf {
		buf[i] = 0xa5
	}
	if rv != pod.ResourceVersion {
		t.Errorf("%s: resourceVersion %q, want %q", what, rv, pod.ResourceVersion)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decodePod differs from SlimPodSharing:\n%s", what, podDiff(want, got))
	}
	return &pod, want
}

// podDiff shows where two Pods differ: the path of the first difference
// reflect.DeepEqual would find, unexported fields included (Labels,
// Quantity). go-cmp is in the module graph but not in go.mod, and this
// change adds no requirement.
func podDiff(want, got *model.Pod) string {
	if d := firstDiff("Pod", reflect.ValueOf(want), reflect.ValueOf(got)); d != "" {
		return d
	}
	return fmt.Sprintf("no difference found in\nwant %#v\n got %#v", want, got)
}

// firstDiff is the first difference between want and got under path, ""
// when there is none.
func firstDiff(path string, want, got reflect.Value) string {
	if want.Kind() != got.Kind() {
		return fmt.Sprintf("%s: want kind %s, got %s", path, want.Kind(), got.Kind())
	}
	switch want.Kind() {
	case reflect.Pointer, reflect.Interface:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				return fmt.Sprintf("%s: want nil %v, got nil %v", path, want.IsNil(), got.IsNil())
			}
			return ""
		}
		return firstDiff(path, want.Elem(), got.Elem())
	case reflect.Struct:
		for i := range want.NumField() {
			if d := firstDiff(path+"."+want.Type().Field(i).Name, want.Field(i), got.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice, reflect.Array:
		if want.Kind() == reflect.Slice && want.IsNil() != got.IsNil() {
			return fmt.Sprintf("%s: want nil %v (len %d), got nil %v (len %d)", path, want.IsNil(), want.Len(), got.IsNil(), got.Len())
		}
		for i := range min(want.Len(), got.Len()) {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), want.Index(i), got.Index(i)); d != "" {
				return d
			}
		}
		if want.Len() != got.Len() {
			return fmt.Sprintf("%s: want len %d, got %d", path, want.Len(), got.Len())
		}
		return ""
	case reflect.Map:
		if want.Len() != got.Len() || want.IsNil() != got.IsNil() {
			return fmt.Sprintf("%s: want %d entries (nil %v), got %d (nil %v)", path, want.Len(), want.IsNil(), got.Len(), got.IsNil())
		}
		return "" // the model has no maps; a probe's are compared by len only
	case reflect.String:
		if want.String() != got.String() {
			return fmt.Sprintf("%s: want %q, got %q", path, want.String(), got.String())
		}
	case reflect.Bool:
		if want.Bool() != got.Bool() {
			return fmt.Sprintf("%s: want %v, got %v", path, want.Bool(), got.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if want.Int() != got.Int() {
			return fmt.Sprintf("%s: want %d, got %d", path, want.Int(), got.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if want.Uint() != got.Uint() {
			return fmt.Sprintf("%s: want %d, got %d", path, want.Uint(), got.Uint())
		}
	}
	return ""
}

func marshalPod(t testing.TB, p *corev1.Pod) []byte {
	t.Helper()
	data, err := p.Marshal()
	if err != nil {
		t.Fatalf("marshaling a Pod: %v", err)
	}
	return data
}

// podFiller fills Pods at random in the style of Kubernetes' round-trip
// fuzzers, with custom funcs where a random value would not survive
// protobuf (Quantity) and where a random value would almost never reach
// the cases SlimPodSharing tells apart (shapePod).
func podFiller(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(.2).NumElements(0, 3).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			// Its fields are unexported, so randfill would leave it zero.
			suffixes := []string{"", "m", "k", "Mi", "Gi", "M"}
			*q = resource.MustParse(strconv.FormatInt(c.Int63n(1<<20), 10) + suffixes[c.Intn(len(suffixes))])
		},
		func(m *map[string]string, c randfill.Continue) {
			n := c.Intn(4)
			if n == 0 && c.Bool() {
				*m = nil
				return
			}
			*m = make(map[string]string, n)
			for range n {
				(*m)["k-"+c.String(10)] = c.String(0) // no empty keys
			}
		},
		func(p *corev1.Pod, c randfill.Continue) {
			c.FillNoCustom(p)
			shapePod(p, c)
		},
	)
}

func randomPod(f *randfill.Filler) *corev1.Pod {
	p := &corev1.Pod{}
	f.Fill(p)
	return p
}

// shapePod redraws the fields SlimPodSharing reads so that every case it
// tells apart comes up often: container names shared by spec and status,
// ended and running containers, memory limits or none, init statuses all
// completed or not, each kind of condition, podIPs equal to the podIP or
// not, labels equal to owner names or to one another.
func shapePod(p *corev1.Pod, c randfill.Continue) {
	names := []string{osv1.ContainerSandbox, "main", "sidecar", "init"}
	pickName := func() string {
		if c.Intn(6) == 0 {
			return c.String(8)
		}
		return names[c.Intn(len(names))]
	}
	p.Namespace = []string{"default", "tenant-a", c.String(12)}[c.Intn(3)]
	for i := range p.OwnerReferences {
		p.OwnerReferences[i].Name = []string{"bsbx-" + strconv.Itoa(c.Intn(3)), strings.Repeat("o", 30), ""}[c.Intn(3)]
	}
	p.Labels = randomLabels(p, c)
	p.Spec.RestartPolicy = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyNever, ""}[c.Intn(3)]
	for i := range p.Spec.Containers {
		ct := &p.Spec.Containers[i]
		ct.Name = pickName()
		switch c.Intn(3) {
		case 0:
			ct.Resources.Limits = nil
		case 1:
			delete(ct.Resources.Limits, corev1.ResourceMemory)
		default:
			if ct.Resources.Limits == nil {
				ct.Resources.Limits = corev1.ResourceList{}
			}
			ct.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(strconv.Itoa(1+c.Intn(4096)) + "Mi")
		}
	}
	p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, ""}[c.Intn(5)]
	for i := range p.Status.ContainerStatuses {
		s := &p.Status.ContainerStatuses[i]
		s.Name = pickName()
		shapeStatus(s, c)
	}
	shapeInitStatuses(p.Status.InitContainerStatuses, c)
	for i := range p.Status.Conditions {
		cd := &p.Status.Conditions[i]
		cd.Type = []corev1.PodConditionType{corev1.PodReady, corev1.DisruptionTarget, corev1.PodScheduled, corev1.ContainersReady,
			corev1.PodInitialized, corev1.PodConditionType(c.String(6))}[c.Intn(6)]
		cd.Status = []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown, ""}[c.Intn(4)]
	}
	shapePodIPs(&p.Status, c)
	switch c.Intn(3) {
	case 0:
		p.Status.Reason, p.Status.Message = "", ""
	case 1:
		p.Status.Message = ""
	}
}

// randomLabels: short and long values, some equal to an owner's name or
// to another label's value, some empty.
func randomLabels(p *corev1.Pod, c randfill.Continue) map[string]string {
	n := c.Intn(7)
	if n == 0 {
		return nil
	}
	long := strings.Repeat("v", 25+c.Intn(10))
	m := make(map[string]string, n)
	for range n {
		var v string
		switch c.Intn(5) {
		case 0:
			v = c.String(10)
		case 1:
			v = long
		case 2:
			if len(p.OwnerReferences) > 0 {
				v = p.OwnerReferences[c.Intn(len(p.OwnerReferences))].Name
			}
		case 3:
			v = strings.Repeat("w", 20+c.Intn(10)) // around the interning limit
		}
		m["app.example.com/"+c.String(6)] = v
	}
	return m
}

func shapeStatus(s *corev1.ContainerStatus, c randfill.Continue) {
	s.RestartCount = []int32{0, 0, 1, 7}[c.Intn(4)]
	s.State = randomState(c)
	s.LastTerminationState = randomState(c)
}

// randomState: no state, or one of waiting, running and terminated.
func randomState(c randfill.Continue) corev1.ContainerState {
	var st corev1.ContainerState
	switch c.Intn(4) {
	case 1:
		st.Waiting = &corev1.ContainerStateWaiting{}
		c.Fill(st.Waiting)
	case 2:
		st.Running = &corev1.ContainerStateRunning{}
		c.Fill(st.Running)
	case 3:
		st.Terminated = &corev1.ContainerStateTerminated{}
		c.Fill(st.Terminated)
		st.Terminated.ExitCode = []int32{0, 0, 1, 137, -1}[c.Intn(5)]
	}
	return st
}

// shapeInitStatuses: all completed (dropped), all but one, or random.
func shapeInitStatuses(ss []corev1.ContainerStatus, c randfill.Continue) {
	mode := c.Intn(3)
	for i := range ss {
		s := &ss[i]
		if mode == 2 {
			shapeStatus(s, c)
			continue
		}
		s.RestartCount = 0
		s.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
	}
	if mode == 1 && len(ss) > 0 {
		s := &ss[c.Intn(len(ss))]
		switch c.Intn(3) {
		case 0:
			s.State.Terminated.ExitCode = 1
		case 1:
			s.RestartCount = 1
		default:
			s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}
	}
}

func shapePodIPs(s *corev1.PodStatus, c randfill.Continue) {
	s.PodIP = []string{"10.0.0.1", "", c.String(10)}[c.Intn(3)]
	other := corev1.PodIP{IP: "fd00::" + strconv.Itoa(c.Intn(100))}
	switch c.Intn(5) {
	case 0:
		s.PodIPs = nil
	case 1:
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	case 2:
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}, other}
	case 3:
		s.PodIPs = []corev1.PodIP{other}
	}
}

// simulatorPods returns n of the simulator's Pods as the server sends them
// (protobuf), as wireFleet (memory_bench_test.go) makes them.
func simulatorPods(tb testing.TB, n int) [][]byte {
	tb.Helper()
	pods, _ := wireFleet(tb, n)
	return pods
}

// simulatorCorePods is simulatorPods decoded the ordinary way.
func simulatorCorePods(tb testing.TB, n int) []*corev1.Pod {
	tb.Helper()
	var pods []*corev1.Pod
	for _, data := range simulatorPods(tb, n) {
		p := &corev1.Pod{}
		if err := p.Unmarshal(data); err != nil {
			tb.Fatal(err)
		}
		pods = append(pods, p)
	}
	return pods
}

// stampAsServer sets what the server sets and the fake clients do not: uid,
// resourceVersion, creationTimestamp, the owner's uid (the engine puts its
// BatchSandbox's there), managedFields.
func stampAsServer(m *metav1.ObjectMeta, rv int) {
	m.UID = serverUID(m.Namespace, m.Name)
	m.ResourceVersion = strconv.Itoa(rv)
	if m.CreationTimestamp.IsZero() {
		m.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC))
	}
	for i := range m.OwnerReferences {
		m.OwnerReferences[i].UID = serverUID(m.Namespace, m.OwnerReferences[i].Name)
	}
	m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "opensandbox-controller", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}
}

// protobufInfo is client-go's protobuf serializer, the one the apiserver
// negotiates too (same codec factory).
func protobufInfo(t testing.TB) runtime.SerializerInfo {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok || info.StreamSerializer == nil {
		t.Fatal("no protobuf serializer in client-go's scheme")
	}
	return info
}

// encodeObject encodes obj as the apiserver does a response body: the
// protobuf serializer behind a versioning encoder (which sets the kind).
func encodeObject(t testing.TB, s runtime.Encoder, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(s, corev1.SchemeGroupVersion).Encode(obj, &buf); err != nil {
		t.Fatalf("encoding %T: %v", obj, err)
	}
	return buf.Bytes()
}

// TestDecodePodList: a PodList as the apiserver encodes it, plainly and
// with the streaming collections encoding (the default of recent servers).
func TestDecodePodList(t *testing.T) {
	t.Parallel()
	pods := simulatorPods(t, 20)
	f := podFiller(3)
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "4001234", Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ",
		RemainingItemCount: new(int64(1500))}}
	for _, data := range pods {
		var p corev1.Pod
		if err := p.Unmarshal(data); err != nil {
			t.Fatal(err)
		}
		list.Items = append(list.Items, p)
	}
	for range 20 {
		list.Items = append(list.Items, *randomPod(f))
	}
	for _, streamingEncoding := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streamingEncoding), func(t *testing.T) {
			s := protobuf.NewSerializerWithOptions(scheme.Scheme, scheme.Scheme,
				protobuf.SerializerOptions{StreamingCollectionsEncoding: streamingEncoding})
			body := encodeObject(t, s, list)
			apiVersion, kind, raw, err := decodeEnvelope(body)
			if err != nil {
				t.Fatal(err)
			}
			if apiVersion != "v1" || kind != "PodList" {
				t.Fatalf("envelope names %q %q, want v1 PodList", apiVersion, kind)
			}
			obj, _, err := s.Decode(body, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := obj.(*corev1.PodList)
			lists := mem.NewStringLists()
			items, meta, err := decodePodList(raw, lists)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(meta, want.ListMeta) {
				t.Errorf("list metadata %#v, want %#v", meta, want.ListMeta)
			}
			if len(items) != len(want.Items) || cap(items) != len(items) {
				t.Fatalf("%d items (capacity %d), want %d", len(items), cap(items), len(want.Items))
			}
			for i := range items {
				if w := model.SlimPodSharing(&want.Items[i], lists); !reflect.DeepEqual(items[i], w) {
					t.Fatalf("item %d:\n%s", i, podDiff(w, items[i]))
				}
			}
		})
	}
}

func TestDecodePodListEmpty(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	_, _, raw, err := decodeEnvelope(encodeObject(t, info.Serializer, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}))
	if err != nil {
		t.Fatal(err)
	}
	items, meta, err := decodePodList(raw, nil)
	if err != nil || len(items) != 0 || meta.ResourceVersion != "7" {
		t.Fatalf("decodePodList = %v, %#v, %v; want no items, resourceVersion 7", items, meta, err)
	}
}

// TestEnvelope: a Pod as the apiserver encodes a response, and envelopes
// that are not one.
func TestEnvelope(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	pod := &corev1.Pod{}
	if err := pod.Unmarshal(simulatorPods(t, 1)[0]); err != nil {
		t.Fatal(err)
	}
	body := encodeObject(t, info.Serializer, pod)
	apiVersion, kind, raw, err := decodeEnvelope(body)
	if err != nil {
		t.Fatal(err)
	}
	if apiVersion != "v1" || kind != "Pod" {
		t.Fatalf("envelope names %q %q, want v1 Pod", apiVersion, kind)
	}
	if !aliases(body, raw) {
		t.Fatal("raw is a copy, not part of the body")
	}
	got, rv, err := decodePod(raw, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := model.SlimPod(pod); !reflect.DeepEqual(got, want) || rv != pod.ResourceVersion {
		t.Fatalf("Pod from the envelope (resourceVersion %q):\n%s", rv, podDiff(want, got))
	}

	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"no magic", body[len(protobufMagic):]},
		{"magic only", body[:len(protobufMagic)]},
		{"JSON", []byte(`{"kind":"Pod"}`)},
		{"truncated", body[:len(body)-1]},
		{"wrong wire type", append([]byte(protobufMagic), byte(protowire.EncodeTag(unknownRaw, protowire.VarintType)), 1)},
	} {
		if _, _, _, err := decodeEnvelope(tc.data); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// aliases: sub is part of buf (changing it changes buf).
func aliases(buf, sub []byte) bool {
	before := slices.Clone(buf)
	sub[0]++
	changed := !bytes.Equal(before, buf)
	sub[0]--
	return changed
}

// TestWatchEvent reads a watch stream framed and encoded as the apiserver
// writes one (handlers/watch.go and response.go's watchEncoder: the event
// through the stream serializer, its object through the ordinary one,
// each event a length-delimited frame), checks that client-go's own
// decoder reads the same events, and that decodeWatchEvent, decodeEnvelope
// and decodePod read them alike.
func TestWatchEvent(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	_, events := serverWatchEvents(t)
	stream := encodeWatchStream(t, info, events)

	// client-go's reading, as rest.Request.Watch sets it up.
	dec := restwatch.NewDecoder(streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream))),
		info.StreamSerializer.Serializer), scheme.Codecs.UniversalDeserializer())
	frames := readFrames(t, info, stream)
	if len(frames) != len(events) {
		t.Fatalf("%d frames, want %d", len(frames), len(events))
	}
	for i, frame := range frames {
		wantType, wantObj, err := dec.Decode()
		if err != nil {
			t.Fatalf("event %d: client-go: %v", i, err)
		}
		typ, env, err := decodeWatchEvent(frame)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if typ != string(wantType) {
			t.Errorf("event %d: type %q, want %q", i, typ, wantType)
		}
		checkEventObject(t, i, env, wantObj)
	}
}

// serverWatchEvents is a Pod watch as an apiserver sends one: two Pods
// added, modified and deleted, the initial-events-end bookmark (at
// resourceVersion 4009999) and a 410 Expired ERROR.
func serverWatchEvents(t *testing.T) ([]*corev1.Pod, []watch.Event) {
	t.Helper()
	pods := simulatorCorePods(t, 2)
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "4009999",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}
	return pods, []watch.Event{
		{Type: watch.Added, Object: pods[0]}, {Type: watch.Modified, Object: pods[1]}, {Type: watch.Deleted, Object: pods[0]},
		{Type: watch.Bookmark, Object: bookmark}, {Type: watch.Error, Object: gone},
	}
}

// checkEventObject: the enveloped object of event i is wantObj (a Pod or
// a Status).
func checkEventObject(t *testing.T, i int, env []byte, wantObj runtime.Object) {
	t.Helper()
	apiVersion, kind, raw, err := decodeEnvelope(env)
	if err != nil {
		t.Fatalf("event %d: %v", i, err)
	}
	switch want := wantObj.(type) {
	case *corev1.Pod:
		if apiVersion != "v1" || kind != "Pod" {
			t.Fatalf("event %d: object %q %q, want v1 Pod", i, apiVersion, kind)
		}
		got, rv, err := decodePod(raw, nil, nil)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if w := model.SlimPod(want); !reflect.DeepEqual(got, w) || rv != want.ResourceVersion {
			t.Fatalf("event %d: resourceVersion %q, want %q\n%s", i, rv, want.ResourceVersion, podDiff(w, got))
		}
	case *metav1.Status:
		if kind != "Status" {
			t.Fatalf("event %d: object %q %q, want a Status", i, apiVersion, kind)
		}
		var got metav1.Status
		if err := got.Unmarshal(raw); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		got.TypeMeta = want.TypeMeta // set by the decoder from the envelope
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("event %d: Status %#v, want %#v", i, got, want)
		}
	default:
		t.Fatalf("event %d: client-go decoded a %T", i, wantObj)
	}
}

// encodeWatchStream writes events as the apiserver's watchEncoder does.
func encodeWatchStream(t *testing.T, info runtime.SerializerInfo, events []watch.Event) []byte {
	t.Helper()
	var stream bytes.Buffer
	fw := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	for _, ev := range events {
		out := &metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: encodeObject(t, info.Serializer, ev.Object)}}
		if _, err := fw.Write(encodeObject(t, info.StreamSerializer.Serializer, out)); err != nil {
			t.Fatal(err)
		}
	}
	return stream.Bytes()
}

// readFrames splits a stream with client-go's frame reader.
func readFrames(t *testing.T, info runtime.SerializerInfo, stream []byte) [][]byte {
	t.Helper()
	fr := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
	var frames [][]byte
	for {
		buf := make([]byte, 1<<20)
		n, err := fr.Read(buf)
		if errors.Is(err, io.EOF) {
			return frames
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, buf[:n])
	}
}

// TestWatchEventEnveloped: a WatchEvent wrapped like any object (the
// apiserver does not send one, but it is unambiguous and read alike).
func TestWatchEventEnveloped(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	obj := encodeObject(t, info.Serializer, &metav1.Status{Status: metav1.StatusFailure, Code: 500})
	frame := encodeObject(t, info.Serializer, &metav1.WatchEvent{Type: string(watch.Error), Object: runtime.RawExtension{Raw: obj}})
	if !bytes.HasPrefix(frame, []byte(protobufMagic)) {
		t.Fatal("the ordinary serializer wrote no envelope")
	}
	typ, env, err := decodeWatchEvent(frame)
	if err != nil || typ != string(watch.Error) || !bytes.Equal(env, obj) {
		t.Fatalf("decodeWatchEvent = %q, %q, %v", typ, env, err)
	}
}

func TestWatchEventInvalid(t *testing.T) {
	t.Parallel()
	info := protobufInfo(t)
	valid := encodeObject(t, info.StreamSerializer.Serializer, &metav1.WatchEvent{Type: string(watch.Added), Object: runtime.RawExtension{Raw: []byte("x")}})
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"unknown type", encodeObject(t, info.StreamSerializer.Serializer, &metav1.WatchEvent{Type: "CREATED"})},
		{"no type", nil},
		{"truncated", valid[:len(valid)-1]},
		{"wrong wire type", protowire.AppendVarint(protowire.AppendTag(nil, watchEventObject, protowire.VarintType), 1)},
		{"bad envelope", []byte(protobufMagic)},
	} {
		if _, _, err := decodeWatchEvent(tc.frame); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestDecodePodMalformed: every truncation of valid Pods, random byte
// changes and wrong wire types return an error or a Pod, never panic.
func TestDecodePodMalformed(t *testing.T) {
	t.Parallel()
	f := podFiller(4)
	samples := simulatorPods(t, 2)
	for range 5 {
		samples = append(samples, marshalPod(t, randomPod(f)))
	}
	lists := mem.NewStringLists()
	for _, data := range samples {
		for n := range len(data) {
			decodePod(data[:n], lists, nil) //nolint:errcheck // only must not panic
		}
	}
	rnd := rand.New(rand.NewPCG(5, 5))
	for range 3000 {
		data := slices.Clone(samples[rnd.IntN(len(samples))])
		for range 1 + rnd.IntN(4) {
			data[rnd.IntN(len(data))] = byte(rnd.IntN(256))
		}
		decodePod(data, lists, nil) //nolint:errcheck // only must not panic
	}
	// Wrong wire types, which the generated decoder rejects too.
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"metadata as varint", protowire.AppendVarint(protowire.AppendTag(nil, podMetadata, protowire.VarintType), 1)},
		{"name as varint", podWithMeta(protowire.AppendVarint(protowire.AppendTag(nil, metaName, protowire.VarintType), 1))},
		{"grace as bytes", podWithMeta(protowire.AppendBytes(protowire.AppendTag(nil, metaDeletionGracePeriodSeconds, protowire.BytesType), []byte("1")))},
		{"truncated length", podWithMeta(protowire.AppendTag(nil, metaLabels, protowire.BytesType))},
		{"end group", protowire.AppendTag(nil, 20, protowire.EndGroupType)},
		{"field 0", protowire.AppendVarint(protowire.AppendTag(nil, 0, protowire.VarintType), 1)},
	} {
		p, _, err := decodePod(tc.data, nil, nil)
		if err == nil || p != nil {
			t.Errorf("%s: decodePod = %v, %v; want an error", tc.name, p, err)
		} else if !strings.HasPrefix(err.Error(), "decoding a Pod: ") {
			t.Errorf("%s: error %q lacks its context", tc.name, err)
		}
	}
}

// podWithMeta is a Pod message whose metadata is meta.
func podWithMeta(meta []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, podMetadata, protowire.BytesType), meta)
}

// TestDecodePodUnknownFields: fields the decoder does not know, of every
// wire type, are skipped.
func TestDecodePodUnknownFields(t *testing.T) {
	t.Parallel()
	data := simulatorPods(t, 1)[0]
	extra := protowire.AppendVarint(protowire.AppendTag(nil, 1000, protowire.VarintType), 7)
	extra = protowire.AppendFixed32(protowire.AppendTag(extra, 1001, protowire.Fixed32Type), 7)
	extra = protowire.AppendFixed64(protowire.AppendTag(extra, 1002, protowire.Fixed64Type), 7)
	extra = protowire.AppendBytes(protowire.AppendTag(extra, 1003, protowire.BytesType), []byte("x"))
	extra = protowire.AppendTag(extra, 1004, protowire.StartGroupType)
	extra = protowire.AppendTag(extra, 1004, protowire.EndGroupType)
	checkPodWire(t, "unknown fields", append(slices.Clone(data), extra...), nil)
}

// FuzzDecodePod: whatever the bytes, decodePod does not panic, and when
// both decoders accept them they agree.
func FuzzDecodePod(f *testing.F) {
	for _, data := range simulatorPods(f, 2) {
		f.Add(data)
	}
	fill := podFiller(6)
	for range 3 {
		f.Add(marshalPod(f, randomPod(fill)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _, err := decodePod(data, nil, nil)
		var pod corev1.Pod
		if err != nil || pod.Unmarshal(data) != nil {
			return
		}
		if want := model.SlimPod(&pod); !reflect.DeepEqual(got, want) {
			t.Fatalf("decodePod differs from SlimPod:\n%s", podDiff(want, got))
		}
	})
}

// BenchmarkDecodePod compares decoding the simulator's Pods straight into
// the model with the generated decoder followed by SlimPodSharing (-benchmem
// for the allocations).
func BenchmarkDecodePod(b *testing.B) {
	pods := simulatorPods(b, 500)
	for _, cached := range []bool{true, false} {
		name := "podwire"
		if !cached {
			name = "podwire-uncached" // each string interned in unique's table
		}
		b.Run(name, func(b *testing.B) {
			lists := mem.NewStringLists()
			var intern *internCache
			if cached {
				intern = &internCache{} // a watch stream's
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			for i := 0; b.Loop(); i++ {
				if _, _, err := decodePod(pods[i%len(pods)], lists, intern); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("unmarshal+slim", func(b *testing.B) {
		lists := mem.NewStringLists()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			p := &corev1.Pod{}
			if err := p.Unmarshal(pods[i%len(pods)]); err != nil {
				b.Fatal(err)
			}
			model.SlimPodSharing(p, lists)
		}
	})
}
