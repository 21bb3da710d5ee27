package execute

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
)

func runningPod(name, uid, ip string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid),
			Labels: map[string]string{osv1.LabelBatchSandboxName: strings.TrimSuffix(name, "-0")}},
		Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "sandbox"}, {Name: "egress"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "sandbox", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "egress", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			}},
	}
}

func with(p *corev1.Pod, f func(*corev1.Pod)) *corev1.Pod {
	p = p.DeepCopy()
	f(p)
	return p
}

func TestCheck(t *testing.T) {
	target := Target{Namespace: "ns", Sandbox: "bsbx/ns/a", Pod: "a-0", UID: "uid-a", IP: "10.0.0.5"}
	healthy := runningPod("a-0", "uid-a", "10.0.0.5")
	stranger := Holder{Namespace: "other", Pod: "b-0", UID: "uid-b", Phase: corev1.PodRunning, Source: "live"}
	now := metav1.Now()
	tests := []struct {
		name    string
		via     Via
		moment  Moment
		live    *corev1.Pod
		holders []Holder
		target  *Target
		// allocation is the pooled sandbox's live allocation.
		allocation *Allocation
		want       []string // violation codes, most dangerous first; nil = OK
	}{
		{name: "healthy kube", via: ViaKube, live: healthy},
		{name: "healthy direct", via: ViaExecdDirect, live: healthy,
			holders: []Holder{{Namespace: "ns", Pod: "a-0", UID: "uid-a", Phase: corev1.PodRunning}}},
		{name: "incident: pod dead, IP taken", via: ViaExecdDirect,
			live: with(healthy, func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
			}),
			holders: []Holder{stranger},
			want:    []string{CodeIPTaken, CodePodNotRunning, CodeContainerNotRunning}},
		{name: "pod gone, IP taken", via: ViaKube, holders: []Holder{stranger}, want: []string{CodeIPTaken, CodePodGone}},
		{name: "pod gone", via: ViaKube, want: []string{CodePodGone}},
		{name: "same-name re-creation", via: ViaKube, live: runningPod("a-0", "uid-a2", "10.0.0.9"), want: []string{CodeUIDChanged}},
		{name: "deleting", via: ViaKube, live: with(healthy, func(p *corev1.Pod) { p.DeletionTimestamp = &now }), want: []string{CodePodDeleting}},
		{name: "pending", via: ViaKube, live: with(healthy, func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }), want: []string{CodePodNotRunning}},
		{name: "ip stale", via: ViaExecd, live: runningPod("a-0", "uid-a", "10.0.0.6"), want: []string{CodeIPStale}},
		{name: "no ip for execd", via: ViaExecd, target: &Target{Namespace: "ns", Pod: "a-0", UID: "uid-a"},
			live: with(healthy, func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "", nil }), want: []string{CodeNotExecReady}},
		{name: "not scheduled for kube", via: ViaKube, live: with(healthy, func(p *corev1.Pod) { p.Spec.NodeName = "" }), want: []string{CodeNotExecReady}},
		{name: "container waiting", via: ViaKube, live: with(healthy, func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		}), want: []string{CodeContainerNotRunning}},
		{name: "unknown container", via: ViaKube, target: &Target{Namespace: "ns", Pod: "a-0", UID: "uid-a", IP: "10.0.0.5", Container: "nope"},
			live: healthy, want: []string{CodeContainerNotRunning}},
		{name: "dead holders do not count", via: ViaExecdDirect, live: healthy,
			holders: []Holder{{Namespace: "x", Pod: "old", UID: "uid-old", Phase: corev1.PodFailed}, {Namespace: "x", Pod: "hn", UID: "uid-hn", Phase: corev1.PodRunning, HostNetwork: true}}},
		{name: "after kube: same uid, pod died meanwhile", via: ViaKube, moment: After,
			live: with(healthy, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })},
		{name: "after kube: re-created", via: ViaKube, moment: After, live: runningPod("a-0", "uid-a2", "10.0.0.5"), want: []string{CodeUIDChanged}},
		{name: "after kube: gone", via: ViaKube, moment: After, want: []string{CodePodGone}},
		{name: "after direct: address taken", via: ViaExecdDirect, moment: After,
			live: with(healthy, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), holders: []Holder{stranger},
			want: []string{CodeIPTaken, CodePodNotRunning}},
		{name: "after direct: fine", via: ViaExecdDirect, moment: After, live: healthy},
		{name: "owned by another sandbox", via: ViaKube, live: with(healthy, func(p *corev1.Pod) {
			p.Labels = nil
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "BatchSandbox", Name: "b"}}
		}), want: []string{CodePodGone}},
		{name: "labelled for another sandbox", via: ViaKube, live: with(healthy, func(p *corev1.Pod) {
			p.Labels[osv1.LabelBatchSandboxName] = "b"
		}), want: []string{CodePodGone}},
		{name: "neither owned nor labelled", via: ViaKube, live: with(healthy, func(p *corev1.Pod) { p.Labels = nil }), want: []string{CodePodGone}},
		{name: "pooled: released", via: ViaKube, target: &Target{Namespace: "ns", Sandbox: "bsbx/ns/a", Pod: "a-0", UID: "uid-a", IP: "10.0.0.5", Pooled: true},
			allocation: &Allocation{Pods: []string{"other"}}, live: healthy, want: []string{CodePodGone}},
		{name: "pooled: sandbox deleted", via: ViaKube, target: &Target{Namespace: "ns", Sandbox: "bsbx/ns/a", Pod: "a-0", UID: "uid-a", IP: "10.0.0.5", Pooled: true},
			live: healthy, want: []string{CodePodGone}},
		{name: "pooled: still allocated", via: ViaKube, target: &Target{Namespace: "ns", Sandbox: "bsbx/ns/a", Pod: "a-0", UID: "uid-a", IP: "10.0.0.5", Pooled: true},
			allocation: &Allocation{Pods: []string{"a-0"}}, live: healthy},
		{name: "hostNetwork over execd", via: ViaExecd, live: with(healthy, func(p *corev1.Pod) { p.Spec.HostNetwork = true }), want: []string{CodeHostNetwork}},
		{name: "hostNetwork over kube", via: ViaKube, live: with(healthy, func(p *corev1.Pod) { p.Spec.HostNetwork = true })},
		{name: "expected IP differs", via: ViaKube, target: &Target{Namespace: "ns", Sandbox: "bsbx/ns/a", Pod: "a-0", UID: "uid-a", IP: "10.0.0.5", ExpectIP: "10.0.0.4"},
			live: healthy, want: []string{CodeIPStale}},
		{name: "re-creation holding the address is UID_CHANGED", via: ViaExecdDirect, live: runningPod("a-0", "uid-a2", "10.0.0.5"),
			holders: []Holder{{Namespace: "ns", Pod: "a-0", UID: "uid-a2", Phase: corev1.PodRunning}}, want: []string{CodeUIDChanged}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := target
			if tc.target != nil {
				tg = *tc.target
			}
			in := CheckInput{Target: tg, Via: tc.via, Live: tc.live, Holders: tc.holders, Moment: tc.moment, Allocation: tc.allocation}
			if tc.via == ViaExecdDirect {
				in.Address = tg.IP
			}
			v := Check(in)
			var got []string
			for _, vi := range v.Violations {
				got = append(got, vi.Code)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("violations %v, want %v (%s)", got, tc.want, v.Message())
			}
			if v.OK() != (len(tc.want) == 0) || len(v.Evidence) == 0 {
				t.Fatalf("OK=%t evidence=%v", v.OK(), v.Evidence)
			}
		})
	}
}

