package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/sandscope/sandscope/model"
)

// A context slow before discovery answered has received the Pods' list
// whole, perhaps, and nothing of the engines: it must not read as "1 of 1
// objects", which says everything was seen.
func TestSlowBeforeDiscoverySaysTheEnginesWereNotAskedFor(t *testing.T) {
	one := int64(1)
	pods := []model.ListProgress{{Resource: "pods", Received: 1, Total: &one, Done: true}}
	for _, tc := range []struct {
		undiscovered bool
		wantTotal    int64
		want, not    string
	}{
		{false, 1, "1 of 1 objects so far", "discovery"},
		{true, 0, "1 objects so far; discovery had not answered, so no engine's sandboxes were asked for", " of 1"},
	} {
		e := &SlowError{Context: "c", Progress: pods, Silent: true, Idle: 4 * time.Second, Undiscovered: tc.undiscovered}
		msg := e.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("undiscovered %v: %q, want it to say %q and not %q", tc.undiscovered, msg, tc.want, tc.not)
		}
		r := slowContext("c", "https://example", e).result
		if r.Syncing == nil || r.Syncing.Total != tc.wantTotal || !r.Partial || r.Unseen[0] != msg {
			t.Errorf("undiscovered %v: result %+v (syncing %+v), want partial, total %d, unseen %q", tc.undiscovered, r, r.Syncing, tc.wantTotal, msg)
		}
	}
}
