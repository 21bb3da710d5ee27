package output_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
	"github.com/sandscope/sandscope/output"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// hostile is what a tenant can write into a label value or a message:
// escape sequences that would set the terminal's title and clear it.
const hostile = "\x1b]0;pwned\x07\x1b[2J"

// fixture is a small fleet: a BatchSandbox whose IP another Pod took, an
// agent Sandbox running, a plain Pod sandbox, a Pool, and two findings.
func fixture() (*fleet.Snapshot, []model.Finding) { return fixtureWithReason("OOMKilled") }

// fixtureWithReason is fixture with sbx-a-0's termination reason, which
// the Pod's own kubelet writes (and a tenant can choose) as reason.
func fixtureWithReason(reason string) (*fleet.Snapshot, []model.Finding) {
	created := metav1.NewTime(now.Add(-90 * time.Minute))
	pod := func(ns, name, ip string, st corev1.ContainerState, restarts int32) *model.Pod {
		return &model.Pod{
			ObjectMeta: *model.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name),
				Labels: model.LabelsFrom(map[string]string{"team": "rl"})}.WithCreated(created.Time),
			Spec: model.PodSpec{NodeName: "node-1", Containers: []model.Container{{Name: "sandbox", Image: "python:3.12"}}},
			Status: model.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
				ContainerStatuses: []model.ContainerStatus{{Name: "sandbox", State: st, RestartCount: restarts}}},
		}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	a0 := pod("team-rl", "sbx-a-0", "", corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: 137}}, 0)
	a0.Status.Phase = corev1.PodFailed
	b0 := pod("team-rl", "sbx-b-0", "10.0.0.7", running, 2)
	c := pod("team-rl", "plain-c", "10.0.0.9", running, 0)
	expire := now.Add(30 * time.Minute)
	taken := model.Notice{Code: model.CodeIPTaken, Severity: model.SeverityError, Pod: "sbx-a-0",
		Message:  "recorded IP 10.0.0.7 is held by Pod sbx-b-0 " + hostile,
		Evidence: []model.Evidence{{Kind: model.Observed, Text: "engine records 10.0.0.7"}}}
	sbs := []*model.Sandbox{
		{Key: "agent/team-rl/sbx-b", EnginePhase: "Ready", State: model.StateRunning, Restarts: 2,
			Meta: model.ObjectMeta{Name: "sbx-b", Namespace: "team-rl", UID: "uid-b", Labels: model.LabelsFrom(map[string]string{"team": "rl"}),
				OwnerReferences: []model.OwnerReference{{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: model.KindSandboxClaim, Name: "claim-b"}}}.WithCreated(created.Time),
			Slots: []model.Slot{{RecordedIP: "10.0.0.7", PodName: "sbx-b-0", BoundUID: "uid-sbx-b-0", Pod: b0, Identity: model.IdentityOK}}},
		{Key: "bsbx/team-rl/sbx-a", EnginePhase: "Succeed", State: model.StateDead, Pool: "warm", ExpireTime: &expire,
			Meta: model.ObjectMeta{Name: "sbx-a", Namespace: "team-rl", UID: "uid-a",
				Labels: model.LabelsFrom(map[string]string{"team": "rl", "note": "x" + hostile})}.WithCreated(created.Time),
			Slots: []model.Slot{{RecordedIP: "10.0.0.7", PodName: "sbx-a-0", BoundUID: "uid-sbx-a-0", Pod: a0, Identity: model.IdentityIPTaken,
				Holder: &model.Holder{Namespace: "team-rl", Pod: "sbx-b-0", UID: "uid-sbx-b-0", Sandbox: "agent/team-rl/sbx-b", Since: now.Add(-time.Minute)}}},
			Notices: []model.Notice{taken}},
		{Key: "pod/team-rl/plain-c", EnginePhase: "Running", State: model.StateRunning,
			Meta:  model.ObjectMeta{Name: "plain-c", Namespace: "team-rl", UID: "uid-plain-c", Labels: model.LabelsFrom(map[string]string{"team": "eval"})}.WithCreated(created.Time),
			Slots: []model.Slot{{RecordedIP: "10.0.0.9", PodName: "plain-c", Pod: c, Identity: model.IdentityOK}}},
	}
	pool := &model.Pool{ObjectMeta: *model.ObjectMeta{Name: "warm", Namespace: "team-rl"}.WithCreated(created.Time),
		Total: 5, Allocated: 4, Available: 1, BufferMin: 1, BufferMax: 2, PoolMin: 1, PoolMax: 10, Revision: "abc123"}
	snap := fleet.NewSnapshot(1, model.SourceStatus{Namespaces: []string{"team-rl"}, Synced: true}, sbs, []*model.Pod{c, a0, b0}, []*model.Pool{pool})
	snap.WarmPools = []*model.WarmPool{{ObjectMeta: *model.ObjectMeta{Name: "agents-warm", Namespace: "team-rl"}.WithCreated(created.Time),
		Template: "python", Desired: 3, Replicas: 3, ReadyReplicas: 0}}
	snap.Claims = []*model.SandboxClaim{
		{ObjectMeta: *model.ObjectMeta{Name: "claim-b", Namespace: "team-rl"}.WithCreated(created.Time), WarmPool: "agents-warm", Sandbox: "sbx-b", PodIPs: []string{"10.0.0.7"}},
		{ObjectMeta: *model.ObjectMeta{Name: "claim-waiting", Namespace: "team-rl"}.WithCreated(created.Time), WarmPool: "agents-warm"},
	}
	findings := []model.Finding{
		model.NewFinding("kind-rl", sbs[1], taken),
		model.NewFinding("kind-rl", sbs[0], model.Notice{Code: model.CodeRestartOOM, Severity: model.SeverityWarning, Message: "OOM", Pod: "sbx-b-0"}),
	}
	return snap, findings
}

