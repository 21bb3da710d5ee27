package fleet

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// goldenRows derives rows that set every field of a Sandbox's JSON form:
// a pooled BatchSandbox being deleted on a finalizer, with an expiry, a
// restarted Pod stuck Terminating in one slot and an address held by
// another Pod in the other; an agent Sandbox; a plain-Pod sandbox whose Pod
// is deleting (its row says nothing of an object deletion); a row built by
// hand with no source at all; and the same fleet masked while disconnected.
func goldenRows(t *testing.T) []*model.Sandbox {
	t.Helper()
	const ipA, ipB, ipC = "10.0.3.7", "10.0.3.8", "10.0.3.9"
	f, c := newSyncedFleet(t)

	b := pooledSandbox("a", ft0, []string{"a-pod0", "a-pod1"}, ipA, ipB)
	b.Labels = model.LabelsFrom(map[string]string{"team": "ml", "tier": "gpu"})
	del := metav1.NewTime(ft0.Add(time.Minute + 5*time.Millisecond))
	b.DeletionTimestamp = &del
	// The "&" pins HTML escaping: json.Marshal writes it as \u0026, an
	// encoder told SetEscapeHTML(false) as is.
	b.SetFinalizers([]string{"pool.sandbox.opensandbox.io/pool-allocation", "example.com/hold&keep"})
	expire := ft0.Add(30 * time.Minute)
	b.ExpireTime = &expire
	f.UpsertPod(model.SlimPod(modeltest.RunningPod("a-pod0", "u-pod0", ipA, modeltest.PooledIn("pool-a"),
		modeltest.Restarted(2, "OOMKilled", 137), modeltest.DeletingAt(ft0.Add(time.Minute), 30))))
	f.UpsertBatchSandbox(b)

	p2 := modeltest.RunningPod("p2", "u-p2", ipB, modeltest.DeletingAt(ft0.Add(2*time.Minute), 10))
	p2.Finalizers = []string{"example.com/p2"}
	f.UpsertPod(model.SlimPod(p2))

	ag := modeltest.RunningPod("ag", "u-ag-pod", ipC)
	ag.Labels = map[string]string{"app": "agent"}
	f.UpsertPod(model.SlimPod(ag))
	agMeta := model.SlimPod(modeltest.RunningPod("ag", "u-ag", "")).ObjectMeta
	agMeta.Labels = model.LabelsFrom(map[string]string{"owner": "bob"})
	// Sub-second times pin the time.Time encoding (metav1.Time's drops them).
	agMeta.SetCreated(ft0.Add(123456789 * time.Nanosecond))
	f.UpsertAgentSandbox(&model.AgentSandbox{ObjectMeta: agMeta, Selector: "app=agent",
		PodIPs: []string{ipC}, Conditions: []model.Condition{{Type: "Ready", Status: "True"}}})

	c.Advance(10 * time.Minute)
	f.Tick()
	rows := append([]*model.Sandbox(nil), f.Snapshot().Sandboxes()...)
	rows = append(rows, &model.Sandbox{Key: "bsbx/ns/bare"})
	lost := ft0
	f.SetStatus(model.SourceStatus{Synced: true, DisconnectedSince: &lost})
	return append(rows, f.Snapshot().Sandboxes()...)
}

// TestSandboxJSONUnchanged pins the JSON form of rows (sweep and CLI output)
// byte for byte. The golden was written by the code before rows shared their
// source's ObjectMeta, when they copied its fields.
func TestSandboxJSONUnchanged(t *testing.T) {
	got, err := json.MarshalIndent(goldenRows(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "sandbox_rows.golden.json")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("JSON of rows differs from %s; got:\n%s", path, got)
	}

	// An encoder that does not escape HTML must not get escaped rows.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(goldenRows(t)); err != nil {
		t.Fatal(err)
	}
	if want := bytes.ReplaceAll(want, []byte(`\u0026`), []byte("&")); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("JSON of rows without HTML escaping differs; got:\n%s", buf.Bytes())
	}
}
