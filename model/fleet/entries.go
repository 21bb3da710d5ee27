package fleet

import (
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sandscope/sandscope/model"
)

// podEntry is the Fleet's record of one Pod.
type podEntry struct {
	key     string     // "ns/name"
	pod     *model.Pod // set when the entry is made, kept after a delete
	since   int64      // Unix ns when it was first seen holding ip() (read back with ipHistory.time)
	link    *sbEntry   // the sandbox naming it when that is the only one (then not in podLinks; see linksOf)
	linked  bool       // some sandbox's slot names it (mirrors linksOf)
	inOrder bool       // in podOrder or pendingPods
	pending bool       // in pendingPods
	removed bool
}

// The namespace and name are the Pod's own strings: an entry keeps no copy.
func (pe *podEntry) ns() string   { return pe.pod.Namespace }
func (pe *podEntry) name() string { return pe.pod.Name }

// ip is the live IP the entry is indexed under (the IP table), ""
// when none. It is a function of the Pod, which only UpsertPod replaces, and
// it re-indexes the entry as it does: so it is read from the Pod, not kept
// in the entry, which is allocated per Pod.
func (pe *podEntry) ip() string { return liveIP(pe.pod) }

// sbEntry is the Fleet's record of one sandbox: its source object and what
// was derived from it last.
//
// An entry is allocated per sandbox, so it keeps no more than it must: the
// agent Sandbox is kept in agentLink, which only agent entries have, and the
// recorded IPs an entry watches (the IP table) are read from its last row, whose
// slots relink indexed.
type sbEntry struct {
	key        string // "<engine>/<namespace>/<name>"; engine(), ns() and name() read it
	bs         *model.BatchSandbox
	*agentLink // agent Sandboxes only (nil for the other engines)
	bound      []boundUID
	sb         *model.Sandbox // the last row derived; its slots' RecordedIPs are the IPs it watches
	owned      *podEntry      // the Pod naming it as its owner when that is the only one (then not in bsOwned/agOwned; see ownedBy)
	due        int64          // Unix ns of the timer it is waiting for, 0 = none
	inOrder    bool           // in order or pendingSbs
	pending    bool           // in pendingSbs
	removed    bool
	queued     bool
	passes     uint8 // derivations in the current process call; 0 outside one
}

// The key holds the engine, namespace and name; an entry keeps no copies.
// None of the three can contain a slash.
func (e *sbEntry) engine() model.Engine {
	eng, _, _ := strings.Cut(e.key, "/")
	return model.Engine(eng)
}

func (e *sbEntry) ns() string {
	_, rest, _ := strings.Cut(e.key, "/")
	ns, _, _ := strings.Cut(rest, "/")
	return ns
}

func (e *sbEntry) name() string {
	_, rest, _ := strings.Cut(e.key, "/")
	_, name, _ := strings.Cut(rest, "/")
	return name
}

// maskedRow caches the masked form of a row (see maskedSandbox). Rows are
// masked only while the fleet is unknown, so the cache lives in a map of
// the Fleet's that exists only then, not in a field of every entry.
type maskedRow struct {
	of, row *model.Sandbox
}

// agentLink is what an agent Sandbox entry needs beyond the common fields.
// Its fields, ag included, are read only on agent entries.
type agentLink struct {
	ag       *model.AgentSandbox
	sel      labels.Selector // parsed status.selector (nil = none)
	selStr   string
	selErr   string
	selIndex string // the selEq key it is registered under, or "\x00other"
	lastPod  string // the Pod linked last (kept to say POD_GONE)
}

type boundUID struct {
	pod string
	uid types.UID
}

func (e *sbEntry) boundFor(pod string) types.UID {
	for _, b := range e.bound {
		if b.pod == pod {
			return b.uid
		}
	}
	return ""
}

func nn(ns, name string) string { return ns + "/" + name }

// sandboxAt is the entry of engine e's sandbox ns/name, or nil. It builds
// the key (model.SandboxKey) in a stack buffer: a map index by string(bytes)
// does not allocate, where a concatenated key string cost an allocation for
// every lookup, several for every Pod event of a loading fleet.
func (f *Fleet) sandboxAt(e model.Engine, ns, name string) *sbEntry {
	var buf [128]byte
	k := append(append(append(append(append(buf[:0], e...), '/'), ns...), '/'), name...)
	return f.sandboxes[string(k)]
}

// internPodKey returns "ns/name", reusing the Pod entry's string when the Pod is known.
func (f *Fleet) internPodKey(ns, name string) string {
	if pe := f.podAt(ns, name); pe != nil {
		return pe.key
	}
	return nn(ns, name)
}

// podAt is the entry of the Pod ns/name, or nil, looked up as sandboxAt
// looks up a sandbox: with its key built on the stack.
func (f *Fleet) podAt(ns, name string) *podEntry {
	var buf [128]byte
	k := append(append(append(buf[:0], ns...), '/'), name...)
	return f.pods[string(k)]
}