func print(t *testing.T, q output.Query, format string, opts output.PrintOptions) string {
	t.Helper()
	snap, findings := fixture()
	out, err := output.ParseOutput(format)
	if err != nil {
		t.Fatal(err)
	}
	opts.Now = now
	var b bytes.Buffer
	if err := output.Print(&b, output.Select(snap, findings, q), out, opts); err != nil {
		t.Fatalf("-o %s: %v", format, err)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s changed (go test ./listing -update if meant):\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// The tables have the terminal UI's columns, NAMESPACE with -A, the wide
// columns only with -o wide, and no control character from the fleet.
func TestTables(t *testing.T) {
	for _, tc := range []struct {
		file, output string
		q            output.Query
		opts         output.PrintOptions
	}{
		{"sandboxes.txt", "table", output.Query{Resource: output.Sandboxes}, output.PrintOptions{}},
		{"sandboxes-wide-all.txt", "wide", output.Query{Resource: output.Sandboxes}, output.PrintOptions{AllNamespaces: true}},
		{"pods.txt", "table", output.Query{Resource: output.Pods}, output.PrintOptions{}},
		{"pools-noheaders.txt", "table", output.Query{Resource: output.Pools}, output.PrintOptions{NoHeaders: true}},
		{"findings.txt", "table", output.Query{Resource: output.Findings}, output.PrintOptions{AllNamespaces: true}},
		{"claims-wide.txt", "wide", output.Query{Resource: output.Claims}, output.PrintOptions{}},
	} {
		got := print(t, tc.q, tc.output, tc.opts)
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("%s: a control character reached the table:\n%q", tc.file, got)
		}
		golden(t, tc.file, got)
	}
}

// The JSON shape is a contract: apiVersion sandscope.io/v1, kind List,
// items with apiVersion, kind and metadata; findings in sweep's fields.
func TestJSONShape(t *testing.T) {
	for _, r := range []output.Resource{output.Sandboxes, output.Pods, output.Pools, output.Claims, output.Findings} {
		golden(t, string(r)+".json", print(t, output.Query{Resource: r}, "json", output.PrintOptions{}))
	}
	var list struct {
		APIVersion, Kind string
		Items            []map[string]any
	}
	if err := json.Unmarshal([]byte(print(t, output.Query{Resource: output.Findings}, "json", output.PrintOptions{})), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != output.APIVersion || list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("list = %s %s with %d items", list.APIVersion, list.Kind, len(list.Items))
	}
	for _, key := range []string{"apiVersion", "kind", "code", "severity", "context", "namespace", "sandbox", "pod", "message", "evidence"} {
		if _, ok := list.Items[0][key]; !ok {
			t.Errorf("finding has no %q: %v", key, list.Items[0])
		}
	}
}

// One name asked for prints the object itself, as kubectl does; yaml is
// the same document.
func TestSingleObjectYAML(t *testing.T) {
	got := print(t, output.Query{Resource: output.Sandboxes, Names: []string{"sbx-a"}}, "yaml", output.PrintOptions{Single: true})
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(got), &obj); err != nil {
		t.Fatal(err)
	}
	if obj["kind"] != "Sandbox" || obj["identity"] != "IP_TAKEN" || obj["engine"] != "bsbx" {
		t.Errorf("single object = %v", obj)
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("yaml carries a raw control character:\n%q", got)
	}
}

