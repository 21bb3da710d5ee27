package fleet

import (
	"encoding/json"
	"math/rand"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	osv1 "github.com/sandscope/sandscope/api/opensandbox/v1alpha1"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/modeltest"
)

// ft0 is the moment a dead sandbox's IP went to a new Pod: sandbox A created.
var ft0 = modeltest.T0

const ns = modeltest.Namespace

type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time          { return c.now }
func (c *testClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

// newSyncedFleet returns a Fleet on a pinned clock whose source is synced.
func newSyncedFleet(t testing.TB) (*Fleet, *testClock) {
	t.Helper()
	c := &testClock{now: ft0}
	f := New(Options{Now: c.Now})
	f.SetStatus(model.SourceStatus{Synced: true})
	return f, c
}

// batchSandbox is a non-pooled BatchSandbox in phase Succeed recording the given endpoints.
func batchSandbox(name string, endpoints ...string) *model.BatchSandbox {
	b := &model.BatchSandbox{
		ObjectMeta: *model.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)}.WithCreated(ft0),
		Replicas:   1, Phase: model.PhaseSucceed, Endpoints: endpoints,
	}
	return b
}

func pooledSandbox(name string, created time.Time, pods []string, endpoints ...string) *model.BatchSandbox {
	b := batchSandbox(name, endpoints...)
	b.Replicas = int32(max(1, len(pods))) // the engine asks the pool for that many
	b.SetCreated(created)
	b.SetPoolRef("pool-a")
	alloc, _ := json.Marshal(map[string][]string{"pods": pods})
	b.ReadAnnotations(map[string]string{osv1.AnnotationAllocStatus: string(alloc)})
	return b
}

func bsKey(name string) string    { return model.SandboxKey(model.EngineBatchSandbox, ns, name) }
func agentKey(name string) string { return model.SandboxKey(model.EngineAgent, ns, name) }
func plainKey(name string) string { return model.SandboxKey(model.EnginePod, ns, name) }

// mustSandbox returns the sandbox from a fresh snapshot or fails.
func mustSandbox(t *testing.T, f *Fleet, key string) *model.Sandbox {
	t.Helper()
	sb := f.Snapshot().Sandbox(key)
	if sb == nil {
		var keys []string
		for _, s := range f.Snapshot().Sandboxes() {
			keys = append(keys, s.Key)
		}
		t.Fatalf("sandbox %s not in snapshot; have %v", key, keys)
	}
	return sb
}

func hasNotice(sb *model.Sandbox, code string) *model.Notice {
	for i := range sb.Notices {
		if sb.Notices[i].Code == code {
			return &sb.Notices[i]
		}
	}
	return nil
}

func noticeCodes(sb *model.Sandbox) []string {
	var out []string
	for _, n := range sb.Notices {
		out = append(out, n.Code)
	}
	return out
}

func newTestRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

// sandboxPod is the running Pod <sandbox>-0 that BatchSandbox sandbox owns, as
// the informer hands it to the Fleet.
func sandboxPod(sandbox, uid, ip string, opts ...modeltest.PodOption) *model.Pod {
	return model.SlimPod(modeltest.RunningPod(sandbox+"-0", uid, ip, append([]modeltest.PodOption{modeltest.OwnedBy(sandbox, 0)}, opts...)...))
}

// linkedSandbox records BatchSandbox name recording ip, then its Pod
// <name>-0 at ip as opts leave it, in the order the informers usually deliver them.
func linkedSandbox(f *Fleet, name, uid, ip string, opts ...modeltest.PodOption) *model.Pod {
	f.UpsertBatchSandbox(batchSandbox(name, ip))
	p := sandboxPod(name, uid, ip, opts...)
	f.UpsertPod(p)
	return p
}