func TestMarkerWriter(t *testing.T) {
	const marker = "__end_x_"
	tests := []struct {
		name   string
		chunks []string
		out    string
		code   int
		found  bool
	}{
		{"plain", []string{"hello\n", marker + "0\n"}, "hello\n", 0, true},
		{"no newline before marker", []string{"abc" + marker + "3\n"}, "abc", 3, true},
		{"split everywhere", []string{"a", "b__e", "nd_x", "_", "12", "\r", "\n"}, "ab", 12, true},
		{"terminal line end", []string{"x\r\n" + marker + "7\r\n"}, "x\r\n", 7, true},
		{"never arrives", []string{"partial out", "put __en"}, "partial output __en", 0, false},
		{"look-alike passes", []string{"__end_y_3\n"}, "__end_y_3\n", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			m := &markerWriter{w: &out, marker: []byte(marker)}
			for _, c := range tc.chunks {
				if n, err := m.Write([]byte(c)); err != nil || n != len(c) {
					t.Fatalf("Write(%q) = %d, %v", c, n, err)
				}
			}
			m.flush()
			code, found := m.exitCode()
			if out.String() != tc.out || code != tc.code || found != tc.found {
				t.Fatalf("out %q code %d found %t; want %q %d %t", out.String(), code, found, tc.out, tc.code, tc.found)
			}
		})
	}
}

func TestShellJoinAndWrap(t *testing.T) {
	got := WrapWithMarker([]string{"sh", "-c", "exit 3"}, "M_")
	want := []string{"sh", "-c", "( sh -c 'exit 3' ); echo M_$?"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
	if q := ShellJoin([]string{"it's"}); q != `'it'\''s'` {
		t.Fatalf("quote: %s", q)
	}
}

// A one-shot reader cannot see the UID a sandbox was first bound to; the
// model's POD_RECREATED notice for the slot's Pod reaches the caller as
// inferred evidence, with the commands that confirm or refuse it.
func TestRecreationHint(t *testing.T) {
	sb := &model.Sandbox{Key: "bsbx/ns/sbx", Meta: &model.ObjectMeta{Name: "sbx", Namespace: "ns"},
		Slots: []model.Slot{{PodName: "sbx-0", Identity: model.IdentityOK}}}
	if ev := recreationHint(sb, &sb.Slots[0]); ev != nil {
		t.Errorf("no notice, yet a hint: %v", ev)
	}
	sb.Notices = []model.Notice{{Code: model.CodePodRecreated, Pod: "other-0", Message: "Pod other-0 was re-created"},
		{Code: model.CodePodRecreated, Pod: "sbx-0", Message: "Pod sbx-0 was created 20m after its sandbox"}}
	ev := recreationHint(sb, &sb.Slots[0])
	if len(ev) != 1 || ev[0].Kind != model.Inferred || !strings.Contains(ev[0].Text, "sbx-0 was created 20m") ||
		!strings.Contains(ev[0].Text, "reason=SuccessfulCreate") || !strings.Contains(ev[0].Text, "--expect-uid") {
		t.Fatalf("hint %v", ev)
	}
}