// A termination reason holding DEL, C1 controls (an 8-bit CSI, NEL) and a
// bidi override denies no one the list: json keeps it whole as escapes,
// yaml writes YAML escapes (bidi, which the emitter writes raw, as U+FFFD),
// and neither carries anything a terminal obeys. Before, yaml failed
// ("control characters are not allowed") and json carried them raw.
func TestHostileReasonInJSONAndYAML(t *testing.T) {
	reason := "Error\x7f\u009b2J\u0085\u202etxt.exe"
	snap, findings := fixtureWithReason(reason)
	items := output.Select(snap, findings, output.Query{Resource: output.Pods})
	for _, format := range []string{"json", "yaml"} {
		out, err := output.ParseOutput(format)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := output.Print(&b, items, out, output.PrintOptions{Now: now}); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		got := b.String()
		for i, r := range got {
			if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r) {
				t.Errorf("-o %s holds %U at %d", format, r, i)
			}
		}
		for _, pod := range []string{"sbx-a-0", "sbx-b-0", "plain-c"} {
			if !strings.Contains(got, pod) {
				t.Errorf("-o %s lacks %s:\n%s", format, pod, got)
			}
		}
		var list struct {
			Items []struct {
				MainContainer struct{ Reason string }
			}
		}
		switch format {
		case "json":
			err = json.Unmarshal(b.Bytes(), &list)
		case "yaml":
			err = yaml.Unmarshal(b.Bytes(), &list)
		}
		if err != nil {
			t.Fatalf("-o %s does not parse: %v\n%s", format, err, got)
		}
		want := reason
		if format == "yaml" {
			want = strings.ReplaceAll(reason, "\u202e", "\ufffd")
		}
		var reasons []string
		for _, p := range list.Items {
			if r := p.MainContainer.Reason; r != "" {
				reasons = append(reasons, r)
			}
		}
		if len(reasons) != 1 || reasons[0] != want {
			t.Errorf("-o %s: reasons read back %q, want [%q]", format, reasons, want)
		}
	}
}

// -o name names the Kubernetes objects, so kubectl takes them back.
func TestNames(t *testing.T) {
	got := print(t, output.Query{Resource: output.Sandboxes}, "name", output.PrintOptions{})
	want := "pod/plain-c\nbatchsandbox.sandbox.opensandbox.io/sbx-a\nsandbox.agents.x-k8s.io/sbx-b\n"
	if got != want {
		t.Errorf("-o name =\n%s\nwant\n%s", got, want)
	}
	if got := print(t, output.Query{Resource: output.Pools}, "name", output.PrintOptions{}); got != "pool.sandbox.opensandbox.io/warm\nsandboxwarmpool.extensions.agents.x-k8s.io/agents-warm\n" {
		t.Errorf("pools -o name = %q", got)
	}
	if got := print(t, output.Query{Resource: output.Claims}, "name", output.PrintOptions{}); got != "sandboxclaim.extensions.agents.x-k8s.io/claim-b\nsandboxclaim.extensions.agents.x-k8s.io/claim-waiting\n" {
		t.Errorf("claims -o name = %q", got)
	}
}

// JSONPath is client-go's, on the same objects; what it prints reaches
// the terminal, so control characters are shown, not obeyed.
func TestJSONPath(t *testing.T) {
	q := output.Query{Resource: output.Sandboxes, Selector: labels.SelectorFromSet(labels.Set{"team": "rl"})}
	got := print(t, q, `jsonpath={range .items[*]}{.metadata.name} {.identity}{"\n"}{end}`, output.PrintOptions{})
	if want := "sbx-a IP_TAKEN\nsbx-b OK\n"; got != want {
		t.Errorf("jsonpath with -l team=rl =\n%s\nwant\n%s", got, want)
	}
	got = print(t, output.Query{Resource: output.Findings}, "jsonpath={.items[0].message}", output.PrintOptions{})
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "held by Pod sbx-b-0") {
		t.Errorf("jsonpath message = %q", got)
	}
	file := filepath.Join(t.TempDir(), "tmpl")
	if err := os.WriteFile(file, []byte(`{.items[*].metadata.name}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := print(t, output.Query{Resource: output.Pools}, "jsonpath-file="+file, output.PrintOptions{}); got != "warm agents-warm" {
		t.Errorf("jsonpath-file = %q", got)
	}
}

// Names keep what they name and report what they do not; findings are
// selected by their sandbox's name and labels.
func TestSelect(t *testing.T) {
	snap, findings := fixture()
	it := output.Select(snap, findings, output.Query{Resource: output.Pods, Names: []string{"sbx-a-0", "nope"}})
	if it.Len() != 1 || it.Pods[0].Name != "sbx-a-0" || len(it.Missing) != 1 || it.Missing[0] != "nope" {
		t.Errorf("pods sbx-a-0 nope: %d items, missing %v", it.Len(), it.Missing)
	}
	sel := labels.SelectorFromSet(labels.Set{"team": "rl"})
	it = output.Select(snap, findings, output.Query{Resource: output.Findings, Selector: sel, Names: []string{"sbx-b"}})
	if it.Len() != 1 || it.Findings[0].Code != model.CodeRestartOOM {
		t.Errorf("findings of sbx-b with team=rl: %+v", it.Findings)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]output.Resource{"sb": output.Sandboxes, "Sandbox": output.Sandboxes, "po": output.Pods, "pool": output.Pools, "finding": output.Findings} {
		if got, err := output.ParseResource(in); err != nil || got != want {
			t.Errorf("ParseResource(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"csv", "jsonpath=", "jsonpath={.items[", "jsonpath-file=/nonexistent"} {
		if _, err := output.ParseOutput(bad); err == nil {
			t.Errorf("ParseOutput(%q) accepted", bad)
		}
	}
	if _, err := output.ParseResource("deployments"); err == nil {
		t.Error("ParseResource(deployments) accepted")
	}
}
