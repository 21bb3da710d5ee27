package fleet

import (
	"sort"
	"sync"

	"github.com/sandscope/sandscope/internal/mem"
	"github.com/sandscope/sandscope/model"
)

// Snapshot is a consistent, immutable view of the fleet at one moment.
type Snapshot struct {
	Version uint64
	Status  model.SourceStatus
	Pools   []*model.Pool
	// The agent-sandbox extensions, sorted by namespace/name; nil until
	// synced. Read only.
	Claims    []*model.SandboxClaim
	WarmPools []*model.WarmPool
	Templates []*model.SandboxTemplate
	// Loading counts the sandboxes read so far while the source has not
	// synced (Status.Synced false); until then the Snapshot lists none.
	Loading int
	// ForeignBlocked says why other namespaces could not be searched for
	// the holders of recorded IPs ("" when they could, or need not be).
	ForeignBlocked string

	sbs  mem.SharedList[model.Sandbox] // sorted by Key
	pods mem.SharedList[model.Pod]     // every Pod behind a sandbox, sorted by namespace/name

	history  *ipHistory
	changes  changeLog
	podOnce  sync.Once
	podToSbx map[string]*model.Sandbox

	extOnce  sync.Once
	claimRow []model.ClaimRow
	poolRow  []model.WarmPoolRow
	replaced map[string][]model.MemberReplaced // per pool; shared with the Fleet, read only
}

// NewSnapshot is a Snapshot of plain lists, for code that assembles a fleet
// without a Fleet (tests, fixtures). sandboxes must be sorted by Key and
// pods by namespace/name; the Snapshot keeps them, so they must not change.
func NewSnapshot(version uint64, status model.SourceStatus, sandboxes []*model.Sandbox, pods []*model.Pod, pools []*model.Pool) *Snapshot {
	return &Snapshot{Version: version, Status: status, sbs: mem.PlainList(sandboxes), pods: mem.PlainList(pods), Pools: pools}
}

// Sandboxes returns every sandbox, sorted by Key. Read only. The first call
// on a Snapshot from a Fleet builds the list (O(n)); a reader following
// changes should use ChangedSince, NumSandboxes and SandboxAt instead.
func (s *Snapshot) Sandboxes() []*model.Sandbox { return s.sbs.All() }

// NumSandboxes is len(Sandboxes()) without building the list.
func (s *Snapshot) NumSandboxes() int { return s.sbs.Len() }

// SandboxAt is Sandboxes()[i] without building the list.
func (s *Snapshot) SandboxAt(i int) *model.Sandbox { return s.sbs.At(i) }

// SameSandboxes reports whether s and o hold the same sandbox list, as a Snapshot after a
// change of status alone shares its predecessor's.
func (s *Snapshot) SameSandboxes(o *Snapshot) bool { return o != nil && s.sbs.Same(&o.sbs) }

// Pods returns every Pod behind a sandbox, sorted by namespace/name. Read
// only; built on first use.
func (s *Snapshot) Pods() []*model.Pod { return s.pods.All() }

// NumPods is len(Pods()) without building the list.
func (s *Snapshot) NumPods() int { return s.pods.Len() }

// Sandbox finds a sandbox by key (binary search), nil when absent.
func (s *Snapshot) Sandbox(key string) *model.Sandbox {
	n := s.NumSandboxes()
	i := sort.Search(n, func(i int) bool { return s.SandboxAt(i).Key >= key })
	if i < n && s.SandboxAt(i).Key == key {
		return s.SandboxAt(i)
	}
	return nil
}

// IPHistory returns the Pods seen holding ip since the Fleet started, oldest
// first, as they were when the snapshot was taken.
func (s *Snapshot) IPHistory(ip string) []model.IPHolding {
	if s.history == nil {
		return nil
	}
	return s.history.at(ip, s.Version)
}

// SandboxOfPod returns the sandbox a Pod is linked to, nil when none. A Pod
// named by several sandboxes (a pooled Pod handed on) belongs to the one it
// serves, not to one that merely still lists it. The index is built on first use.
func (s *Snapshot) SandboxOfPod(namespace, name string) *model.Sandbox {
	s.podOnce.Do(func() {
		s.podToSbx = make(map[string]*model.Sandbox)
		for _, sb := range s.Sandboxes() {
			for i := range sb.Slots {
				sl := &sb.Slots[i]
				if sl.PodName == "" || sl.Pod == nil {
					continue
				}
				if sl.Holder != nil && sl.Holder.Pod == sl.PodName && sl.Holder.Sandbox != "" && sl.Holder.Sandbox != sb.Key {
					continue // the Pod serves another sandbox now
				}
				k := nn(sb.Namespace(), sl.PodName)
				if _, taken := s.podToSbx[k]; !taken {
					s.podToSbx[k] = sb
				}
			}
		}
	})
	return s.podToSbx[nn(namespace, name)]
}

// Named returns the sandboxes ref designates in namespace ("" any): the one
// whose key is ref, or those called ref; when none is, those whose id ref
// starts (the short id the TUI shows). The callers that act on one sandbox
// (exec, explain) take a single answer and refuse several, so that a name
// means the same sandbox to each of them.
func (s *Snapshot) Named(namespace, ref string) []*model.Sandbox {
	var exact, byID []*model.Sandbox
	for _, sb := range s.Sandboxes() {
		switch {
		case sb == nil:
		case sb.Key == ref:
			exact = append(exact, sb)
		case namespace != "" && sb.Namespace() != namespace:
		case sb.Name() == ref:
			exact = append(exact, sb)
		case model.IsIDPrefix(sb.Name(), ref):
			byID = append(byID, sb)
		}
	}
	if len(exact) == 0 {
		return byID
	}
	return exact
}
