package execute

import (
	"testing"

	"github.com/sandscope/sandscope/actions/refusal"
	"github.com/sandscope/sandscope/model"
	"github.com/sandscope/sandscope/model/fleet"
)

// Before the fleet's first sync nothing resolves, and the refusal says why
// and that a retry may succeed; once synced, a missing sandbox is NOT_FOUND.
func TestResolveBeforeFirstSync(t *testing.T) {
	loading := fleet.NewSnapshot(1, model.SourceStatus{}, nil, nil, nil)
	loading.Loading = 7
	_, err := Resolve(loading, "ns", "web")
	e := asRefusal(err)
	if e == nil || e.Code != CodeNotSynced || !e.Retryable || e.Executed != refusal.ExecutedNo {
		t.Fatalf("before the first sync: %v", err)
	}
	justStarted := fleet.NewSnapshot(1, model.SourceStatus{}, nil, nil, nil) // nothing read yet
	if e := asRefusal(func() error { _, err := Resolve(justStarted, "ns", "web"); return err }()); e == nil || e.Code != CodeNotSynced {
		t.Fatalf("before the first sync, nothing read yet: %v", e)
	}
	synced := fleet.NewSnapshot(2, model.SourceStatus{Synced: true}, nil, nil, nil)
	if e := asRefusal(func() error { _, err := Resolve(synced, "ns", "web"); return err }()); e == nil || e.Code != refusal.CodeNotFound {
		t.Fatalf("synced, no such sandbox: %v", e)
	}
}
